/**
 * JPEG ghosts: H. Farid, "Exposing Digital Forgeries from JPEG Ghosts", IEEE TIFS 4(1), 2009,
 * §2 (eq. 3–4). Re-compress at a range of qualities; the difference to the original falls to a
 * minimum at the quality a region was last saved at. A region pasted from an image saved at a
 * lower quality shows its own minimum (a "ghost") where the rest of the image does not.
 * Differences are averaged over 16x16 windows and normalised per window across qualities
 * (eq. 4), as in the paper; this version works on luminance.
 */
import sharp from 'sharp';
import { quantile, robustOutlierMap, smoothMap } from '../forensic-map.js';
import type { MethodResult } from './method.js';

export const GHOST_QUALITIES = [55, 65, 75, 85, 95] as const;
const WINDOW = 16;
/** Windows whose difference hardly varies with quality are flat: their minimum means nothing. */
const MIN_RANGE = 2;

export async function jpegGhosts(luma: Uint8Array, width: number, height: number, signal: AbortSignal): Promise<MethodResult> {
  const cols = Math.ceil(width / WINDOW), rows = Math.ceil(height / WINDOW);
  const differences = GHOST_QUALITIES.map(() => new Float64Array(cols * rows));
  const counts = new Uint32Array(cols * rows);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) counts[Math.floor(y / WINDOW) * cols + Math.floor(x / WINDOW)]!++;
  for (const [qi, quality] of GHOST_QUALITIES.entries()) {
    if (signal.aborted) throw new Error('analysis aborted');
    const jpeg = await sharp(luma, { raw: { width, height, channels: 1 } }).jpeg({ quality, optimiseCoding: false }).toBuffer(); // Huffman optimisation changes no pixel
    const { data } = await sharp(jpeg).greyscale().raw().toBuffer({ resolveWithObject: true });
    const target = differences[qi]!;
    const stride = data.length / (width * height); // 1, or 3 if the decoder returned RGB
    for (let y = 0; y < height; y++) {
      const row = Math.floor(y / WINDOW) * cols;
      let p = y * width;
      for (let x0 = 0; x0 < width; x0 += WINDOW) {
        const end = Math.min(width, x0 + WINDOW);
        let sum = 0;
        for (let x = x0; x < end; x++, p++) {
          const d = luma[p]! - data[p * stride]!;
          sum += d * d;
        }
        target[row + x0 / WINDOW]! += sum;
      }
    }
  }
  // Per window: normalised curve over qualities; the depth of a dip below the global curve.
  const n = cols * rows;
  const normalised = GHOST_QUALITIES.map(() => new Float32Array(n));
  const valid = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let min = Infinity, max = -Infinity;
    for (let q = 0; q < GHOST_QUALITIES.length; q++) {
      const v = differences[q]![i]! / counts[i]!;
      differences[q]![i] = v;
      min = Math.min(min, v); max = Math.max(max, v);
    }
    if (max - min < MIN_RANGE) continue;
    valid[i] = 1;
    for (let q = 0; q < GHOST_QUALITIES.length; q++) normalised[q]![i] = (differences[q]![i]! - min) / (max - min);
  }
  // The image-wide typical curve; a ghost is a window far below it at some quality.
  const typical = normalised.map((values) => {
    const kept = values.filter((_, i) => valid[i]);
    return kept.length ? quantile(kept, 0.5) : 0;
  });
  const ghostDepth = new Float32Array(n).fill(Number.NaN);
  const ghostQuality = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    if (!valid[i]) continue;
    let best = 0, bestQ = 0;
    for (let q = 0; q < GHOST_QUALITIES.length - 1; q++) {
      const depth = typical[q]! - normalised[q]![i]!; // how much lower this window dips than usual
      if (depth > best) { best = depth; bestQ = GHOST_QUALITIES[q]!; }
    }
    ghostDepth[i] = best;
    ghostQuality[i] = bestQ;
  }
  const outliers = robustOutlierMap(ghostDepth, 3);
  const map = smoothMap({ values: outliers.values, cols, rows });
  const hot = [...map.values.keys()].filter((i) => map.values[i]! >= 0.5);
  const qualityVotes = new Map<number, number>();
  for (const i of hot) qualityVotes.set(ghostQuality[i]!, (qualityVotes.get(ghostQuality[i]!) ?? 0) + 1);
  const ghostAt = [...qualityVotes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  return {
    id: 'jpeg-ghost',
    label: 'JPEG ghosts (Farid 2009)',
    map,
    peak: quantile(map.values, 0.99),
    area: hot.length / n,
    evidence: {
      qualities: GHOST_QUALITIES,
      typicalCurve: typical.map((v) => Math.round(v * 1000) / 1000),
      ghostQuality: ghostAt,
      flatWindows: n - valid.reduce((a, b) => a + b, 0),
    },
  };
}
