/**
 * Regions smoother than the camera's own noise: B. Mahdian and S. Saic, "Using noise
 * inconsistencies for blind image forensics", Image and Vision Computing 27(10), 2009 (block
 * noise levels, regions whose level departs from the rest), with the level expected per block
 * from its brightness, as camera noise depends on the signal (A. Foi et al., "Practical
 * Poissonian-Gaussian noise modeling and fitting for single-image raw-data", IEEE TIP 17(10),
 * 2008), and from its texture.
 *
 * Every pixel of a camera photo carries sensor noise, in focus or not. An object removed by
 * inpainting (diffusion or fast marching fill) or painted over is smooth at full resolution:
 * its fine residual is a tenth of its surroundings' where the image around it is just as bright
 * and just as textured. Scaled down, the camera's noise averages away too, so this runs on the
 * stored pixels. Per 32-pixel block: the mean absolute residual after a 3x3 median (on every
 * second pixel and row), the mean gradient of the image averaged over 4x4 pixels, and the mean
 * brightness. A least-squares fit over the image's blocks predicts the log residual from log
 * gradient and log brightness; a block whose residual lies far below the prediction (robust z
 * over the image, averaged over 2x2 blocks) is unnaturally smooth. Saturated and flat blocks
 * carry no noise to compare and are left out.
 */
import { median, quantile, countAtLeast, regionsOf, type BlockMap } from '../forensic-map.js';
import { sigmoid } from '../../result.js';
import type { MethodResult } from './method.js';

export const MISSING_NOISE_LABEL = 'Missing camera noise (Mahdian & Saic 2009)';
const BLOCK = 32;
const STRIDE = 2;
const DOWN = 4; // gradient on the image averaged over 4x4 pixels: texture, not noise (BLOCK is a multiple)
/** Blocks whose mean gradient (grey levels per pixel, 4x4-averaged image) is under this are flat: no texture to compare. */
const MIN_GRADIENT = 0.125;
/** Added before the logarithm, so flat-ish blocks do not dominate the fit. */
const GRADIENT_OFFSET = 0.0625;
/** A block touching these luma levels is clipped: saturation removes noise there. */
const CLIPPED_HIGH = 252, CLIPPED_LOW = 3;
/** Fewer comparable blocks than this (0.2 MP of them) and no noise model can be fitted. */
const MIN_BLOCKS = 200;

/** The calibrated probability of a filled region at a smoothness `z` (a block's, or the image's peak). */
export const fillProbability = (z: number, rule: MissingNoiseRule) => sigmoid(rule.a * z + rule.b);

export interface MissingNoiseRule {
  /** Platt scaling of the peak smoothness (robust z below the fit): P = sigmoid(a·peak + b). */
  a: number;
  b: number;
  /** The images this runs on: at least this many pixels (scaled images have lost the camera's noise). */
  minPixels: number;
}

const med3 = (a: number, b: number, c: number) => Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));

/**
 * Per block: mean |pixel − 3x3 median| over interior pixels, mean luma, and whether it is clipped.
 * The 3x3 median as the median of the columns' sorted thirds: the largest low, the median middle
 * and the smallest high (A. W. Paeth, "Median finding on a 3x3 grid", Graphics Gems, 1990);
 * each column is sorted once per row and shared by the three pixels beside it.
 */
function residualBlocks(luma: Float32Array, width: number, height: number, cols: number, rows: number) {
  const residual = new Float64Array(cols * rows), brightness = new Float64Array(cols * rows), count = new Float64Array(cols * rows);
  const clipped = new Uint8Array(cols * rows);
  const low = new Float32Array(width), middle = new Float32Array(width), high = new Float32Array(width);
  // Every second pixel of every second row: 256 per block estimate its mean as well, at a quarter of the cost.
  for (let y = 1; y < height - 1; y += STRIDE) {
    for (let x = 0; x < width; x++) {
      const a = luma[(y - 1) * width + x]!, b = luma[y * width + x]!, c = luma[(y + 1) * width + x]!;
      const lo = Math.min(a, b), hi = Math.max(a, b);
      low[x] = Math.min(lo, c); high[x] = Math.max(hi, c); middle[x] = Math.max(lo, Math.min(hi, c));
    }
    const rowBase = Math.floor(y / BLOCK) * cols, row = y * width;
    // Block by block along the row, so the sums stay in locals.
    for (let c = 0; c < cols; c++) {
      let sumResidual = 0, sumBrightness = 0, clip = false;
      const x0 = c * BLOCK + 1, x1 = Math.min(width - 1, (c + 1) * BLOCK);
      for (let x = x0; x < x1; x += STRIDE) {
        const largestLow = Math.max(low[x - 1]!, low[x]!, low[x + 1]!);
        const smallestHigh = Math.min(high[x - 1]!, high[x]!, high[x + 1]!);
        const value = luma[row + x]!;
        sumResidual += Math.abs(value - med3(largestLow, med3(middle[x - 1]!, middle[x]!, middle[x + 1]!), smallestHigh));
        sumBrightness += value;
        if (value >= CLIPPED_HIGH || value <= CLIPPED_LOW) clip = true;
      }
      const b = rowBase + c;
      residual[b]! += sumResidual;
      brightness[b]! += sumBrightness;
      count[b]! += Math.max(0, Math.ceil((x1 - x0) / STRIDE));
      if (clip) clipped[b] = 1;
    }
  }
  for (let b = 0; b < residual.length; b++) if (count[b]! > 0) { residual[b]! /= count[b]!; brightness[b]! /= count[b]!; }
  return { residual, brightness, count, clipped };
}

