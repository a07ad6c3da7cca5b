/**
 * JPEG ghosts: H. Farid, "Exposing Digital Forgeries from JPEG Ghosts", IEEE TIFS 4(1), 2009,
 * §2 (eq. 3–4). Re-compress at a range of qualities; the difference to the original falls to a
 * minimum at the quality a region was last saved at. A region pasted from an image saved at a
 * lower quality shows its own minimum (a "ghost") where the rest of the image does not.
 * Differences are averaged over 16x16 windows and normalised per window across qualities
 * (eq. 4), as in the paper; this version works on luminance.
 *
 * The re-compression is done in the DCT domain: each 8x8 block's coefficients (shared with
 * double-JPEG analysis) are requantised with libjpeg's table for the quality, and the squared
 * requantisation error equals the block's squared pixel difference (orthonormal DCT). Only
 * the decoder's rounding to integers is missing, a near-constant offset across qualities that
 * the per-window normalisation removes; a re-encode per quality cost ten times more.
 */
import { quantile, robustOutlierMap, smoothMap } from '../forensic-map.js';
import { ijgTable } from '../jpeg-structure.js';
import type { BlockDct } from './block-dct.js';
import { skippedMethod, type MethodResult } from './method.js';

/** Five qualities: the requantisation loop below is unrolled for exactly these. */
export const GHOST_QUALITIES = [55, 65, 75, 85, 95] as const;
export const GHOST_LABEL = 'JPEG ghosts (Farid 2009)';
const WINDOW_BLOCKS = 2; // 16x16-pixel windows
/** Windows whose difference hardly varies with quality are flat: their minimum means nothing. */
const MIN_RANGE = 2;

/**
 * Squared requantisation error per 16x16 window at each quality, up to a per-window constant
 * (see the dead zone below). Its own function so V8 optimises this loop on its own.
 */
function requantisationErrors(dct: BlockDct, cols: number, differences: Float64Array[], signal: AbortSignal): void {
  const { coefficients } = dct;
  // Per frequency k: the five quantiser steps at [5k .. 5k + 4], their reciprocals, and the
  // dead zone under which a coefficient is quantised to zero at every quality.
  const steps = new Float64Array(64 * 5), inverse = new Float64Array(64 * 5);
  const deadZone = new Float64Array(64).fill(Infinity);
  for (const [qi, quality] of GHOST_QUALITIES.entries()) {
    for (const [k, step] of ijgTable(quality).entries()) {
      steps[k * 5 + qi] = step;
      inverse[k * 5 + qi] = 1 / step;
      deadZone[k] = Math.min(deadZone[k]!, step / 2);
    }
  }
  const [d55, d65, d75, d85, d95] = differences as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
  for (let by = 0; by < dct.rows; by++) {
    if (signal.aborted) throw new Error('analysis aborted');
    const row = (by >> 1) * cols; // WINDOW_BLOCKS = 2
    for (let bx = 0; bx < dct.cols; bx++) {
      const base = (by * dct.cols + bx) * 64;
      // One accumulator per quality, written out: they stay in registers (twice as fast as a
      // loop over qualities). c − step·round(c/step), with floor(x + 0.5) for Math.round,
      // which is several times slower in V8.
      let s55 = 0, s65 = 0, s75 = 0, s85 = 0, s95 = 0;
      for (let k = 0; k < 64; k++) {
        const c = coefficients[base + k]!;
        // Quantised to zero at every quality, its error is c² at each: a per-window constant
        // that the normalisation below removes, so it is skipped (most high frequencies).
        if (Math.abs(c) < deadZone[k]!) continue;
        const j = k * 5;
        const e55 = c - steps[j]! * Math.floor(c * inverse[j]! + 0.5);
        const e65 = c - steps[j + 1]! * Math.floor(c * inverse[j + 1]! + 0.5);
        const e75 = c - steps[j + 2]! * Math.floor(c * inverse[j + 2]! + 0.5);
        const e85 = c - steps[j + 3]! * Math.floor(c * inverse[j + 3]! + 0.5);
        const e95 = c - steps[j + 4]! * Math.floor(c * inverse[j + 4]! + 0.5);
        s55 += e55 * e55; s65 += e65 * e65; s75 += e75 * e75; s85 += e85 * e85; s95 += e95 * e95;
      }
      const window = row + (bx >> 1);
      d55[window]! += s55; d65[window]! += s65; d75[window]! += s75; d85[window]! += s85; d95[window]! += s95;
    }
  }
}

export function jpegGhosts(dct: BlockDct, signal: AbortSignal): MethodResult {
  const cols = Math.ceil(dct.cols / WINDOW_BLOCKS), rows = Math.ceil(dct.rows / WINDOW_BLOCKS);
  const differences = GHOST_QUALITIES.map(() => new Float64Array(cols * rows));
  const counts = new Uint32Array(cols * rows);
  for (let by = 0; by < dct.rows; by++) for (let bx = 0; bx < dct.cols; bx++) counts[Math.floor(by / WINDOW_BLOCKS) * cols + Math.floor(bx / WINDOW_BLOCKS)]! += 64;
  requantisationErrors(dct, cols, differences, signal);
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
  // Every window flat: no requantisation curve to compare.
  if (!valid.includes(1)) return skippedMethod('jpeg-ghost', GHOST_LABEL, 'every window is flat: requantising flat areas changes nothing at any quality');
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
    label: GHOST_LABEL,
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
