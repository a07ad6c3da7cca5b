/**
 * Face-forgery model: Self-Blended Images (Shiohara & Yamasaki, "Detecting Deepfakes with
 * Self-Blended Images", CVPR 2022). A small CNN trained here on real faces and pseudo-fakes made
 * by blending each face onto a jittered copy of itself (training/face-forgery/). It scores one
 * face crop: a square around the face box this project's detector (@vladmandic/human) draws, of
 * the share of the box the training crops had (the descriptor's `input.faceCropShare`: v10 sees
 * the whole face, 0.9 of the box; CROP_SHARE when absent). The model converts its
 * RGB input to luma itself (its training photos are greyscale), so colour is never a cue.
 *
 * For video, `assessFaceForgery` scores every tracked face in every sampled frame and
 * aggregates each participant's calibrated per-frame probabilities with a trimmed mean (one bad
 * frame, a blur or a half-detected face, cannot swing it). The result is one cited signal; it
 * may decide only when the model's unseen-identity validation AUC reaches
 * DECIDING_VALIDATION_AUC, otherwise it is reported with weight 0.
 */
import { round4 } from '../result.js';
import type { Signal } from '../types.js';
import type { Raster } from '../image/image-input.js';
import { squareAroundBox } from './image-input.js';
import { BUILT_IN_MODELS_DIR, type ImageInput, type LoadedModel, type ModelProblem, imageTensor, loadModel, modelNotRunSignal, outputProbability, runImageModel, runModel } from '../model-pack.js';

export const FACE_FORGERY_MODEL = 'face-forgery-sbi';
/**
 * Crop side as a share of the larger side of the face box (measured on the training photos) when the
 * descriptor does not name one (`input.faceCropShare`; v1-v9 were trained on this tight crop).
 */
export const CROP_SHARE = 0.6;
/** The model's signal may decide a verdict only from this unseen-identity validation AUC up. */
export const DECIDING_VALIDATION_AUC = 0.85;
/** A participant is judged by the model only when scored in at least this many frames. */
export const MIN_FRAMES_TO_DECIDE = 3;
/** Share of the per-frame probabilities dropped at each end before averaging. */
export const TRIM = 0.2;
/** Faces smaller than this (box side, analysis pixels) are not scored: too few pixels for blending traces. */
export const MIN_FACE_SIDE = 48;

export const FACE_FORGERY_CITATION = 'L. Shiohara, T. Yamasaki, "Detecting Deepfakes with Self-Blended Images", CVPR 2022';

export function loadFaceForgeryModel(modelsDir?: string | null, builtInDir = BUILT_IN_MODELS_DIR) {
  return loadModel(FACE_FORGERY_MODEL, modelsDir, builtInDir);
}

/** The square face crop the model was trained on, edge-padded where it leaves the image. */
export function faceCrop(image: { data: Uint8Array; width: number; height: number; channels?: number }, box: readonly [number, number, number, number], share = CROP_SHARE): Promise<Raster> {
  return squareAroundBox(image, box, Math.max(8, Math.round(share * Math.max(box[2], box[3]))));
}

/** The crop share a loaded face-forgery model was trained with. */
export function cropShareOf(model: LoadedModel): number {
  return (model.descriptor.input as ImageInput).faceCropShare ?? CROP_SHARE;
}

/** Calibrated probability (0..1) that the face in this crop is blended / swapped. */
export function scoreFaceCrop(model: LoadedModel, crop: Raster): Promise<number> {
  return runImageModel(model, crop);
}

/** Calibrated probabilities for several crops in one batched run of the model. */
export async function scoreFaceCrops(model: LoadedModel, crops: Raster[]): Promise<number[]> {
  if (!crops.length) return [];
  const input = model.descriptor.input as ImageInput;
  const size = 3 * input.width * input.height;
  const tensor = new Float32Array(crops.length * size);
  for (const [i, crop] of crops.entries()) tensor.set(await imageTensor(crop, input), i * size);
  const dims = input.layout === 'NCHW' ? [crops.length, 3, input.height, input.width] : [crops.length, input.height, input.width, 3];
  const values = await runModel(model, tensor, dims);
  const per = values.length / crops.length;
  return crops.map((_, i) => outputProbability(values.subarray(i * per, (i + 1) * per), model.descriptor));
}

/** Mean after dropping floor(n · trim) values at each end (the median's robustness, the mean's smoothness). */
export function trimmedMean(values: readonly number[], trim = TRIM): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const cut = Math.min(Math.floor(sorted.length * trim), Math.floor((sorted.length - 1) / 2));
  const kept = sorted.slice(cut, sorted.length - cut);
  return kept.reduce((sum, v) => sum + v, 0) / kept.length;
}

export type ModelDecision = 'authentic' | 'manipulated' | 'inconclusive';

export interface ParticipantForgery {
  id: number;
  framesScored: number;
  /** Trimmed mean of the calibrated per-frame probabilities; null when no frame could be scored. */
  probability: number | null;
  /** Per observation of the track (same order), null where the face was too small to score. */
  frameProbabilities: Array<number | null>;
  decision: ModelDecision;
}

export interface FaceForgeryAssessment {
  signal: Signal;
  /** The signal counts towards the verdict (validation AUC high enough, model loaded). */
  decides: boolean;
  participants: ParticipantForgery[];
  /** Some participant is over the manipulated threshold (only when `decides`). */
  manipulated: boolean;
  /** Every participant was scored and is under the authentic threshold (only when `decides`). */
  authentic: boolean;
}

