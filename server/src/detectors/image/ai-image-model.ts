/**
 * The learned AI-image model (server/models/ai-image-patches.onnx, trained by
 * training/ai-image/, v2): a small CNN on 256×256 square views of the whole image, RGB beside a
 * high-pass residual computed inside the network.
 *
 * v1 read 64×64 native-resolution patches through the NPR residual (Tan et al., CVPR 2024) and
 * did not learn (validation AUC 0.565): its training set was resized to 256×256 by its authors,
 * which erases the up-sampling trace, and a 64×64 tile of a 12 MP photo looks nothing like one of
 * a 256×256 thumbnail. v2 therefore sees every image the way its training data was made: square
 * views down-scaled to 256×256 with Lanczos 3. It reads content, colour and texture at that scale,
 * not a generator's pixel-level trace, so it is a learned signal with validation-chosen
 * thresholds, not proof.
 *
 * Views: n = min(3, ⌈long/short − 0.01⌉) squares of side `short`, evenly spaced along the long
 * side; each resized to 256×256 (Lanczos 3, skipped when already 256). The image's logit is the
 * mean of the view logits, Platt-calibrated with the thresholds chosen on the training set's
 * validation split (descriptor `calibration`, `thresholds`). This file must cut views exactly as
 * training/ai-image/common.py does (the resampler is libvips' here, Pillow's there: training
 * augments with five kernels so that difference does not matter).
 */
import sharp from 'sharp';
import type { Signal } from '../types.js';
import { round4 } from '../result.js';
import { loadModel, modelNotRunSignal, outputProbability, runModel, type LoadedModel, type ModelProblem } from '../model-pack.js';
import type { Raster } from './image-input.js';

export const AI_IMAGE_MODEL = 'ai-image-patches';
export const VIEW = 256;
const MAX_VIEWS = 3;
/** Images whose short side is under this are not scored: far outside the training domain. */
export const MIN_SIDE = 128;

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

/** (left, top, side) of each square view, as training/ai-image/common.py view_boxes. */
export function viewBoxes(width: number, height: number): Array<{ left: number; top: number; side: number }> {
  const side = Math.min(width, height), long = Math.max(width, height);
  const n = Math.min(MAX_VIEWS, Math.max(1, Math.ceil(long / side - 0.01)));
  const offsets = n === 1 ? [0] : Array.from({ length: n }, (_, i) => Math.round((i * (long - side)) / (n - 1)));
  return offsets.map((o) => (width >= height ? { left: o, top: 0, side } : { left: 0, top: o, side }));
}

/** The square views of an 8-bit raster (grey replicated, alpha dropped) as a [n, 3, 256, 256] tensor in [0, 1]. */
export async function selectViews(raster: Raster): Promise<{ tensor: Float32Array; count: number }> {
  const { width, height, channels, data } = raster;
  let rgb = data;
  if (channels !== 3) {
    rgb = Buffer.alloc(width * height * 3);
    for (let i = 0, p = 0; i < width * height; i++, p += channels) {
      for (let c = 0; c < 3; c++) rgb[i * 3 + c] = data[channels < 3 ? p : p + c]!;
    }
  }
  const boxes = viewBoxes(width, height);
  const plane = VIEW * VIEW;
  const tensor = new Float32Array(boxes.length * 3 * plane);
  for (const [n, { left, top, side }] of boxes.entries()) {
    let view = sharp(rgb, { raw: { width, height, channels: 3 }, limitInputPixels: false }).extract({ left, top, width: side, height: side });
    if (side !== VIEW) view = view.resize(VIEW, VIEW, { kernel: 'lanczos3', fit: 'fill' });
    const pixels = await view.raw().toBuffer();
    for (let i = 0; i < plane; i++) for (let c = 0; c < 3; c++) tensor[n * 3 * plane + c * plane + i] = pixels[i * 3 + c]! / 255;
  }
  return { tensor, count: boxes.length };
}

export function meanLogit(values: ArrayLike<number>): number {
  return Array.from(values).reduce((a, b) => a + b, 0) / values.length;
}

const LABEL = 'Learned image model on 256x256 views (RGB and high-pass residual; trained on dataset10000, v2)';

export function absentModel(reason: string, problems?: ModelProblem[]): ModelSignal {
  return {
    probability: null,
    logit: null,
    thresholds: null,
    decides: false,
    weight: 0,
    signal: modelNotRunSignal(AI_IMAGE_MODEL, LABEL, reason, problems),
  };
}

/**
 * Runs the built-in image model (or an operator pack of the same name) on a decoded raster.
 * The raster must be 8-bit, stored orientation, 1–4 channels (grey is replicated, alpha
 * ignored): the one decoder, image-input.ts, guarantees that; this checks it again.
 */
export async function runAiImageModel(raster: Raster & { scale?: number }, modelsDir?: string | null): Promise<ModelSignal> {
  const { model, problems } = await loadModel(AI_IMAGE_MODEL, modelsDir);
  if (!model) return absentModel('the AI-image model is not installed or failed to load', problems);
  if (!(raster.channels >= 1 && raster.channels <= 4) || raster.data.length !== raster.width * raster.height * raster.channels) {
    return absentModel(`unsupported raster (${raster.channels} channels, ${raster.data.length} bytes for ${raster.width}x${raster.height})`);
  }
  if (Math.min(raster.width, raster.height) < MIN_SIDE) return absentModel(`image side under ${MIN_SIDE} px: too far below the model's ${VIEW}x${VIEW} training views`);
  return scoreViews(model, raster);
}

async function scoreViews(model: LoadedModel, raster: Raster & { scale?: number }): Promise<ModelSignal> {
  const { tensor, count } = await selectViews(raster);
  const logits = await runModel(model, tensor, [count, 3, VIEW, VIEW]);
  const logit = meanLogit(logits);
  const probability = outputProbability([logit], model.descriptor);
  const { descriptor } = model;
  const thresholds = descriptor.thresholds ?? null;
  const validated = Boolean(thresholds && (thresholds.authentic > 0 || thresholds.manipulated < 1));
  // The thresholds were chosen on images of the training domain (thumbnails of at most
  // `decideMaxShortSide` px before their 256-px resize); on larger images (camera photos) the
  // score is reported, not weighed.
  const maxSide = (descriptor.input as { decideMaxShortSide?: number }).decideMaxShortSide;
  const inDomain = maxSide === undefined || Math.min(raster.width, raster.height) <= maxSide;
  const decides = validated && inDomain;
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
        views: count,
        viewSize: VIEW,
        meanLogit: round4(logit),
        viewLogits: Array.from(logits, (v) => round4(v)),
        ...(thresholds && { thresholds }),
        ...(!validated && { decides: false, reason: 'on its validation split no score range was pure enough to decide (thresholds 0 / 1): reported, not weighed' }),
        ...(validated && !inDomain && {
          decides: false,
          reason: `short side ${Math.min(raster.width, raster.height)} px is over the ${maxSide} px its thresholds were validated for (training and validation images are resized thumbnails): reported, not weighed`,
        }),
        ...(raster.scale !== undefined && raster.scale < 1 && { note: `image over the full-resolution limit: views cut from a copy scaled by ${round4(raster.scale)}` }),
      },
    },
  };
}
