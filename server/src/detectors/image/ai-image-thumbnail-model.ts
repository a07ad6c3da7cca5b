/**
 * The learned thumbnail model (server/models/ai-image-thumbnail.onnx, trained by
 * training/ai-image-thumbnail/): a small CIFAR ResNet (K. He, X. Zhang, S. Ren, J. Sun, "Deep
 * Residual Learning for Image Recognition", CVPR 2016, §4.2) at native 32×32, trained on the
 * CIFAKE development folder (J. J. Bird, A. Lotfi, "CIFAKE: Image Classification and Explainable
 * Identification of AI-Generated Synthetic Images", IEEE Access 12, 2024: Stable Diffusion 1.4
 * against CIFAR-10). The graph averages five cross-validation fold models, each flip-averaged.
 *
 * Gate (descriptor `input`): it runs only on images both of whose sides lie in
 * [minSide, maxSide] (24..48 px); exactly 32×32 is fed as it is, other sizes are resized to
 * 32×32 (Lanczos 3, fill). It decides only at `decideSize` (32×32), the one size its
 * out-of-fold figures, calibration and thresholds were measured on; a resized thumbnail is
 * scored and reported with weight 0. The patches model (ai-image-model.ts) starts at 128 px,
 * so the two never run on the same image.
 *
 * Fusion (validated out-of-fold in training/ai-image-thumbnail/evaluate.py): fused log-odds =
 * weight · (a · logit + b) + the statistics' log-odds of the thumbnail regime, with the
 * descriptor's Platt (a, b), weight and thresholds; ai-image.ts applies it.
 */
import sharp from 'sharp';
import type { Signal } from '../types.js';
import { round4, sigmoid } from '../result.js';
import { loadModel, modelNotRunSignal, runModel, type LoadedModel, type ModelProblem, type TensorInput } from '../model-pack.js';
import type { Raster } from './image-input.js';

export const THUMBNAIL_MODEL = 'ai-image-thumbnail';
export const THUMBNAIL_SIZE = 32;

interface ThumbnailInput extends TensorInput {
  minSide: number;
  maxSide: number;
  decideSize: [number, number];
}

export interface ThumbnailSignal {
  /** Platt-calibrated probability of the model alone, or null when it did not run. */
  probability: number | null;
  /** Its calibrated log-odds a · logit + b (not held inside [0.001, 0.999]: the fusion was validated on it). */
  logOdds: number | null;
  thresholds: { authentic: number; manipulated: number } | null;
  /** True only on images of the size its thresholds were validated on. */
  decides: boolean;
  weight: number;
  signal: Signal;
}

const LABEL = 'Learned thumbnail model (32x32 CIFAR ResNet, five-fold ensemble; trained on the CIFAKE development folder)';

export function absentThumbnailModel(reason: string, problems?: ModelProblem[]): ThumbnailSignal {
  return {
    probability: null,
    logOdds: null,
    thresholds: null,
    decides: false,
    weight: 0,
    signal: modelNotRunSignal(THUMBNAIL_MODEL, LABEL, reason, problems),
  };
}

/** Whether an image of this size is scored: 'native' (fed as it is), 'resized' (to 32×32), or null. */
export function thumbnailGate(width: number, height: number, input: Pick<ThumbnailInput, 'minSide' | 'maxSide'>): 'native' | 'resized' | null {
  if (width === THUMBNAIL_SIZE && height === THUMBNAIL_SIZE) return 'native';
  const inside = (side: number) => side >= input.minSide && side <= input.maxSide;
  return inside(width) && inside(height) ? 'resized' : null;
}

