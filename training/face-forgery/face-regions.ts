/**
 * Face regions and clip statistics shared by the model-free face cue probes (within-face-cues.ts,
 * stop 78; temporal-cues.ts, stop 79): regions are convex hulls of MediaPipe face-mesh vertices
 * (the 468 points `analyseFaces` returns), scaled about their centroid and clipped to the frame.
 * Evaluation only: never trains or tunes the shipped detector.
 */
import { readFile } from 'node:fs/promises';

export type Point = [number, number];

export const FACE_OVAL = [10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148, 176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109];
export const OUTER_LIPS = [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 409, 270, 269, 267, 0, 37, 39, 40, 185];
export const EYES_AND_BROWS = [
  33, 7, 163, 144, 145, 153, 154, 155, 133, 173, 157, 158, 159, 160, 161, 246, 70, 63, 105, 66, 107, 55, 65, 52, 53, 46,
  263, 249, 390, 373, 374, 380, 381, 382, 362, 398, 384, 385, 386, 387, 388, 466, 300, 293, 334, 296, 336, 285, 295, 282, 283, 276,
];

export function scaled(points: Point[], factor: number): Point[] {
  const cx = points.reduce((s, p) => s + p[0], 0) / points.length, cy = points.reduce((s, p) => s + p[1], 0) / points.length;
  return points.map(([x, y]) => [cx + (x - cx) * factor, cy + (y - cy) * factor]);
}

/** Convex hull (Andrew's monotone chain), counter-clockwise in image coordinates. */
function hull(points: Point[]): Point[] {
  const sorted = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o: Point, a: Point, b: Point) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const half = (list: Point[]) => {
    const out: Point[] = [];
    for (const p of list) {
      while (out.length >= 2 && cross(out[out.length - 2]!, out[out.length - 1]!, p) <= 0) out.pop();
      out.push(p);
    }
    return out.slice(0, -1);
  };
  return [...half(sorted), ...half([...sorted].reverse())];
}

/** Pixels inside a convex polygon, as a mask over the frame. */
export function polygonMask(polygon: Point[], width: number, height: number): Uint8Array {
  const mask = new Uint8Array(width * height);
  const convex = hull(polygon);
  const inside = (x: number, y: number) => convex.every((a, i) => {
    const b = convex[(i + 1) % convex.length]!;
    return (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]) >= 0;
  });
  const x0 = Math.max(1, Math.floor(Math.min(...convex.map((p) => p[0])))), x1 = Math.min(width - 2, Math.ceil(Math.max(...convex.map((p) => p[0]))));
  const y0 = Math.max(1, Math.floor(Math.min(...convex.map((p) => p[1])))), y1 = Math.min(height - 2, Math.ceil(Math.max(...convex.map((p) => p[1]))));
  for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) if (inside(x + 0.5, y + 0.5)) mask[y * width + x] = 1;
  return mask;
}

/** Mean squared 3x3 (4-neighbour) Laplacian over the mask's pixels, NaN for an empty mask. */
export function laplacianEnergy(plane: Float32Array, width: number, mask: Uint8Array): number {
  let sum = 0, count = 0;
  for (let p = 0; p < mask.length; p++) {
    if (!mask[p]) continue;
    const l = 4 * plane[p]! - plane[p - 1]! - plane[p + 1]! - plane[p - width]! - plane[p + width]!;
    sum += l * l;
    count++;
  }
  return count ? sum / count : Number.NaN;
}

export function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!sorted.length) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Mann-Whitney AUC of positives over negatives (ties count half), NaN when a class is empty. */
export function auc(positives: number[], negatives: number[]): number {
  if (!positives.length || !negatives.length) return Number.NaN;
  let wins = 0;
  for (const p of positives) for (const n of negatives) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / positives.length / negatives.length;
}

export interface ClipCues { file: string; label: number; method: string | null; pairGroup: string | null; cues: Record<string, number> }

/**
 * `summary <set name>=<cues json>...`: per cue, AUC over the sets together and each, lip-syncs and the other
 * manipulations apart, and the share of fake-real pairs of one person ranked the right way.
 */
export async function summariseCues(args: string[], cueNames: string[]) {
  const sets = await Promise.all(args.map(async (arg) => {
    const [name, path] = arg.split('=') as [string, string];
    return { name, clips: (JSON.parse(await readFile(path, 'utf8')) as ClipCues[]).filter((clip) => cueNames.every((cue) => Number.isFinite(clip.cues[cue]))) };
  }));
  const union = sets.flatMap((set) => set.clips);
  const lipSync = (clip: ClipCues) => clip.label === 1 && /wav2lip|hyperlips/i.test(clip.method ?? '');
  const round3 = (v: number) => Math.round(v * 1000) / 1000;
  const figures = Object.fromEntries(cueNames.map((cue) => {
    const of = (clips: ClipCues[]) => round3(auc(clips.filter((c) => c.label === 1).map((c) => c.cues[cue]!), clips.filter((c) => c.label === 0).map((c) => c.cues[cue]!)));
    const reals = union.filter((c) => c.label === 0);
    let pairs = 0, right = 0;
    for (const fake of union.filter((c) => c.label === 1 && c.pairGroup)) {
      for (const real of reals.filter((c) => c.pairGroup === fake.pairGroup)) {
        pairs++;
        right += fake.cues[cue]! > real.cues[cue]! ? 1 : fake.cues[cue]! === real.cues[cue]! ? 0.5 : 0;
      }
    }
    return [cue, {
      union: of(union),
      ...Object.fromEntries(sets.map((set) => [set.name, of(set.clips)])),
      lipSyncs: of([...union.filter(lipSync), ...reals]),
      swapsAndReenactments: of(union.filter((c) => !lipSync(c))),
      withinPairGroups: { pairs, share: pairs ? round3(right / pairs) : null },
    }];
  }));
  const counts = { clips: union.length, fakes: union.filter((c) => c.label === 1).length, lipSyncs: union.filter(lipSync).length, perSet: Object.fromEntries(sets.map((set) => [set.name, set.clips.length])) };
  console.log(JSON.stringify({ counts, figures }, null, 1));
}
