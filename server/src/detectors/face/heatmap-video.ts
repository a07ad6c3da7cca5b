/**
 * A participant's heatmap video: the original frames with the person's face region filled in
 * a colour that follows the per-frame manipulation score (green 0, yellow 0.5, red 1), so a
 * reviewer sees when and where a face was judged swapped. Rendered by ffmpeg's drawbox over
 * the decoded video (a child process, streamed: frames are never all in memory), scaled to at
 * most 480 lines and 10 fps, H.264 in MP4 with the index in front so browsers can seek.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg } from '../media/ffmpeg.js';

export interface ScoredBox {
  timeSeconds: number;
  /** [x, y, width, height] in the upright video's pixels. */
  box: [number, number, number, number];
  /** 0 = genuine … 1 = manipulated; null draws the box outline only (no score that frame). */
  score: number | null;
}

const MAX_LINES = 480;
const FPS = 10;

/** Green through yellow to red, as ffmpeg's 0xRRGGBB. */
export function scoreColour(score: number): string {
  const s = Math.min(1, Math.max(0, score));
  const red = s < 0.5 ? Math.round(510 * s) : 255;
  const green = s < 0.5 ? 255 : Math.round(510 * (1 - s));
  return `0x${[red, green, 0].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

/** The drawbox filters: each observation lasts from halfway after the previous to halfway before the next. */
export function heatmapFilters(observations: ScoredBox[], scale: number, durationSeconds: number): string[] {
  const sorted = [...observations].sort((a, b) => a.timeSeconds - b.timeSeconds);
  return sorted.flatMap((o, i) => {
    const from = i === 0 ? 0 : (sorted[i - 1]!.timeSeconds + o.timeSeconds) / 2;
    const to = i === sorted.length - 1 ? durationSeconds + 1 : (o.timeSeconds + sorted[i + 1]!.timeSeconds) / 2;
    const [x, y, w, h] = o.box.map((v) => Math.max(0, Math.round(v * scale)));
    const enable = `enable='between(t,${from.toFixed(3)},${to.toFixed(3)})'`;
    const colour = o.score === null ? '0xffffff' : scoreColour(o.score);
    const outline = `drawbox=x=${x}:y=${y}:w=${w}:h=${h}:color=${colour}@0.9:t=3:${enable}`;
    return o.score === null ? [outline] : [`drawbox=x=${x}:y=${y}:w=${w}:h=${h}:color=${colour}@0.35:t=fill:${enable}`, outline];
  });
}

/** Renders the heatmap video of one participant and returns the MP4's bytes. */
export async function renderHeatmapVideo(
  path: string,
  video: { width: number; height: number; durationSeconds: number },
  observations: ScoredBox[],
  workDir: string,
  name: string,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const lines = Math.min(MAX_LINES, video.height);
  const outHeight = Math.max(2, Math.round(lines / 2) * 2);
  const outWidth = Math.max(2, Math.round((video.width * outHeight) / video.height / 2) * 2);
  const scale = outHeight / video.height;
  const filters = [`fps=${FPS}`, `scale=${outWidth}:${outHeight}`, ...heatmapFilters(observations, scale, video.durationSeconds)];
  const output = join(workDir, name);
  try {
    await runFfmpeg(
      ['-y', '-i', path, '-an', '-sn', '-vf', filters.join(','), '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '28', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', output],
      { signal },
    );
    return new Uint8Array(await readFile(output));
  } finally {
    await rm(output, { force: true });
  }
}
