/**
 * The learned forgery localiser (training/forgery/): a small fully-convolutional network on
 * noise residuals (fixed SRM filters, Zhou et al., CVPR 2018; constrained convolutions, Bayar &
 * Stamm, IEEE TIFS 2018) trained here on splices, copy-moves and inpainted removals made from
 * real photos and recompressed. It maps tampering probability at 1/4 of the input resolution.
 *
 * The image is read in its stored orientation (like every compression-aware method), scaled
 * down only above the descriptor's `maxPixels`, and run in overlapping tiles so memory stays
 * bounded at any size. The image-level score is the mean of the map's top 1 % of cells,
 * Platt-calibrated on the validation split.
 */
import type { BlockMap } from '../forensic-map.js';
import { decodePixels, type LoadedImage } from '../image-input.js';
import { loadModel, outputProbability, runModel, type LoadedModel, type TensorInput } from '../../model-pack.js';
import type { MethodResult } from './method.js';
import { sigmoid } from '../../result.js';

export const LOCALISER_MODEL = 'forgery-localiser';
const LABEL = 'Learned localiser on noise residuals (SRM + constrained convolution)';

interface LocaliserInput extends TensorInput {
  /** Side of the square tiles the model runs on (a multiple of 8). */
  tile: number;
  /** Input pixels per output cell. */
  outputStride: number;
  /** Larger images are scaled down to this many pixels first. */
  maxPixels: number;
}

/** Mean of the top 1 % of values: the image-level score the model was calibrated on. */
export function topPercentMean(values: Float32Array): number {
  const sorted = Float32Array.from(values).sort();
  const k = Math.max(1, Math.floor(sorted.length / 100));
  let sum = 0;
  for (let i = sorted.length - k; i < sorted.length; i++) sum += sorted[i]!;
  return sum / k;
}

/** The model's probability map over an RGB raster (cells of `outputStride` pixels). */
export async function localiserMap(model: LoadedModel, rgb: { data: Uint8Array; width: number; height: number }): Promise<BlockMap> {
  const input = model.descriptor.input as LocaliserInput;
  const { tile, outputStride: stride } = input;
  const overlap = 32;
  const cols = Math.ceil(rgb.width / stride), rows = Math.ceil(rgb.height / stride);
  const sums = new Float32Array(cols * rows), counts = new Float32Array(cols * rows);
  const step = tile - overlap;
  const tilesX = Math.max(1, Math.ceil((rgb.width - overlap) / step)), tilesY = Math.max(1, Math.ceil((rgb.height - overlap) / step));
  const plane = tile * tile;
  const tensor = new Float32Array(3 * plane);
  for (let ty = 0; ty < tilesY; ty++) {
    for (let tx = 0; tx < tilesX; tx++) {
      // Tiles past the right and bottom edges (and images smaller than a tile) are filled by reflection.
      const x0 = tx * step, y0 = ty * step;
      for (let y = 0; y < tile; y++) {
        const sy = reflect(y0 + y, rgb.height);
        for (let x = 0; x < tile; x++) {
          const p = (sy * rgb.width + reflect(x0 + x, rgb.width)) * 3;
          const i = y * tile + x;
          tensor[i] = rgb.data[p]! / 255;
          tensor[plane + i] = rgb.data[p + 1]! / 255;
          tensor[2 * plane + i] = rgb.data[p + 2]! / 255;
        }
      }
      const logits = await runModel(model, tensor, [1, 3, tile, tile]);
      const side = tile / stride;
      // Cells near a tile's border see less context: the overlap lets inner cells win.
      const margin = tx === 0 && ty === 0 && tilesX === 1 && tilesY === 1 ? 0 : overlap / stride / 2;
      for (let r = 0; r < side; r++) {
        const row = y0 / stride + r;
        if (row >= rows) break;
        for (let c = 0; c < side; c++) {
          const col = x0 / stride + c;
          if (col >= cols) break;
          const inner = (r >= margin || y0 === 0) && (r < side - margin || y0 + tile >= rgb.height) && (c >= margin || x0 === 0) && (c < side - margin || x0 + tile >= rgb.width);
          const weight = inner ? 1 : 0.1;
          const cell = row * cols + col;
          sums[cell] = sums[cell]! + weight * sigmoid(logits[r * side + c]!);
          counts[cell] = counts[cell]! + weight;
        }
      }
    }
  }
  const values = new Float32Array(cols * rows);
  for (let i = 0; i < values.length; i++) values[i] = counts[i]! > 0 ? sums[i]! / counts[i]! : 0;
  return { values, cols, rows };
}

function reflect(i: number, size: number): number {
  if (size === 1) return 0;
  const period = 2 * (size - 1);
  const m = ((i % period) + period) % period;
  return m < size ? m : period - m;
}

export interface LocaliserResult {
  method: MethodResult;
  /** Calibrated probability that the image was tampered with. */
  probability: number;
  thresholds: { authentic: number; manipulated: number } | null;
  model: LoadedModel;
}

/** Runs the built-in (or operator-replaced) localiser; null when it is not installed. */
export async function runLocaliser(image: LoadedImage, modelsDir: string | null): Promise<LocaliserResult | { problem: string }> {
  const { model, problems } = await loadModel(LOCALISER_MODEL, modelsDir);
  if (!model) return { problem: problems.map((p) => p.problem).join('; ') || 'not installed' };
  const input = model.descriptor.input as LocaliserInput;
  const rgb = await decodePixels(image, { channels: 3, maxPixels: input.maxPixels });
  const map = await localiserMap(model, rgb);
  const score = topPercentMean(map.values);
  let area = 0;
  for (const value of map.values) if (value >= 0.5) area++;
  // The descriptor's Platt calibration applies to the logit of the image score.
  const probability = outputProbability([Math.log(Math.max(1e-6, score) / Math.max(1e-6, 1 - score))], model.descriptor);
  return {
    method: {
      id: 'learned',
      label: LABEL,
      map,
      peak: score,
      area: area / map.values.length,
      evidence: {
        model: `${model.descriptor.name} ${model.descriptor.version}`,
        calibratedProbability: Math.round(probability * 10_000) / 10_000,
        analysedAt: { width: rgb.width, height: rgb.height, scale: Math.round(rgb.scale * 10_000) / 10_000 },
      },
    },
    probability,
    thresholds: model.descriptor.thresholds ?? null,
    model,
  };
}
