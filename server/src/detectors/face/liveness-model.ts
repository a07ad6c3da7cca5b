/**
 * Learned presentation-attack model (face-liveness-pad), after the patch stream of Y. Atoum,
 * Y. Liu, A. Jourabloo, X. Liu, "Face Anti-Spoofing Using Patch and Depth-Based CNNs", IJCB 2017,
 * §3.1: a CNN scores small patches of the face at native resolution, where the medium's own
 * texture lives (print halftone and dithering, a screen's subpixel moiré), and the face's
 * score is the mean of its patches' scores. Trained here on real faces and simulated prints and
 * replays (training/liveness/); it sees luma only, so colour is never a cue.
 *
 * Patch geometry (read from the descriptor's `input`, the training crops had the same): faces
 * whose box is larger than `maxFaceSide` are downscaled to it, never upscaled; `patch`-pixel
 * patches are cut around the box centre, offset = min(`maxOffset`, `offsetShare` × box side):
 * `patchLayout` "five" (the centre and ±offset diagonally) or "grid3" (a 3×3 grid at −offset,
 * 0, +offset).
 */
import sharp from 'sharp';
import { round4 } from '../result.js';
import { BUILT_IN_MODELS_DIR, type LoadedModel, type TensorInput, loadModel, outputProbability, runModel } from '../model-pack.js';
import type { RgbImage } from './human-runtime.js';
import type { Box } from './liveness-cues.js';
import { squareAroundBox } from './image-input.js';

export const LIVENESS_MODEL = 'face-liveness-pad';
export const LIVENESS_MODEL_CITATION = 'Y. Atoum, Y. Liu, A. Jourabloo, X. Liu, "Face Anti-Spoofing Using Patch and Depth-Based CNNs", IJCB 2017, §3.1 (patch-based CNN)';

export interface PatchGeometry {
  patchLayout: 'five' | 'grid3';
  patch: number;
  maxFaceSide: number;
  minFaceSide: number;
  offsetShare: number;
  maxOffset: number;
}

const DEFAULT_GEOMETRY: PatchGeometry = { patchLayout: 'five', patch: 128, maxFaceSide: 512, minFaceSide: 160, offsetShare: 0.125, maxOffset: 60 };

export function geometryOf(model: LoadedModel): PatchGeometry {
  const input = model.descriptor.input as TensorInput;
  const read = (key: Exclude<keyof PatchGeometry, 'patchLayout'>) => (Number.isFinite(Number(input[key])) && Number(input[key]) > 0 ? Number(input[key]) : DEFAULT_GEOMETRY[key]);
  const patchLayout = input.patchLayout === 'grid3' ? 'grid3' : 'five';
  return { patchLayout, patch: read('patch'), maxFaceSide: read('maxFaceSide'), minFaceSide: read('minFaceSide'), offsetShare: read('offsetShare'), maxOffset: read('maxOffset') };
}

/** The model, or why it is absent (the loader never throws: the detector's other evidence still works). */
export function loadLivenessModel(modelsDir?: string | null, builtInDir = BUILT_IN_MODELS_DIR) {
  return loadModel(LIVENESS_MODEL, modelsDir, builtInDir);
}

/** The trained presentation-attack model as the caller loaded it, or why it is absent. */
export type LivenessModelState = Awaited<ReturnType<typeof loadLivenessModel>>;

/**
 * The luma patches ([5 or 9, 1, patch, patch], 0..1) of a face, or null when the face is
 * smaller than the model can judge. Where the window leaves the image its edge is repeated.
 */
export async function facePatches(image: RgbImage, box: Box, geometry: PatchGeometry = DEFAULT_GEOMETRY): Promise<Float32Array | null> {
  const faceSide = Math.max(box[2], box[3]);
  const scale = Math.min(1, geometry.maxFaceSide / faceSide);
  if (faceSide * scale < geometry.minFaceSide) return null;
  const { patch } = geometry;
  const offset = Math.min(geometry.maxOffset, Math.round(geometry.offsetShare * faceSide * scale));
  const windowSide = patch + 2 * offset;
  const sourceSide = Math.max(1, Math.round(windowSide / scale));
  const window = (await squareAroundBox(image, box, sourceSide)).data;
  const rgb =
    sourceSide === windowSide
      ? window
      : await sharp(window, { raw: { width: sourceSide, height: sourceSide, channels: 3 } }).resize(windowSide, windowSide, { fit: 'fill' }).raw().toBuffer();
  const centres: Array<[number, number]> =
    geometry.patchLayout === 'grid3'
      ? [-1, 0, 1].flatMap((dy) => [-1, 0, 1].map((dx) => [dx * offset, dy * offset] as [number, number]))
      : [[0, 0], [-offset, -offset], [offset, -offset], [-offset, offset], [offset, offset]];
  const plane = patch * patch;
  const out = new Float32Array(centres.length * plane);
  centres.forEach(([dx, dy], k) => {
    const x0 = offset + dx, y0 = offset + dy;
    for (let y = 0; y < patch; y++) {
      for (let x = 0; x < patch; x++) {
        const i = ((y0 + y) * windowSide + x0 + x) * 3;
        out[k * plane + y * patch + x] = (0.299 * rgb[i]! + 0.587 * rgb[i + 1]! + 0.114 * rgb[i + 2]!) / 255;
      }
    }
  });
  return out;
}

export interface LivenessModelScore {
  /** Calibrated probability that the face is a presentation attack. */
  probability: number;
  /** Mean raw logit over the patches, and each patch's logit. */
  logit: number;
  patchLogits: number[];
}

/** Scores one face: the mean of its patches' logits, then the descriptor's calibration. */
export async function scoreFace(model: LoadedModel, image: RgbImage, box: Box): Promise<LivenessModelScore | null> {
  const geometry = geometryOf(model);
  const patches = await facePatches(image, box, geometry);
  if (!patches) return null;
  const count = patches.length / (geometry.patch * geometry.patch);
  const logits = Array.from(await runModel(model, patches, [count, 1, geometry.patch, geometry.patch]));
  const logit = logits.reduce((sum, v) => sum + v, 0) / logits.length;
  return { probability: outputProbability([logit], model.descriptor), logit, patchLogits: logits.map(round4) };
}
