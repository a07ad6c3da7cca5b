/**
 * face-intelligence (task type 8): every face of an image or video with age, gender,
 * emotion, liveness and spoof assessment; with a `reference` image, verification of the
 * main face against the reference's largest face.
 *
 * Parameters (DESIGN.md §2):
 * - `isLivenessCheck` (default true): per-face liveness/spoof assessment (liveness.ts; for an
 *   image, with face-liveness-detection's trained models, so both answer alike).
 * - `isSimilarityCheck` (default true): verification against the `reference` slot when sent.
 * - `isFaceswapCheck` (default false): for videos, per-person temporal consistency of
 *   identity and landmarks (temporal-consistency.ts); images cannot show it.
 * - `isSingleFace` (default false): report only the main face (largest; in a video the
 *   person seen in most frames).
 * - `maxFrames` (1..48, default 12): frames sampled evenly from a video.
 * - `detectSmallFaces` (default false, images only): also search 2×2 tiles of the image for
 *   small faces (group photos); about five times slower.
 */
import { extname } from 'node:path';
import type { Detector, DetectorFile, DetectorInput, DetectorOutput } from '../types.js';
import { MediaError } from '../types.js';
import { round4 } from '../result.js';
import { analyseFaces, type AnalysedFace } from './face-analysis.js';
import { buildTracks, type FaceTrack } from './face-tracks.js';
import { loadHuman } from './human-runtime.js';
import { decodeImage } from './image-input.js';
import { assessLiveness, decideSpoof, loadLivenessModels, type LivenessAssessment, type LivenessModels } from './liveness.js';
import { booleanParameter, integerParameter, slotFile } from './parameters.js';
import { assessTemporalConsistency } from './temporal-consistency.js';
import { unverified, verify } from './verification.js';
import { damagedSeeksReport, DEFAULT_FRAMES, MAX_FRAMES, sampleFrames } from './video-frames.js';

const NAME = 'face-intelligence';
const VERSION = '1.0.0';
const VIDEO_EXTENSIONS = new Set(['.mp4', '.mov', '.webm', '.m4v', '.mkv']);

type Spoof = Pick<LivenessAssessment, 'isSpoof' | 'score' | 'confidence' | 'verdict'>;

function isVideo(file: DetectorFile): boolean {
  return file.contentType.toLowerCase().startsWith('video/') || VIDEO_EXTENSIONS.has(extname(file.fileName).toLowerCase());
}

function topEmotion(face: AnalysedFace) {
  return face.emotion[0] ? { emotion: face.emotion[0].emotion, score: face.emotion[0].score } : null;
}

function spoofOf(assessment: LivenessAssessment | null): Spoof | null {
  if (!assessment) return null;
  const { isSpoof, score, confidence, verdict } = assessment;
  return { isSpoof, score, confidence, verdict };
}

function imageFaceRecord(face: AnalysedFace, assessment: LivenessAssessment | null) {
  return {
    box: face.box,
    detectionScore: face.detectionScore,
    age: face.age,
    gender: face.gender?.label ?? null,
    genderScore: face.gender?.score ?? null,
    emotion: topEmotion(face),
    emotions: face.emotion,
    liveness: assessment ? round4(1 - assessment.score) : null,
    spoof: spoofOf(assessment),
    pose: face.pose,
    landmarks: face.landmarks,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)]! : null;
};

/** One person across the sampled frames of a video. */
function trackRecord(track: FaceTrack<LivenessAssessment | null>) {
  const faces = track.observations.map((o) => o.face);
  const largest = [...track.observations].sort((a, b) => b.face.box[2] * b.face.box[3] - a.face.box[2] * a.face.box[3])[0]!;
  const genders = faces.filter((f) => f.gender && f.gender.label !== 'unknown').map((f) => f.gender!);
  const maleVotes = genders.filter((g) => g.label === 'male').length;
  const gender = genders.length === 0 ? null : maleVotes * 2 >= genders.length ? 'male' : 'female';
  const emotionCounts = new Map<string, number>();
  for (const face of faces) {
    const top = face.emotion[0]?.emotion;
    if (top) emotionCounts.set(top, (emotionCounts.get(top) ?? 0) + 1);
  }
  const emotion = [...emotionCounts.entries()].sort((a, b) => b[1] - a[1])[0];
  const assessments = track.observations.map((o) => o.extra).filter((a): a is LivenessAssessment => a !== null);
  let spoof: Spoof | null = null;
  if (assessments.length) {
    const score = assessments.reduce((sum, a) => sum + a.score, 0) / assessments.length;
    const reliability = assessments.reduce((sum, a) => sum + a.reliability, 0) / assessments.length;
    spoof = { score: round4(score), ...decideSpoof(score, reliability) };
  }
  return {
    id: track.id,
    box: largest.face.box,
    bestFrameSeconds: largest.timeSeconds,
    framesSeen: track.observations.length,
    firstSeenSeconds: track.observations[0]!.timeSeconds,
    lastSeenSeconds: track.observations.at(-1)!.timeSeconds,
    age: median(faces.map((f) => f.age).filter((a): a is number => a !== null)),
    gender,
    genderAgreement: genders.length ? round4(Math.max(maleVotes, genders.length - maleVotes) / genders.length) : null,
    emotion: emotion ? { emotion: emotion[0], frames: emotion[1] } : null,
    liveness: spoof ? round4(1 - spoof.score) : null,
    spoof,
  };
}