/** A checked 8-bit raster (1–4 channels: grey replicated, alpha dropped) as a [1, 3, 32, 32] tensor in [0, 1]. */
export async function thumbnailTensor(raster: Raster): Promise<Float32Array> {
  const { width, height, channels, data } = raster;
  if (!(channels >= 1 && channels <= 4) || data.length !== width * height * channels) {
    throw new Error(`unsupported raster (${channels} channels, ${data.length} bytes for ${width}x${height})`);
  }
  let rgb = Buffer.alloc(width * height * 3);
  for (let i = 0, p = 0; i < width * height; i++, p += channels) {
    for (let c = 0; c < 3; c++) rgb[i * 3 + c] = data[channels < 3 ? p : p + c]!;
  }
  if (width !== THUMBNAIL_SIZE || height !== THUMBNAIL_SIZE) {
    rgb = await sharp(rgb, { raw: { width, height, channels: 3 } }).resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { kernel: 'lanczos3', fit: 'fill' }).raw().toBuffer();
  }
  const plane = THUMBNAIL_SIZE * THUMBNAIL_SIZE;
  const tensor = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) for (let c = 0; c < 3; c++) tensor[c * plane + i] = rgb[i * 3 + c]! / 255;
  return tensor;
}

/** Runs the built-in thumbnail model (or an operator pack of the same name) on a decoded raster, when the gate admits it. */
export async function runThumbnailModel(raster: Raster, modelsDir?: string | null): Promise<ThumbnailSignal> {
  const { model, problems } = await loadModel(THUMBNAIL_MODEL, modelsDir);
  if (!model) return absentThumbnailModel('the thumbnail model is not installed or failed to load', problems);
  const input = model.descriptor.input as ThumbnailInput;
  if (input.kind !== 'tensor' || !Number.isFinite(input.minSide) || !Number.isFinite(input.maxSide)) {
    return absentThumbnailModel('the thumbnail model descriptor declares no size gate (input.minSide, input.maxSide)');
  }
  const gate = thumbnailGate(raster.width, raster.height, input);
  if (!gate) return absentThumbnailModel(`runs only on thumbnails with both sides ${input.minSide}-${input.maxSide} px (this image is ${raster.width}x${raster.height})`);
  let tensor: Float32Array;
  try {
    tensor = await thumbnailTensor(raster);
  } catch (error) {
    return absentThumbnailModel((error as Error).message);
  }
  return score(model, tensor, raster, gate);
}

async function score(model: LoadedModel, tensor: Float32Array, raster: Raster, gate: 'native' | 'resized'): Promise<ThumbnailSignal> {
  const { descriptor } = model;
  const input = descriptor.input as ThumbnailInput;
  const [logit] = await runModel(model, tensor, [1, 3, THUMBNAIL_SIZE, THUMBNAIL_SIZE]);
  const { a, b } = descriptor.calibration ?? { a: 1, b: 0 };
  const logOdds = a * logit! + b;
  const probability = sigmoid(logOdds);
  const thresholds = descriptor.thresholds ?? null;
  const validated = Boolean(thresholds && (thresholds.authentic > 0 || thresholds.manipulated < 1));
  const [decideWidth, decideHeight] = input.decideSize ?? [THUMBNAIL_SIZE, THUMBNAIL_SIZE];
  const inDomain = raster.width === decideWidth && raster.height === decideHeight;
  const decides = validated && inDomain;
  const weight = decides ? descriptor.weight : 0;
  return {
    probability,
    logOdds,
    thresholds,
    decides,
    weight,
    signal: {
      id: `model:${THUMBNAIL_MODEL}`,
      label: LABEL,
      score: round4(probability),
      weight,
      evidence: {
        model: `${descriptor.name} ${descriptor.version}`,
        origin: model.origin,
        input: gate === 'native' ? '32x32 as decoded' : `${raster.width}x${raster.height} resized to 32x32 (Lanczos 3)`,
        logit: round4(logit!),
        ...(thresholds && { thresholds }),
        ...(!validated && { decides: false, reason: 'no validated thresholds (0 / 1): reported, not weighed' }),
        ...(validated && !inDomain && {
          decides: false,
          reason: `its calibration and thresholds were validated on ${decideWidth}x${decideHeight} images only; a ${raster.width}x${raster.height} thumbnail is reported, not weighed`,
        }),
      },
    },
  };
}
