/**
 * Error level analysis: N. Krawetz, "A Picture's Worth: Digital Image Analysis and Forensics",
 * Black Hat Briefings 2007, §"Error Level Analysis". Re-save the image once at a known JPEG
 * quality; areas already at that compression change little, areas with a different history
 * (pasted, retouched) change more. The per-block error is compared with blocks of similar
 * texture (the error also grows with detail), so edges alone do not light up.
 */
import sharp from 'sharp';
import type { Raster } from '../image-input.js';
import { countAtLeast, quantile, robustOutlierMap, smoothMap } from '../forensic-map.js';
import { skippedMethod, type MethodResult } from './method.js';

export const ELA_QUALITY = 90;
export const ELA_LABEL = 'Error level analysis';
const CELL = 8;
/** Mean gradient (grey levels per pixel) under which a cell is flat. */
const FLAT_TEXTURE = 1.5;

/** Per 8x8 cell: summed absolute re-save error (mean over RGB) and green-gradient texture, and pixel counts. */
function cellSums(raster: Raster, again: Uint8Array) {
  const { width, height, channels } = raster;
  const data: Uint8Array = raster.data;
  const cols = Math.ceil(width / CELL), rows = Math.ceil(height / CELL);
  const error = new Float64Array(cols * rows), texture = new Float64Array(cols * rows), counts = new Uint32Array(cols * rows);
  const rowStride = width * channels;
  for (let y = 0; y < height; y++) {
    const row = Math.floor(y / CELL) * cols;
    const down = y + 1 < height ? rowStride : 0;
    for (let cx = 0; cx < cols; cx++) {
      const end = Math.min(width, (cx + 1) * CELL);
      let e = 0, t = 0;
      for (let x = cx * CELL, p = y * rowStride + x * channels; x < end; x++, p += channels) {
        e += Math.abs(data[p]! - again[p]!) + Math.abs(data[p + 1]! - again[p + 1]!) + Math.abs(data[p + 2]! - again[p + 2]!);
        // texture: absolute horizontal + vertical gradient of green (the last column has no right neighbour)
        const green = data[p + 1]!;
        t += (x + 1 < width ? Math.abs(green - data[p + channels + 1]!) : 0) + Math.abs(green - data[p + down + 1]!);
      }
      error[row + cx]! += e / 3;
      texture[row + cx]! += t;
      counts[row + cx]! += end - cx * CELL;
    }
  }
  return { error, texture, counts, cols, rows };
}

export async function errorLevelAnalysis(raster: Raster): Promise<MethodResult> {
  const { width, height, channels } = raster;
  const resaved = await sharp(raster.data, { raw: { width, height, channels: channels as 3 } })
    .jpeg({ quality: ELA_QUALITY, chromaSubsampling: '4:4:4', optimiseCoding: false })
    .toBuffer();
  const { data: again } = await sharp(resaved).raw().toBuffer({ resolveWithObject: true });
  const { error, texture, counts, cols, rows } = cellSums(raster, again);
  // Residual after explaining error by texture (least squares on log scale): ELA of a
  // consistently compressed image is mostly a function of local detail. Flat cells (borders,
  // clipped sky) are left out: they would set the baseline and make all detail an outlier.
  const n = cols * rows;
  const logE = new Float64Array(n), logT = new Float64Array(n);
  const textured = new Uint8Array(n);
  let mx = 0, my = 0, m = 0;
  for (let i = 0; i < n; i++) {
    const meanTexture = texture[i]! / counts[i]!;
    logE[i] = Math.log1p(error[i]! / counts[i]!);
    logT[i] = Math.log1p(meanTexture);
    if (meanTexture < FLAT_TEXTURE) continue;
    textured[i] = 1;
    mx += logT[i]!;
    my += logE[i]!;
    m++;
  }
  // Every cell flat (a blank or single-colour image): there is no error level to compare.
  if (m === 0) return skippedMethod('ela', ELA_LABEL, 'no textured 8x8 cell: the image is flat, and flat areas re-save alike whatever their history');
  mx /= m; my /= m;
  let sxy = 0, sxx = 0;
  for (let i = 0; i < n; i++) {
    if (!textured[i]) continue;
    sxy += (logT[i]! - mx) * (logE[i]! - my);
    sxx += (logT[i]! - mx) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  const residual = new Float32Array(n);
  for (let i = 0; i < n; i++) residual[i] = textured[i] ? logE[i]! - (my + slope * (logT[i]! - mx)) : Number.NaN;
  const outliers = robustOutlierMap(residual, 3);
  const map = smoothMap({ values: outliers.values, cols, rows });
  const meanError = error.reduce((a, b) => a + b, 0) / (width * height);
  return {
    id: 'ela',
    label: `Error level analysis (re-saved at JPEG quality ${ELA_QUALITY})`,
    map,
    peak: quantile(map.values, 0.99),
    area: countAtLeast(map.values, 0.5) / map.values.length,
    evidence: { flatCells: n - m, quality: ELA_QUALITY, meanAbsoluteError: Math.round(meanError * 100) / 100, textureSlope: Math.round(slope * 100) / 100 },
  };
}
