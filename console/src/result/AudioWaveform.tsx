import { useEffect, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import WaveSurfer from 'wavesurfer.js';
import type { Artifact } from '@mediaproof/sdk';
import { consoleApi } from '../api';
import { ErrorNote } from '../components';
import { SegmentTimeline, type Segment } from './SegmentTimeline';

interface Peaks {
  durationSeconds: number;
  peaks: number[];
}

/** A player with its waveform; the peaks come from the server, so the browser decodes nothing up front. */
export function AudioWaveform({ jobId, file, segments }: { jobId: string; file: Artifact; segments: Segment[] }) {
  const container = useRef<HTMLDivElement>(null);
  const [player, setPlayer] = useState<WaveSurfer | null>(null);
  const [playing, setPlaying] = useState(false);
  const peaks = useQuery({
    queryKey: ['peaks', jobId, file.id],
    queryFn: () => consoleApi<Peaks>(`/jobs/${encodeURIComponent(jobId)}/peaks?file=${encodeURIComponent(file.id)}&bins=1000`),
    staleTime: Infinity,
  });

  useEffect(() => {
    if (!container.current || !peaks.data) return;
    const styles = getComputedStyle(document.documentElement);
    const surfer = WaveSurfer.create({
      container: container.current,
      url: file.downloadUrl,
      peaks: [peaks.data.peaks],
      duration: peaks.data.durationSeconds,
      height: 72,
      waveColor: styles.getPropertyValue('--wave').trim() || '#7c8db5',
      progressColor: styles.getPropertyValue('--accent').trim() || '#3557d6',
      // Not normalised: a quiet background track should look quiet next to the input.
      normalize: false,
    });
    surfer.on('play', () => setPlaying(true));
    surfer.on('pause', () => setPlaying(false));
    setPlayer(surfer);
    return () => surfer.destroy();
  }, [peaks.data, file.downloadUrl]);

  const label = file.kind === 'track' ? `Track ${file.id}` : `Input ${file.slotName ?? file.id}`;
  return (
    <div className="audio-file" aria-label={label}>
      <div className="audio-head">
        <button type="button" onClick={() => void player?.playPause()} disabled={!player} aria-label={`${playing ? 'Pause' : 'Play'} ${label}`}>
          {playing ? '❚❚' : '▶'}
        </button>
        <strong>{label}</strong>
        {peaks.data && <span className="muted">{peaks.data.durationSeconds.toFixed(1)} s</span>}
      </div>
      <ErrorNote error={peaks.error} />
      <div ref={container} className="waveform" data-testid="waveform" />
      {segments.length > 0 && peaks.data && <SegmentTimeline segments={segments} durationSeconds={peaks.data.durationSeconds} />}
    </div>
  );
}
