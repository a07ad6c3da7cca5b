/**
 * Local noise-level inconsistency: S. Lyu, X. Pan and X. Zhang, "Exposing Region Splicing
 * Forgeries with Blind Local Noise Estimation", IJCV 110(2), 2014, §3 (kurtosis
 * concentration) and §4 (local estimation with integral moments).
 *
 * Natural images have near-constant kurtosis across band-pass (here the 15 AC filters of the
 * 4x4 DCT) channels; white noise of variance σn² lowers it as
 * sqrt(κ̃_k) = sqrt(κ) (σ̃_k² − σn²) / σ̃_k². A least-squares fit of that line in each window
 * gives the local noise variance. A region spliced from another camera or image, or
 * smoothed, carries a different noise level from its surroundings.
 */
import { countAtLeast, quantile, robustOutlierMap, smoothMap } from '../forensic-map.js';
import { skippedMethod, type MethodResult } from './method.js';

const LABEL = 'Local noise level (Lyu, Pan & Zhang 2014)';
const CELL = 16; // moments are accumulated per 16x16 cell...
const WINDOW_CELLS = 4;
/** Band-pass variance under which a window counts as flat. */
const FLAT_VARIANCE = 0.25; // ...and the estimate uses 64x64 windows (4x4 cells), stride 16
const FILTERS = 15; // the AC filters of the 4x4 DCT
/**
 * Every decoded 8-bit image carries rounding noise of variance 1/12 grey level²; window estimates
 * are read as log σ of the noise plus it, so estimates below that level (after a compression that
 * erased the noise, most windows estimate 0) count as that level and not as a chasm in log σ.
 */
const ROUNDING_VARIANCE = 1 / 12;
/**
 * Nats: the spread of the windows' deviations is never taken below this. Where most windows
 * estimate the same level the median absolute deviation falls to 0, and every textured window
 * became an outlier. About the 25th percentile of the spread in the untouched camera photos of the
 * fitting half (0.24 nats, median 0.42, read as log(σ + 0.05) before this floor); one value tried.
 */
export const MIN_SPREAD = 0.2;

/** The noise σ (grey levels) a window's log value stands for, the rounding noise taken out. */
const sigmaOf = (logValue: number) => Math.round(Math.sqrt(Math.max(0, Math.exp(2 * logValue) - ROUNDING_VARIANCE)) * 100) / 100;

/** Per cell and AC filter of the 4x4 DCT: sums of squared and fourth-power responses. Its own function so V8 optimises the loop on its own. */
function cellMoments(grey: Float32Array, width: number, height: number, cols: number, rows: number) {
  const basis: number[][] = [];
  for (let u = 0; u < 4; u++) basis.push(Array.from({ length: 4 }, (_, x) => (u === 0 ? 0.5 : Math.SQRT1_2) * Math.cos(((2 * x + 1) * u * Math.PI) / 8)));
  // The sixteen basis values as locals: table lookups per pixel and filter cost more than the products.
  const [[a0, a1, a2, a3], [b0, b1, b2, b3], [c0, c1, c2, c3], [d0, d1, d2, d3]] = basis as [[number, number, number, number], [number, number, number, number], [number, number, number, number], [number, number, number, number]];
  // Per cell and per AC filter: sums of r², r⁴ (responses of DCT AC filters are zero-mean).
  const m2 = new Float64Array(cols * rows * FILTERS), m4 = new Float64Array(cols * rows * FILTERS);
  const rowPass = new Float32Array(4 * width); // 4 row-filtered values per column for the current 4-row strip
  const responses = new Float64Array(4);
  for (let y = 0; y + 3 < height && Math.floor(y / CELL) < rows; y++) {
    const cellRow = Math.floor(y / CELL);
    // vertical 1-D DCT over rows y..y+3 for every column
    for (let x = 0; x < width; x++) {
      const g0 = grey[y * width + x]!, g1 = grey[(y + 1) * width + x]!, g2 = grey[(y + 2) * width + x]!, g3 = grey[(y + 3) * width + x]!;
      rowPass[x] = a0 * g0 + a1 * g1 + a2 * g2 + a3 * g3;
      rowPass[width + x] = b0 * g0 + b1 * g1 + b2 * g2 + b3 * g3;
      rowPass[2 * width + x] = c0 * g0 + c1 * g1 + c2 * g2 + c3 * g3;
      rowPass[3 * width + x] = d0 * g0 + d1 * g1 + d2 * g2 + d3 * g3;
    }
    for (let x = 0; x + 3 < width && Math.floor(x / CELL) < cols; x++) {
      const base = (cellRow * cols + Math.floor(x / CELL)) * FILTERS;
      let f = 0;
      for (let v = 0; v < 4; v++) {
        const r = v * width + x; // no subarray views: one per pixel and row cost more than the filtering
        const r0 = rowPass[r]!, r1 = rowPass[r + 1]!, r2 = rowPass[r + 2]!, r3 = rowPass[r + 3]!;
        responses[0] = a0 * r0 + a1 * r1 + a2 * r2 + a3 * r3;
        responses[1] = b0 * r0 + b1 * r1 + b2 * r2 + b3 * r3;
        responses[2] = c0 * r0 + c1 * r1 + c2 * r2 + c3 * r3;
        responses[3] = d0 * r0 + d1 * r1 + d2 * r2 + d3 * r3;
        for (let u = v === 0 ? 1 : 0; u < 4; u++) { // (u, v) = (0, 0) is the DC, not a band-pass
          const sq = responses[u]! * responses[u]!;
          m2[base + f]! += sq;
          m4[base + f]! += sq * sq;
          f++;
        }
      }
    }
  }
  return { m2, m4 };
}