async function assessAll(image: Parameters<typeof assessLiveness>[0], faces: AnalysedFace[], enabled: boolean, signal: AbortSignal, models?: LivenessModels) {
  const assessments: Array<LivenessAssessment | null> = [];
  for (const face of faces) {
    assessments.push(enabled ? await assessLiveness(image, face, models) : null);
    signal.throwIfAborted();
  }
  return assessments;
}

const detector: Detector = {
  name: NAME,
  version: VERSION,
  async load() {
    await loadHuman();
  },
  async analyze(input: DetectorInput, signal: AbortSignal): Promise<DetectorOutput> {
    const checks = {
      liveness: booleanParameter(input.parameters, 'isLivenessCheck', true),
      similarity: booleanParameter(input.parameters, 'isSimilarityCheck', true),
      faceswap: booleanParameter(input.parameters, 'isFaceswapCheck', false),
      singleFace: booleanParameter(input.parameters, 'isSingleFace', false),
      smallFaces: booleanParameter(input.parameters, 'detectSmallFaces', false),
    };
    const maxFrames = integerParameter(input.parameters, 'maxFrames', DEFAULT_FRAMES, 1, MAX_FRAMES);
    const original = slotFile(input.files, 'original');
    if (!original) throw new MediaError('the original file is missing');
    const reference = slotFile(input.files, 'reference');
    const notes: string[] = [];

    let faces: unknown[];
    let mainEmbedding: number[] | null = null;
    let media: Record<string, unknown>;
    let faceswap: unknown;

    if (isVideo(original)) {
      const video = await sampleFrames(original.path, maxFrames, signal);
      const frames = [];
      for (const frame of video.frames) {
        const detected = await analyseFaces(frame, { emotion: true, spoof: checks.liveness });
        signal.throwIfAborted();
        const assessments = await assessAll(frame, detected, checks.liveness, signal);
        frames.push({ timeSeconds: frame.timeSeconds, faces: detected.map((face, i) => ({ face, extra: assessments[i]! })) });
      }
      const tracks = buildTracks(frames);
      const kept = checks.singleFace ? tracks.slice(0, 1) : tracks;
      faces = kept.map(trackRecord);
      mainEmbedding = tracks[0]?.centroid ?? null;
      media = {
        type: 'video',
        durationSeconds: round4(video.durationSeconds),
        width: video.width,
        height: video.height,
        framesAnalysed: video.frames.length,
        frameTimesSeconds: video.frames.map((f) => f.timeSeconds),
        ...damagedSeeksReport(video.damagedSeeks),
      };
      faceswap = checks.faceswap ? assessTemporalConsistency(kept) : undefined;
    } else {
      const image = await decodeImage(original.path);
      signal.throwIfAborted();
      const detected = await analyseFaces(image, { emotion: true, spoof: checks.liveness }, checks.smallFaces);
      signal.throwIfAborted();
      const kept = checks.singleFace ? detected.slice(0, 1) : detected;
      // A still is judged as face-liveness-detection judges it, with the same trained models
      // (video frames are not: the models were never measured on them).
      const models = checks.liveness ? await loadLivenessModels(input.modelsDir) : undefined;
      const assessments = await assessAll(image, kept, checks.liveness, signal, models);
      faces = kept.map((face, i) => imageFaceRecord(face, assessments[i]!));
      mainEmbedding = detected[0]?.embedding ?? null;
      media = { type: 'image', width: image.originalWidth, height: image.originalHeight };
      if (checks.faceswap) {
        faceswap = { verdict: 'inconclusive', reason: 'the faceswap check needs a video: one still image shows no temporal consistency' };
      }
    }
    if (faces.length === 0) notes.push('no face was found in the original');

    let verification: unknown;
    if (checks.similarity && reference) {
      const referenceImage = await decodeImage(reference.path);
      const referenceFace = (await analyseFaces(referenceImage, { emotion: false, spoof: false }))[0];
      signal.throwIfAborted();
      if (!referenceFace?.embedding) {
        verification = unverified('no face was found in the reference image');
      } else if (!mainEmbedding) {
        verification = unverified('no face was found in the original');
      } else {
        verification = { ...verify(mainEmbedding, referenceFace.embedding), referenceBox: referenceFace.box };
      }
    } else if (checks.similarity && !reference) {
      notes.push('no reference image was sent, so no verification was made');
    }

    return {
      result: {
        faces,
        faceCount: faces.length,
        ...(verification !== undefined ? { verification } : {}),
        ...(faceswap !== undefined ? { faceswap } : {}),
        media,
        checks,
        analysisDetails: {
          detector: { name: NAME, version: VERSION },
          signals: [],
          models: {
            detection: 'blazeface + facemesh (Human 3.3.6)',
            ageGenderEmbedding: 'faceres (Human 3.3.6)',
            emotion: 'emotion (Human 3.3.6)',
            liveness: 'antispoof + liveness (Human 3.3.6) fused with moiré, specular and blur cues',
          },
          ...(notes.length ? { notes } : {}),
        },
      },
    };
  },
};

export default detector;