/** Per block: the mean gradient magnitude of the image averaged over DOWN x DOWN pixels. */
function textureBlocks(luma: Float32Array, width: number, height: number, cols: number, rows: number): Float64Array {
  const w = Math.floor(width / DOWN), h = Math.floor(height / DOWN);
  const small = new Float32Array(w * h);
  for (let y = 0; y < h * DOWN; y++) {
    const row = y * width, target = Math.floor(y / DOWN) * w;
    for (let sx = 0; sx < w; sx++) {
      const p = row + sx * DOWN;
      small[target + sx]! += luma[p]! + luma[p + 1]! + luma[p + 2]! + luma[p + 3]!;
    }
  }
  for (let i = 0; i < small.length; i++) small[i]! /= DOWN * DOWN;
  const gradient = new Float64Array(cols * rows), count = new Float64Array(cols * rows);
  const cellsPerBlock = BLOCK / DOWN;
  for (let y = 1; y < h - 1; y++) {
    const rowBase = Math.floor(y / cellsPerBlock) * cols;
    for (let x = 1; x < w - 1; x++) {
      // Central differences across two cells of DOWN pixels: grey levels per pixel.
      const gx = (small[y * w + x + 1]! - small[y * w + x - 1]!) / (2 * DOWN), gy = (small[(y + 1) * w + x]! - small[(y - 1) * w + x]!) / (2 * DOWN);
      const b = rowBase + ((x / cellsPerBlock) | 0);
      gradient[b]! += Math.sqrt(gx * gx + gy * gy);
      count[b]!++;
    }
  }
  for (let b = 0; b < gradient.length; b++) if (count[b]! > 0) gradient[b]! /= count[b]!;
  return gradient;
}

/** Least squares y ≈ c0·x1 + c1·x2 + c2 over the kept blocks (normal equations, Gaussian elimination). */
function fitPlane(x1: Float64Array, x2: Float64Array, y: Float64Array, kept: Uint8Array): [number, number, number] {
  const m = [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]];
  for (let i = 0; i < y.length; i++) {
    if (!kept[i]) continue;
    const row = [x1[i]!, x2[i]!, 1];
    for (let r = 0; r < 3; r++) { for (let c = 0; c < 3; c++) m[r]![c]! += row[r]! * row[c]!; m[r]![3]! += row[r]! * y[i]!; }
  }
  for (let p = 0; p < 3; p++) {
    let pivot = p;
    for (let r = p + 1; r < 3; r++) if (Math.abs(m[r]![p]!) > Math.abs(m[pivot]![p]!)) pivot = r;
    [m[p], m[pivot]] = [m[pivot]!, m[p]!];
    if (Math.abs(m[p]![p]!) < 1e-12) return [0, 0, 0];
    for (let r = 0; r < 3; r++) {
      if (r === p) continue;
      const f = m[r]![p]! / m[p]![p]!;
      for (let c = p; c < 4; c++) m[r]![c]! -= f * m[p]![c]!;
    }
  }
  return [m[0]![3]! / m[0]![0]!, m[1]![3]! / m[1]![1]!, m[2]![3]! / m[2]![2]!];
}

const skipped = (reason: string, evidence: Record<string, unknown> = {}): MethodResult => ({
  id: 'missing-noise', label: MISSING_NOISE_LABEL, map: null, peak: 0, area: 0, evidence: { ...evidence, note: reason }, skipped: reason,
});

/**
 * `peak` is the largest smoothness (robust z of the residual below its prediction, 2x2-block
 * average); the map holds each block's Platt probability under `rule`.
 */