export function noiseLevelInconsistency(grey: Float32Array, width: number, height: number): MethodResult {
  const cols = Math.floor((width - 3) / CELL), rows = Math.floor((height - 3) / CELL);
  if (cols < WINDOW_CELLS || rows < WINDOW_CELLS) {
    return skippedMethod('noise-level', LABEL, 'image too small');
  }
  const { m2, m4 } = cellMoments(grey, width, height, cols, rows);
  const samplesPerCell = CELL * CELL;
  const outCols = cols - WINDOW_CELLS + 1, outRows = rows - WINDOW_CELLS + 1;
  const logNoise = new Float32Array(cols * rows).fill(Number.NaN);
  const windowNoise = new Float32Array(outCols * outRows);
  const a = new Float64Array(FILTERS), bInv = new Float64Array(FILTERS);
  for (let wy = 0; wy < outRows; wy++) {
    for (let wx = 0; wx < outCols; wx++) {
      for (let f = 0; f < FILTERS; f++) {
        let s2 = 0, s4 = 0;
        for (let cy = 0; cy < WINDOW_CELLS; cy++) for (let cx = 0; cx < WINDOW_CELLS; cx++) {
          const index = ((wy + cy) * cols + wx + cx) * FILTERS + f;
          s2 += m2[index]!;
          s4 += m4[index]!;
        }
        const count = samplesPerCell * WINDOW_CELLS * WINDOW_CELLS;
        const variance = s2 / count + 1e-6;
        const excessKurtosis = s4 / count / (variance * variance) - 3;
        a[f] = Math.sqrt(Math.max(0, excessKurtosis));
        bInv[f] = 1 / variance;
      }
      // Least squares a = α − β·(1/σ²): σn² = β / α.
      let ma = 0, mb = 0;
      for (let f = 0; f < FILTERS; f++) { ma += a[f]!; mb += bInv[f]!; }
      ma /= FILTERS; mb /= FILTERS;
      let sab = 0, sbb = 0;
      for (let f = 0; f < FILTERS; f++) { sab += (a[f]! - ma) * (bInv[f]! - mb); sbb += (bInv[f]! - mb) ** 2; }
      const beta = sbb > 0 ? -sab / sbb : 0;
      const alpha = ma + beta * mb;
      let minVariance = Infinity;
      for (let f = 0; f < FILTERS; f++) minVariance = Math.min(minVariance, 1 / bInv[f]!);
      const noiseVariance = alpha > 1e-6 ? Math.min(minVariance, Math.max(0, beta / alpha)) : minVariance;
      // Flat windows (clipped sky, black borders) have no texture to estimate noise against.
      windowNoise[wy * outCols + wx] = minVariance < FLAT_VARIANCE ? Number.NaN : 0.5 * Math.log(noiseVariance + ROUNDING_VARIANCE);
    }
  }
  if (!windowNoise.some(Number.isFinite)) return skippedMethod('noise-level', LABEL, 'every 64x64 window is flat: there is no texture to estimate noise against');
  // Each cell takes the mean of the windows covering it.
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      let sum = 0, count = 0;
      for (let wy = Math.max(0, cy - WINDOW_CELLS + 1); wy <= Math.min(outRows - 1, cy); wy++) {
        for (let wx = Math.max(0, cx - WINDOW_CELLS + 1); wx <= Math.min(outCols - 1, cx); wx++) {
          const value = windowNoise[wy * outCols + wx]!;
          if (Number.isFinite(value)) { sum += value; count++; }
        }
      }
      if (count) logNoise[cy * cols + cx] = sum / count;
    }
  }
  const deviation = new Float32Array(logNoise.length);
  const medianLog = quantile(logNoise.filter(Number.isFinite), 0.5);
  for (let i = 0; i < logNoise.length; i++) deviation[i] = Number.isFinite(logNoise[i]!) ? Math.abs(logNoise[i]! - medianLog) : Number.NaN;
  const outliers = robustOutlierMap(deviation, 6, MIN_SPREAD);
  const map = smoothMap({ values: outliers.values, cols, rows });
  return {
    id: 'noise-level',
    label: LABEL,
    map,
    peak: quantile(map.values, 0.99),
    area: countAtLeast(map.values, 0.5) / map.values.length,
    evidence: {
      medianNoiseSigma: sigmaOf(medianLog),
      noiseSigmaRange: [0.05, 0.95].map((q) => sigmaOf(quantile(windowNoise.filter(Number.isFinite), q))),
      flatWindows: windowNoise.filter((v) => !Number.isFinite(v)).length,
      windowPixels: CELL * WINDOW_CELLS,
    },
  };
}