/** What the assessment needs of a face track: its id and, per observation, the frame and the box. */
export interface ScorableTrack {
  id: number;
  observations: ReadonlyArray<{ frame: number; face: { boxAnalysisPixels: [number, number, number, number] } }>;
}

const LABEL = 'Blending traces in each tracked face (self-blended-images model, Shiohara & Yamasaki, CVPR 2022): trimmed mean of calibrated per-frame probabilities';

function validationAuc(model: LoadedModel): number | null {
  const figures = (model.descriptor.training as { figures?: { valAuc?: unknown } } | undefined)?.figures;
  return typeof figures?.valAuc === 'number' ? figures.valAuc : null;
}

/** Why the signal does not decide: each gate it fails, and the descriptor's own reason for a weight of 0. */
function notDecidingReasons(auc: number | null, thresholds: unknown, descriptor: LoadedModel['descriptor']): string[] {
  const reasons: string[] = [];
  if (auc === null || auc < DECIDING_VALIDATION_AUC) reasons.push(`validation AUC ${auc ?? 'unknown'} is under ${DECIDING_VALIDATION_AUC}`);
  if (!thresholds) reasons.push('the model has no decision thresholds');
  if (descriptor.weight <= 0) reasons.push(String(descriptor.training?.notWeighedBecause ?? 'its descriptor gives it no weight'));
  return reasons;
}

function absent(reason: string, problems?: ModelProblem[]): FaceForgeryAssessment {
  return {
    signal: modelNotRunSignal(FACE_FORGERY_MODEL, LABEL, reason, problems, { citation: FACE_FORGERY_CITATION }),
    decides: false,
    participants: [],
    manipulated: false,
    authentic: false,
  };
}

/**
 * Scores every observation of every track with the face-forgery model and aggregates per
 * participant. Never throws for a missing or broken model: the signal then says why it is absent.
 */
export async function assessFaceForgery(
  tracks: readonly ScorableTrack[],
  frames: ReadonlyArray<{ data: Uint8Array; width: number; height: number }>,
  modelsDir: string | null | undefined,
  abort?: AbortSignal,
  builtInDir = BUILT_IN_MODELS_DIR,
): Promise<FaceForgeryAssessment> {
  let loaded: Awaited<ReturnType<typeof loadFaceForgeryModel>>;
  try {
    loaded = await loadFaceForgeryModel(modelsDir, builtInDir);
  } catch (error) {
    return absent(`the face-forgery model failed to load: ${(error as Error).message}`);
  }
  const { model, problems } = loaded;
  if (!model) return absent('the face-forgery model is not installed or failed to load; the other signals stand', problems);
  const { descriptor } = model;
  const thresholds = descriptor.thresholds ?? null;
  const auc = validationAuc(model);
  const decides = Boolean(thresholds && auc !== null && auc >= DECIDING_VALIDATION_AUC && descriptor.weight > 0);
  const share = cropShareOf(model);

  const participants: ParticipantForgery[] = [];
  try {
    for (const track of tracks) {
      const crops: Raster[] = [];
      const scoredAt: number[] = [];
      for (const [i, observation] of track.observations.entries()) {
        const box = observation.face.boxAnalysisPixels;
        const frame = frames[observation.frame];
        if (!frame || Math.max(box[2], box[3]) < MIN_FACE_SIDE) continue;
        crops.push(await faceCrop(frame, box, share));
        scoredAt.push(i);
      }
      abort?.throwIfAborted();
      const probabilities = await scoreFaceCrops(model, crops);
      const frameProbabilities: Array<number | null> = track.observations.map(() => null);
      scoredAt.forEach((index, k) => (frameProbabilities[index] = round4(probabilities[k]!)));
      const probability = probabilities.length ? round4(trimmedMean(probabilities)) : null;
      const decision: ModelDecision =
        probability === null || !thresholds || probabilities.length < MIN_FRAMES_TO_DECIDE
          ? 'inconclusive'
          : probability >= thresholds.manipulated
            ? 'manipulated'
            : probability < thresholds.authentic
              ? 'authentic'
              : 'inconclusive';
      participants.push({ id: track.id, framesScored: probabilities.length, probability, frameProbabilities, decision });
    }
  } catch (error) {
    if (abort?.aborted) throw error;
    return absent(`the face-forgery model failed on this video: ${(error as Error).message}`);
  }

  const scored = participants.filter((p) => p.probability !== null);
  // The video is as suspicious as its most suspicious participant.
  const score = scored.length ? Math.max(...scored.map((p) => p.probability!)) : null;
  const manipulated = decides && participants.some((p) => p.decision === 'manipulated');
  const authentic = decides && participants.length > 0 && participants.every((p) => p.decision === 'authentic');
  const weight = decides && score !== null ? descriptor.weight : 0;
  return {
    signal: {
      id: `model:${FACE_FORGERY_MODEL}`,
      label: LABEL,
      score,
      weight,
      evidence: {
        citation: FACE_FORGERY_CITATION,
        model: `${descriptor.name} ${descriptor.version}`,
        origin: model.origin,
        validationAuc: auc,
        thresholds,
        aggregation: `trimmed mean (${TRIM * 100} % off each end) of calibrated per-frame probabilities over frames with a face of at least ${MIN_FACE_SIDE} px`,
        decides,
        ...(!decides && { note: `reported with weight 0: ${notDecidingReasons(auc, thresholds, descriptor).join('; ')}` }),
        participants: participants.map(({ id, framesScored, probability, decision }) => ({ id, framesScored, probability, decision })),
      },
    },
    decides,
    participants,
    manipulated,
    authentic,
  };
}