export function missingCameraNoise(luma: Float32Array, width: number, height: number, rule: MissingNoiseRule, note: Record<string, unknown> = {}): MethodResult {
  if (width * height < rule.minPixels) return skipped(`image under ${(rule.minPixels / 1e6).toFixed(1)} MP: a scaled copy has lost the camera's noise this method compares`);
  const cols = Math.ceil(width / BLOCK), rows = Math.ceil(height / BLOCK);
  const { residual, brightness, count, clipped } = residualBlocks(luma, width, height, cols, rows);
  const gradient = textureBlocks(luma, width, height, cols, rows);
  const n = cols * rows;
  const logResidual = new Float64Array(n), logGradient = new Float64Array(n), logBrightness = new Float64Array(n);
  const kept = new Uint8Array(n);
  let keptCount = 0;
  for (let b = 0; b < n; b++) {
    logResidual[b] = Math.log(residual[b]! + 0.02);
    logGradient[b] = Math.log(gradient[b]! + GRADIENT_OFFSET);
    logBrightness[b] = Math.log(brightness[b]! + 8);
    // Whole blocks only ((BLOCK / STRIDE)² samples): a partial block at the right or bottom edge has fewer to estimate from.
    if (!clipped[b] && gradient[b]! > MIN_GRADIENT && count[b]! >= (BLOCK / STRIDE) ** 2) { kept[b] = 1; keptCount++; }
  }
  if (keptCount < MIN_BLOCKS) return skipped(`only ${keptCount} textured, unsaturated blocks: too few to model the camera's noise`);
  const [cGradient, cBrightness, c0] = fitPlane(logGradient, logBrightness, logResidual, kept);
  const error = new Float64Array(keptCount);
  const deviation = new Float64Array(n);
  for (let b = 0, k = 0; b < n; b++) {
    deviation[b] = logResidual[b]! - (cGradient * logGradient[b]! + cBrightness * logBrightness[b]! + c0);
    if (kept[b]) error[k++] = deviation[b]!;
  }
  const centre = median(error);
  for (let k = 0; k < keptCount; k++) error[k] = Math.abs(error[k]! - centre);
  const spread = median(error) + 1e-3;
  // Smoothness: how far below the prediction, in robust deviations (0 where no comparison is possible).
  const smoothness = new Float64Array(n);
  for (let b = 0; b < n; b++) smoothness[b] = kept[b] ? (centre - deviation[b]!) / spread : 0;
  // Averaged over 2x2 blocks: a filled region is larger than one block, a lone smooth block is not.
  const values = new Float32Array(n), averaged = new Float32Array(n);
  let peak = 0, peakBlock = 0;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const r1 = Math.min(rows - 1, r + 1), c1 = Math.min(cols - 1, c + 1);
      const z = (smoothness[r * cols + c]! + smoothness[r * cols + c1]! + smoothness[r1 * cols + c]! + smoothness[r1 * cols + c1]!) / 4;
      averaged[r * cols + c] = z;
      if (z > peak) { peak = z; peakBlock = r * cols + c; }
      values[r * cols + c] = fillProbability(z, rule);
    }
  }
  const map: BlockMap = { values, cols, rows };
  const probability = fillProbability(peak, rule);
  // Where to look, even while the method decides nothing: the component of blocks at least half as
  // smooth as the peak that holds the peak block (the map's regions, as the heatmap's are drawn).
  const peakCentre = { x: ((peakBlock % cols) + 0.5) * (width / cols), y: (Math.floor(peakBlock / cols) + 0.5) * (height / rows) };
  const smoothestRegion = probability < 0.5 ? null : regionsOf({ values: averaged, cols, rows }, peak / 2, width, height, 1)
    .filter((box) => box.x <= peakCentre.x && peakCentre.x < box.x + box.width && box.y <= peakCentre.y && peakCentre.y < box.y + box.height)
    .sort((a, b) => b.score - a.score)
    .map(({ x, y, width: w, height: h }) => ({ x, y, width: w, height: h }))[0] ?? null;
  return {
    id: 'missing-noise',
    label: MISSING_NOISE_LABEL,
    map,
    peak,
    area: countAtLeast(values, 0.5) / n,
    evidence: {
      blockPixels: BLOCK,
      blocksCompared: keptCount,
      medianResidual: Math.round(quantile(residual, 0.5) * 1000) / 1000,
      noiseModel: { logGradient: Math.round(cGradient * 1000) / 1000, logBrightness: Math.round(cBrightness * 1000) / 1000 },
      peakSmoothness: Math.round(peak * 100) / 100,
      probability: Math.round(probability * 1e4) / 1e4,
      smoothestRegion,
      ...note,
    },
  };
}
