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
 * second pixel and row), the same on the image averaged over 2x2 pixels (coarse), the mean
 * gradient of the image averaged over 4x4 pixels, and the mean brightness. A least-squares fit
 * over the image's blocks predicts each log residual from log gradient and brightness; the
 * brightness term is piecewise linear, because a tone curve squeezes noise at its toe and
 * shoulder, which a straight line cannot follow. A block is unnaturally smooth when both of its
 * residuals lie far below their predictions (robust z over the image; the smaller of the two,
 * averaged over 2x2 blocks): a fill is smooth at every scale, while a phone's denoising leaves
 * texture at the coarser one. Saturated (in luma or in a colour channel), flat and tone-extreme
 * blocks carry no noise to compare and are left out.
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
/**
 * A colour channel at these levels is clipped too: a saturated red or yellow removes noise from
 * luma while luma itself stays mid-tone. Blocks with more than CLIPPED_CHANNEL_SHARE of such samples are left out.
 */
const CHANNEL_HIGH = 250, CHANNEL_LOW = 5, CLIPPED_CHANNEL_SHARE = 0.2;
/** Blocks darker or brighter than these on average sit at a tone curve's extremes, where phones flatten noise themselves. */
const TONE_LOW = 24, TONE_HIGH = 232;
/** Knots (mean luma) of the piecewise-linear brightness term of the noise model. */
const BRIGHTNESS_KNOTS = [32, 64, 128, 192, 224];
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
 * The 3x3 median as the median of the columns' sorted thirds: the largest low, the median middle
 * and the smallest high (A. W. Paeth, "Median finding on a 3x3 grid", Graphics Gems, 1990). Each
 * column of rows y-1..y+1 is sorted once (`sortColumns`) and shared by the three pixels beside it.
 */
class ColumnThirds {
  readonly low: Float32Array;
  readonly middle: Float32Array;
  readonly high: Float32Array;
  constructor(width: number) {
    this.low = new Float32Array(width); this.middle = new Float32Array(width); this.high = new Float32Array(width);
  }

  sortColumns(plane: Float32Array, width: number, y: number): void {
    const { low, middle, high } = this;
    for (let x = 0; x < width; x++) {
      const a = plane[(y - 1) * width + x]!, b = plane[y * width + x]!, c = plane[(y + 1) * width + x]!;
      const lo = Math.min(a, b), hi = Math.max(a, b);
      low[x] = Math.min(lo, c); high[x] = Math.max(hi, c); middle[x] = Math.max(lo, Math.min(hi, c));
    }
  }

  /** The median of the 3x3 window centred on column x (1 <= x < width - 1) of the sorted rows. */
  medianAt(x: number): number {
    const { low, middle, high } = this;
    return med3(Math.max(low[x - 1]!, low[x]!, low[x + 1]!), med3(middle[x - 1]!, middle[x]!, middle[x + 1]!), Math.min(high[x - 1]!, high[x]!, high[x + 1]!));
  }
}

/**
 * Per block: mean |pixel − 3x3 median| over interior pixels, mean luma, whether luma is clipped,
 * and whether too many samples have a clipped colour channel (`rgb`, interleaved).
 */
function residualBlocks(luma: Float32Array, rgb: Uint8Array, width: number, height: number, cols: number, rows: number) {
  const residual = new Float64Array(cols * rows), brightness = new Float64Array(cols * rows), count = new Float64Array(cols * rows);
  const clipped = new Uint8Array(cols * rows), clippedChannels = new Float64Array(cols * rows);
  const thirds = new ColumnThirds(width);
  // Every second pixel of every second row: 256 per block estimate its mean as well, at a quarter of the cost.
  for (let y = 1; y < height - 1; y += STRIDE) {
    thirds.sortColumns(luma, width, y);
    const rowBase = Math.floor(y / BLOCK) * cols, row = y * width;
    // Block by block along the row, so the sums stay in locals.
    for (let c = 0; c < cols; c++) {
      let sumResidual = 0, sumBrightness = 0, clip = false, channelClips = 0;
      const x0 = c * BLOCK + 1, x1 = Math.min(width - 1, (c + 1) * BLOCK);
      for (let x = x0; x < x1; x += STRIDE) {
        const value = luma[row + x]!;
        sumResidual += Math.abs(value - thirds.medianAt(x));
        sumBrightness += value;
        if (value >= CLIPPED_HIGH || value <= CLIPPED_LOW) clip = true;
        const p = (row + x) * 3, red = rgb[p]!, green = rgb[p + 1]!, blue = rgb[p + 2]!;
        if (Math.max(red, green, blue) >= CHANNEL_HIGH || Math.min(red, green, blue) <= CHANNEL_LOW) channelClips++;
      }
      const b = rowBase + c;
      residual[b]! += sumResidual;
      brightness[b]! += sumBrightness;
      clippedChannels[b]! += channelClips;
      count[b]! += Math.max(0, Math.ceil((x1 - x0) / STRIDE));
      if (clip) clipped[b] = 1;
    }
  }
  for (let b = 0; b < residual.length; b++) {
    if (count[b]! === 0) continue;
    residual[b]! /= count[b]!; brightness[b]! /= count[b]!;
    if (clippedChannels[b]! > CLIPPED_CHANNEL_SHARE * count[b]!) clipped[b] = 1;
  }
  return { residual, brightness, count, clipped };
}

