/**
 * Learned context model of presentation attacks (face-liveness-context): where the patch model
 * (liveness-model.ts) looks inside the face for the medium's texture, this one looks around it,
 * at a crop a few times the face box, where a held-up attack shows its frame: the edge of the
 * paper, a screen's bezel, fingers holding it, a second background inside the scene, the
 * perspective of a flat plane. The multi-scale context crop follows the practice of
 * face-anti-spoofing systems that feed a small CNN a patch 2-4x the face box (surveyed in Z. Yu
 * et al., "Deep Learning for Face Anti-Spoofing: A Survey", IEEE TPAMI 2023). Trained
 * here on real faces and attacks composed into scenes (training/liveness-context/); luma only.
 *
 * Crop geometry (from the descriptor's `input`; the training crops had the same): a square of
 * `contextScale` × the larger side of the face box, centred on the box centre, shifted to lie
 * inside the image and, when the image is smaller, shrunk to the largest square that fits: it
 * is never padded, because padding is something no camera frame has. Resized to `side`.
 */
import sharp from 'sharp';
import { round4 } from '../result.js';
import { BUILT_IN_MODELS_DIR, type LoadedModel, type TensorInput, loadModel, outputProbability, runModel } from '../model-pack.js';
import type { RgbImage } from './human-runtime.js';
import type { Box } from './liveness-cues.js';

export const LIVENESS_CONTEXT_MODEL = 'face-liveness-context';
export const LIVENESS_CONTEXT_CITATION = 'Z. Yu, Y. Qin, X. Li, C. Zhao, Z. Lei, G. Zhao, "Deep Learning for Face Anti-Spoofing: A Survey", IEEE TPAMI 2023 (context around the face as a presentation-attack cue)';

export interface ContextGeometry {
  contextScale: number;
  side: number;
  /** Faces whose box is smaller than this (pixels of the decoded image) are not scored. */
  minFaceSide: number;
}

const DEFAULT_GEOMETRY: ContextGeometry = { contextScale: 2, side: 112, minFaceSide: 48 };

export function contextGeometryOf(model: LoadedModel): ContextGeometry {
  const input = model.descriptor.input as TensorInput;
  const read = (key: keyof ContextGeometry) => (Number.isFinite(Number(input[key])) && Number(input[key]) > 0 ? Number(input[key]) : DEFAULT_GEOMETRY[key]);
  return { contextScale: read('contextScale'), side: read('side'), minFaceSide: read('minFaceSide') };
}

/** The model, or why it is absent (the loader never throws: the detector's other evidence still works). */
export function loadLivenessContextModel(modelsDir?: string | null, builtInDir = BUILT_IN_MODELS_DIR) {
  return loadModel(LIVENESS_CONTEXT_MODEL, modelsDir, builtInDir);
}

/** The square (left, top, side) that the context crop takes from the image. */
export function contextSquare(imageWidth: number, imageHeight: number, box: Box, contextScale: number): ContextSquare {
  const side = Math.max(1, Math.min(Math.round(contextScale * Math.max(box[2], box[3])), imageWidth, imageHeight));
  const centreX = box[0] + box[2] / 2, centreY = box[1] + box[3] / 2;
  const left = Math.min(imageWidth - side, Math.max(0, Math.round(centreX - side / 2)));
  const top = Math.min(imageHeight - side, Math.max(0, Math.round(centreY - side / 2)));
  return { left, top, side };
}

export interface ContextSquare {
  left: number;
  top: number;
  side: number;
}

/**
 * The luma context crop ([1, 1, side, side], 0..1) of a face and the square of the image it was
 * cut from, or null when the face is too small to judge.
 */
export async function contextCrop(image: RgbImage, box: Box, geometry: ContextGeometry = DEFAULT_GEOMETRY): Promise<{ pixels: Float32Array; square: ContextSquare } | null> {
  if (Math.max(box[2], box[3]) < geometry.minFaceSide) return null;
  const square = contextSquare(image.width, image.height, box, geometry.contextScale);
  const { data } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .extract({ left: square.left, top: square.top, width: square.side, height: square.side })
    .resize(geometry.side, geometry.side, { fit: 'fill', kernel: 'cubic' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const plane = geometry.side * geometry.side;
  const out = new Float32Array(plane);
  // Luma rounded to a byte, as the training crops were stored.
  for (let i = 0; i < plane; i++) out[i] = Math.round(0.299 * data[3 * i]! + 0.587 * data[3 * i + 1]! + 0.114 * data[3 * i + 2]!) / 255;
  return { pixels: out, square };
}

export interface ContextScore {
  /** Calibrated probability that the face is a presentation attack. */
  probability: number;
  logit: number;
  /** The part of the image the model saw, in image pixels. */
  crop: ContextSquare;
}

export async function scoreContext(model: LoadedModel, image: RgbImage, box: Box): Promise<ContextScore | null> {
  const geometry = contextGeometryOf(model);
  const crop = await contextCrop(image, box, geometry);
  if (!crop) return null;
  const [logit] = await runModel(model, crop.pixels, [1, 1, geometry.side, geometry.side]);
  return { probability: outputProbability([logit!], model.descriptor), logit: round4(logit!), crop: crop.square };
}
