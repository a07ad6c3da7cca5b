import type { Artifact } from '@mediaproof/sdk';
import { ScoreBar, VerdictBadge } from '../components';

export interface Participant {
  id: number | string;
  verdict?: string;
  score?: number;
  fake?: boolean;
  artifact?: string;
  heatmap?: string;
  firstSeenSeconds?: number;
  track?: { timeSeconds: number; score: number | null }[];
  decisiveFrames?: { timeSeconds: number; score: number; by: string }[];
  [field: string]: unknown;
}

const EVIDENCE_NAMES: Record<string, string> = { 'face-forgery-model': 'blending model', 'identity-consistency': 'identity break' };

/** The frames that drove the person's verdict, as "2.5 s (blending model 0.92)". */
function DecisiveFrames({ frames }: { frames: NonNullable<Participant['decisiveFrames']> }) {
  if (!frames.length) return null;
  const text = frames.map((f) => `${f.timeSeconds.toFixed(1)} s (${EVIDENCE_NAMES[f.by] ?? f.by} ${f.score.toFixed(2)})`).join(', ');
  return <p className="muted">Most suspicious frames: {text}</p>;
}

/** The per-frame score of one participant over time (SVG, 0 at the bottom, 1 at the top). */
function ScoreTrack({ track }: { track: NonNullable<Participant['track']> }) {
  const scored = track.filter((point) => point.score !== null);
  if (scored.length < 2) return null;
  const end = Math.max(...track.map((p) => p.timeSeconds), 1);
  const points = scored.map((p) => `${(p.timeSeconds / end) * 600},${60 - (p.score as number) * 60}`).join(' ');
  return (
    <svg className="track" viewBox="0 0 600 60" preserveAspectRatio="none" role="img" aria-label={`Per-frame score over ${end.toFixed(1)} s`}>
      <line x1="0" y1="30" x2="600" y2="30" className="midline" />
      <polyline points={points} />
    </svg>
  );
}

/** Faceswap and eKYC participants: verdict per person, face crop, heatmap video and score over time. */
export function Participants({ participants, artifacts }: { participants: Participant[]; artifacts: Artifact[] }) {
  const find = (id?: string) => (id ? artifacts.find((a) => a.id === id) : undefined);
  return (
    <section className="card" aria-labelledby="participants-title">
      <h2 id="participants-title">Participants</h2>
      <div className="participants">
        {participants.map((participant) => {
          const crop = find(participant.artifact);
          const video = find(participant.heatmap);
          return (
            <div key={String(participant.id)} className="participant">
              <h3>
                Person {String(participant.id)} {participant.verdict && <VerdictBadge verdict={participant.verdict} />}
              </h3>
              <p>Score <ScoreBar value={participant.score} /></p>
              {participant.firstSeenSeconds !== undefined && <p className="muted">first seen at {participant.firstSeenSeconds.toFixed(1)} s</p>}
              <div className="participant-media">
                {crop && <img src={crop.downloadUrl} alt={`Face of person ${String(participant.id)}`} />}
                {video && <video src={video.downloadUrl} controls muted preload="metadata" aria-label={`Heatmap video of person ${String(participant.id)}`} />}
              </div>
              {participant.track && <ScoreTrack track={participant.track} />}
              {participant.decisiveFrames && <DecisiveFrames frames={participant.decisiveFrames} />}
            </div>
          );
        })}
      </div>
    </section>
  );
}