/**
 * Per block: mean |pixel − 3x3 median| of the image averaged over 2x2 pixels (every pixel of
 * its interior), the same residual one octave down.
 */
function coarseResidualBlocks(luma: Float32Array, width: number, height: number, cols: number, rows: number): Float64Array {
  const w = width >> 1, h = height >> 1;
  const half = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const top = 2 * y * width, bottom = top + width;
    for (let x = 0; x < w; x++) half[y * w + x] = (luma[top + 2 * x]! + luma[top + 2 * x + 1]! + luma[bottom + 2 * x]! + luma[bottom + 2 * x + 1]!) / 4;
  }
  const residual = new Float64Array(cols * rows), count = new Float64Array(cols * rows);
  const thirds = new ColumnThirds(w);
  const cell = BLOCK / 2;
  for (let y = 1; y < h - 1; y++) {
    thirds.sortColumns(half, w, y);
    const rowBase = Math.floor(y / cell) * cols, row = y * w;
    for (let c = 0; c < cols; c++) {
      let sum = 0;
      const x0 = Math.max(1, c * cell), x1 = Math.min(w - 1, (c + 1) * cell);
      for (let x = x0; x < x1; x++) sum += Math.abs(half[row + x]! - thirds.medianAt(x));
      residual[rowBase + c]! += sum;
      count[rowBase + c]! += Math.max(0, x1 - x0);
    }
  }
  for (let b = 0; b < residual.length; b++) if (count[b]! > 0) residual[b]! /= count[b]!;
  return residual;
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

/**
 * Least squares y ≈ Σ c_j·x_j over the kept blocks (normal equations, Gaussian elimination with
 * partial pivoting), with a slight ridge: a hinge above every kept block's brightness is a column
 * of zeros, and its coefficient should then be 0, not make the system singular.
 */
const RIDGE = 1e-6;
function fitLinear(columns: Float64Array[], y: Float64Array, kept: Uint8Array, keptCount: number): number[] {
  const k = columns.length;
  const m = Array.from({ length: k }, (_, r) => Array.from({ length: k + 1 }, (_, c) => (c === r ? RIDGE * keptCount : 0)));
  for (let i = 0; i < y.length; i++) {
    if (!kept[i]) continue;
    for (let r = 0; r < k; r++) {
      const xr = columns[r]![i]!;
      for (let c = 0; c < k; c++) m[r]![c]! += xr * columns[c]![i]!;
      m[r]![k]! += xr * y[i]!;
    }
  }
  for (let p = 0; p < k; p++) {
    let pivot = p;
    for (let r = p + 1; r < k; r++) if (Math.abs(m[r]![p]!) > Math.abs(m[pivot]![p]!)) pivot = r;
    [m[p], m[pivot]] = [m[pivot]!, m[p]!];
    for (let r = 0; r < k; r++) {
      if (r === p) continue;
      const f = m[r]![p]! / m[p]![p]!;
      for (let c = p; c <= k; c++) m[r]![c]! -= f * m[p]![c]!;
    }
  }
  return m.map((row, r) => row[k]! / row[r]!);
}

/**
 * How far each kept block's log residual lies below the noise model's prediction, in robust
 * deviations over the image (0 where no comparison is possible), and the model's coefficients.
 */
