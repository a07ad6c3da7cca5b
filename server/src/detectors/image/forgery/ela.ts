/**
 * Error level analysis: N. Krawetz, "A Picture's Worth: Digital Image Analysis and Forensics",
 * Black Hat Briefings 2007, §"Error Level Analysis". Re-save the image once at a known JPEG
 * quality; areas already at that compression change little, areas with a different history
 * (pasted, retouched) change more. The per-block error is compared with blocks of similar
 * texture (the error also grows with detail), so edges alone do not light up.
 */
import sharp from 'sharp';
import type { Raster } from '../image-input.js';
import { quantile, robustOutlierMap, smoothMap } from '../forensic-map.js';
import type { MethodResult } from './method.js';

export const ELA_QUALITY = 90;
const CELL = 8;
/** Mean gradient (grey levels per pixel) under which a cell is flat. */
const FLAT_TEXTURE = 1.5;

export async function errorLevelAnalysis(raster: Raster): Promise<MethodResult> {
  const { width, height, channels } = raster;
  const resaved = await sharp(raster.data, { raw: { width, height, channels: channels as 3 } })
    .jpeg({ quality: ELA_QUALITY, chromaSubsampling: '4:4:4', optimiseCoding: false })
    .toBuffer();
  const { data: again } = await sharp(resaved).raw().toBuffer({ resolveWithObject: true });
  const cols = Math.ceil(width / CELL), rows = Math.ceil(height / CELL);
  const error = new Float64Array(cols * rows), texture = new Float64Array(cols * rows), counts = new Uint32Array(cols * rows);
  for (let y = 0; y < height; y++) {
    const row = Math.floor(y / CELL) * cols;
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * channels;
      let e = 0;
      for (let c = 0; c < 3; c++) e += Math.abs(raster.data[p + c]! - again[p + c]!);
      // texture: absolute horizontal + vertical luminance-ish gradient
      const right = x + 1 < width ? p + channels : p, down = y + 1 < height ? p + width * channels : p;
      const t = Math.abs(raster.data[p + 1]! - raster.data[right + 1]!) + Math.abs(raster.data[p + 1]! - raster.data[down + 1]!);
      const index = row + Math.floor(x / CELL);
      error[index]! += e / 3;
      texture[index]! += t;
      counts[index]!++;
    }
  }
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
  mx /= Math.max(1, m); my /= Math.max(1, m);
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
    area: map.values.filter((v) => v >= 0.5).length / map.values.length,
    evidence: { flatCells: n - m, quality: ELA_QUALITY, meanAbsoluteError: Math.round(meanError * 100) / 100, textureSlope: Math.round(slope * 100) / 100 },
  };
}
