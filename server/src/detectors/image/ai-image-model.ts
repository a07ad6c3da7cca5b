/**
 * The learned AI-image patch model (server/models/ai-image-patches.onnx, trained by
 * training/ai-image/): a small CNN on the neighbouring-pixel residual of 64×64 patches cut at
 * native resolution, never from a resized image.
 *
 * - NPR residual: C. Tan, Y. Zhao, S. Wei, G. Gu, P. Liu, Y. Wei, "Rethinking the Up-Sampling
 *   Operations in CNN-based Generative Network for Generalizable Deepfake Detection", CVPR 2024,
 *   §3 (x − nearest-up(down₂(x)), computed inside the network).
 * - Rich-texture patches: N. Zhong, Y. Xu, Z. Qian, X. Zhang, "PatchCraft: Exploring Texture
 *   Patch for Efficient AI-generated Image Detection", 2023, §3.1: the generator's trace is
 *   clearest where texture is rich, so the most textured grid tiles are scored.
 *
 * The image's logit is the trimmed mean of its patch logits, Platt-calibrated with the
 * thresholds chosen on the training set's validation split (descriptor `calibration`,
 * `thresholds`). This file must cut patches exactly as training/ai-image/common.py does.
 */
import type { Signal } from '../types.js';
import { round4 } from '../result.js';
import { loadModel, outputProbability, runModel, type LoadedModel, type ModelProblem } from '../model-pack.js';
import type { Raster } from './image-input.js';

export const AI_IMAGE_MODEL = 'ai-image-patches';
const PATCH = 64;
const MAX_PATCHES = 32;
const TRIM = 0.125;

export interface ModelSignal {
  /** Calibrated probability that the image is generated, or null when the model did not run. */
  probability: number | null;
  logit: number | null;
  signal: Signal;
  thresholds: { authentic: number; manipulated: number } | null;
  /** False when validation supported no decision threshold (0 / 1): the score is only reported. */
  decides: boolean;
  weight: number;
}

/**
 * The most textured non-overlapping PATCH×PATCH tiles of an 8-bit raster, as a [n, 3, 64, 64]
 * tensor in [0, 1]. Texture = Σ |s(x,y) − s(x−1,y)| + |s(x,y) − s(x,y−1)|, s = R+G+B, over the
 * tile (differences across tile borders count; the image's own edge contributes 0).
 */
export function selectPatches(raster: Raster, maxPatches = MAX_PATCHES): { tensor: Float32Array; count: number; tiles: number } {
  const { width, height, channels, data } = raster;
  const gw = Math.floor(width / PATCH), gh = Math.floor(height / PATCH);
  const grey = channels < 3;
  const sum = (x: number, y: number) => {
    const p = (y * width + x) * channels;
    return grey ? 3 * data[p]! : data[p]! + data[p + 1]! + data[p + 2]!;
  };
  const scores: Array<{ score: number; gy: number; gx: number }> = [];
  for (let gy = 0; gy < gh; gy++) {
    for (let gx = 0; gx < gw; gx++) {
      let score = 0;
      for (let y = gy * PATCH; y < (gy + 1) * PATCH; y++) {
        for (let x = gx * PATCH; x < (gx + 1) * PATCH; x++) {
          const s = sum(x, y);
          if (x > 0) score += Math.abs(s - sum(x - 1, y));
          if (y > 0) score += Math.abs(s - sum(x, y - 1));
        }
      }
      scores.push({ score, gy, gx });
    }
  }
  scores.sort((a, b) => b.score - a.score || a.gy - b.gy || a.gx - b.gx);
  const chosen = scores.slice(0, maxPatches);
  const plane = PATCH * PATCH;
  const tensor = new Float32Array(chosen.length * 3 * plane);
  chosen.forEach(({ gy, gx }, n) => {
    for (let y = 0; y < PATCH; y++) {
      for (let x = 0; x < PATCH; x++) {
        const p = ((gy * PATCH + y) * width + gx * PATCH + x) * channels;
        for (let c = 0; c < 3; c++) tensor[n * 3 * plane + c * plane + y * PATCH + x] = data[grey ? p : p + c]! / 255;
      }
    }
  });
  return { tensor, count: chosen.length, tiles: scores.length };
}

export function trimmedMean(values: ArrayLike<number>): number {
  const sorted = Array.from(values).sort((a, b) => a - b);
  const k = Math.floor(sorted.length * TRIM);
  const kept = sorted.length - 2 * k > 0 ? sorted.slice(k, sorted.length - k) : sorted;
  return kept.reduce((a, b) => a + b, 0) / kept.length;
}

const LABEL = 'Learned patch model on the neighbouring-pixel residual (Tan et al. CVPR 2024; PatchCraft rich-texture patches)';

export function absentModel(reason: string, problems?: ModelProblem[]): ModelSignal {
  return {
    probability: null,
    logit: null,
    thresholds: null,
    decides: false,
    weight: 0,
    signal: { id: `model:${AI_IMAGE_MODEL}`, label: LABEL, score: null, weight: 0, evidence: { note: reason, ...(problems?.length && { problems }) } },
  };
}

/**
 * Runs the built-in patch model (or an operator pack of the same name) on a decoded raster.
 * The raster must be 8-bit, stored orientation, 1–4 channels (grey is replicated, alpha
 * ignored): the one decoder, image-input.ts, guarantees that; this checks it again.
 */
export async function runAiImageModel(raster: Raster & { scale?: number }, modelsDir?: string | null): Promise<ModelSignal> {
  const { model, problems } = await loadModel(AI_IMAGE_MODEL, modelsDir);
  if (!model) return absentModel('the AI-image patch model is not installed or failed to load', problems);
  if (!(raster.channels >= 1 && raster.channels <= 4) || raster.data.length !== raster.width * raster.height * raster.channels) {
    return absentModel(`unsupported raster (${raster.channels} channels, ${raster.data.length} bytes for ${raster.width}x${raster.height})`);
  }
  if (raster.width < PATCH || raster.height < PATCH) return absentModel(`image smaller than one ${PATCH}x${PATCH} patch: the model needs native-resolution patches`);
  return scorePatches(model, raster);
}

async function scorePatches(model: LoadedModel, raster: Raster & { scale?: number }): Promise<ModelSignal> {
  const { tensor, count, tiles } = selectPatches(raster);
  const logits = await runModel(model, tensor, [count, 3, PATCH, PATCH]);
  const logit = trimmedMean(logits);
  const probability = outputProbability([logit], model.descriptor);
  const { descriptor } = model;
  const thresholds = descriptor.thresholds ?? null;
  const decides = Boolean(thresholds && (thresholds.authentic > 0 || thresholds.manipulated < 1));
  const weight = decides ? descriptor.weight : 0;
  return {
    probability,
    logit,
    thresholds,
    decides,
    weight,
    signal: {
      id: `model:${AI_IMAGE_MODEL}`,
      label: LABEL,
      score: round4(probability),
      weight,
      evidence: {
        model: `${descriptor.name} ${descriptor.version}`,
        origin: model.origin,
        patches: count,
        gridTiles: tiles,
        patchSize: PATCH,
        meanLogit: round4(logit),
        patchesCalledAi: logits.filter((v) => v > 0).length,
        ...(thresholds && { thresholds }),
        ...(!decides && { decides: false, reason: 'on its validation split no score range was pure enough to decide (thresholds 0 / 1): reported, not weighed' }),
        ...(raster.scale !== undefined && raster.scale < 1 && { note: `image over the full-resolution limit: patches cut from a copy scaled by ${round4(raster.scale)}` }),
      },
    },
  };
}