function smoothnessBelowModel(residual: Float64Array, predictors: Float64Array[], kept: Uint8Array, keptCount: number) {
  const n = residual.length;
  const logResidual = Float64Array.from(residual, (r) => Math.log(r + 0.02));
  const coefficients = fitLinear(predictors, logResidual, kept, keptCount);
  const deviation = new Float64Array(n), error = new Float64Array(keptCount);
  for (let b = 0, k = 0; b < n; b++) {
    let predicted = 0;
    for (let j = 0; j < predictors.length; j++) predicted += coefficients[j]! * predictors[j]![b]!;
    deviation[b] = logResidual[b]! - predicted;
    if (kept[b]) error[k++] = deviation[b]!;
  }
  const centre = median(error);
  for (let k = 0; k < keptCount; k++) error[k] = Math.abs(error[k]! - centre);
  const spread = median(error) + 1e-3;
  const smoothness = new Float64Array(n);
  for (let b = 0; b < n; b++) smoothness[b] = kept[b] ? (centre - deviation[b]!) / spread : 0;
  return { smoothness, coefficients };
}

const skipped = (reason: string, evidence: Record<string, unknown> = {}): MethodResult => ({
  id: 'missing-noise', label: MISSING_NOISE_LABEL, map: null, peak: 0, area: 0, evidence: { ...evidence, note: reason }, skipped: reason,
});

/**
 * `peak` is the largest smoothness (robust z of the residual below its prediction, 2x2-block
 * average); the map holds each block's Platt probability under `rule`.
 */
export function missingCameraNoise(luma: Float32Array, rgb: Uint8Array, width: number, height: number, rule: MissingNoiseRule, note: Record<string, unknown> = {}): MethodResult {
  if (width * height < rule.minPixels) return skipped(`image under ${(rule.minPixels / 1e6).toFixed(1)} MP: a scaled copy has lost the camera's noise this method compares`);
  const cols = Math.ceil(width / BLOCK), rows = Math.ceil(height / BLOCK);
  const { residual, brightness, count, clipped } = residualBlocks(luma, rgb, width, height, cols, rows);
  const gradient = textureBlocks(luma, width, height, cols, rows);
  const coarse = coarseResidualBlocks(luma, width, height, cols, rows);
  const n = cols * rows;
  // Predictors: log texture, brightness and its hinges at the knots (piecewise linear), a constant.
  const predictors = [Float64Array.from(gradient, (g) => Math.log(g + GRADIENT_OFFSET)), Float64Array.from(brightness, (v) => v / 255)];
  for (const knot of BRIGHTNESS_KNOTS) predictors.push(Float64Array.from(brightness, (v) => Math.max(0, v - knot) / 255));
  predictors.push(new Float64Array(n).fill(1));
  const kept = new Uint8Array(n);
  let keptCount = 0;
  for (let b = 0; b < n; b++) {
    // Whole blocks only ((BLOCK / STRIDE)² samples): a partial block at the right or bottom edge has fewer to estimate from.
    const comparable = !clipped[b] && gradient[b]! > MIN_GRADIENT && count[b]! >= (BLOCK / STRIDE) ** 2 && brightness[b]! >= TONE_LOW && brightness[b]! <= TONE_HIGH;
    if (comparable) { kept[b] = 1; keptCount++; }
  }
  if (keptCount < MIN_BLOCKS) return skipped(`only ${keptCount} textured, unsaturated blocks of mid-tone brightness: too few to model the camera's noise`);
  const fine = smoothnessBelowModel(residual, predictors, kept, keptCount);
  const octave = smoothnessBelowModel(coarse, predictors, kept, keptCount);
  // Smooth at both scales: a fill is; a denoised natural area keeps texture one octave down.
  const smoothness = Float64Array.from(fine.smoothness, (z, b) => Math.min(z, octave.smoothness[b]!));
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
      noiseModel: { logGradient: Math.round(fine.coefficients[0]! * 1000) / 1000, coarseLogGradient: Math.round(octave.coefficients[0]! * 1000) / 1000 },
      peakSmoothness: Math.round(peak * 100) / 100,
      probability: Math.round(probability * 1e4) / 1e4,
      smoothestRegion,
      ...note,
    },
  };
}
