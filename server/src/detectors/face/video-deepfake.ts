/**
 * The shared core of faceswap-detection (4) and ekyc-deepfake (11): sample frames, find and
 * track every face, and judge each tracked person by the temporal consistency of identity
 * and landmarks (temporal-consistency.ts), and by the face-forgery model's blending score of
 * every face crop (face-forgery.ts: Self-Blended Images, Shiohara & Yamasaki, CVPR 2022),
 * aggregated per participant over frames. eKYC adds the liveness of the subject and, with a
 * `reference` photo, whether the subject is the person of the reference.
 *
 * The temporal measurements are uncalibrated (no labelled deepfake video was available): on
 * them a detector built on this says `manipulated` only on a broken identity or a clear
 * presentation attack. The face-forgery model is calibrated on an unseen-identity validation
 * split; it decides (`manipulated` over its threshold, `authentic` when every participant is
 * under its authentic threshold and nothing else objects; in eKYC the subject must also be
 * assessed live) only when its validation AUC reaches DECIDING_VALIDATION_AUC. Otherwise it is
 * reported with weight 0 and the video is never called authentic. The subject's liveness here
 * is liveness.ts without the trained presentation-attack models (they were never measured on
 * video frames), and that evidence alone never calls a face live: so an eKYC video is not
 * cleared until a liveness model validated on selfie video has a say.
 *
 * Each participant is judged by the same rule as the video: its score, every frame's score (the
 * track and the heatmap video) and the frames that drove its verdict are its strongest evidence,
 * the identity break or, where the model decides, the model's blending probability.
 */
import sharp from 'sharp';
import type { ArtifactOutput, Detector, DetectorInput, DetectorOutput, Signal } from '../types.js';
import { MediaError } from '../types.js';
import { round4, verdictResult } from '../result.js';
import { readCaptureSigns } from './capture-signs.js';
import { renderHeatmapVideo } from './heatmap-video.js';
import { analyseFaces } from './face-analysis.js';
import { buildTracks } from './face-tracks.js';
import { assessFaceForgery, loadFaceForgeryModel, type FaceForgeryAssessment } from './face-forgery.js';
import { loadHuman, type RgbImage } from './human-runtime.js';
import { decodeImage } from './image-input.js';
import { assessLiveness, decideSpoof, type LivenessAssessment } from './liveness.js';
import { integerParameter, slotFile } from './parameters.js';
import { estimatePulse, type Box } from './rppg.js';
import { assessTemporalConsistency } from './temporal-consistency.js';
import { unverified, verify } from './verification.js';
import { damagedSeeksReport, MAX_FRAMES, sampleFrames } from './video-frames.js';
import { noiseCues, noiseSignals, sampleFramePairs } from '../video/frame-pairs.js';

export interface VideoDeepfakeOptions {
  detector: { name: string; version: string };
  /** eKYC: assess liveness of the subject and verify against the `reference` slot. */
  identityFlow: boolean;
  defaultFrames: number;
}

/** A detector over this core: the face models warmed at load, the options fixed per task type. */
export function videoDeepfakeDetector(options: VideoDeepfakeOptions): Detector {
  return {
    ...options.detector,
    async load() {
      await loadHuman();
      // Warms the model catalogue; a missing or altered model is reported per job, never fatal.
      await loadFaceForgeryModel(null);
    },
    analyze(input, signal) {
      return analyseVideoDeepfake(input, signal, options);
    },
  };
}

/** Pairs of consecutive frames read for the sensor-noise cues of an identity check. */
const SENSOR_NOISE_PAIRS = 6;

/** Heatmap videos are rendered for this many participants at most (each is one pass over the video). */
const MAX_HEATMAP_VIDEOS = 4;

/** The face with a quarter of its size as margin, as a JPEG of at most 256 pixels. */
async function faceCrop(frame: RgbImage, box: [number, number, number, number]): Promise<Uint8Array> {
  const [x, y, w, h] = box;
  const left = Math.min(frame.width - 1, Math.max(0, Math.round(x - w / 4)));
  const top = Math.min(frame.height - 1, Math.max(0, Math.round(y - h / 4)));
  const width = Math.max(1, Math.min(frame.width - left, Math.round(w * 1.5)));
  const height = Math.max(1, Math.min(frame.height - top, Math.round(h * 1.5)));
  const bytes = await sharp(Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength), {
    raw: { width: frame.width, height: frame.height, channels: 3 },
  })
    .extract({ left, top, width, height })
    .resize({ width: 256, height: 256, fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 85 })
    .toBuffer();
  return new Uint8Array(bytes);
}

/** An undecided verdict's confidence never exceeds this (the envelope's rule). */
const UNDECIDED_CONFIDENCE = 0.3;

/** Frames listed per participant as the ones that drove its verdict. */
const DECISIVE_FRAMES = 3;

/** The stronger of two pieces of evidence that a face is manipulated; null when neither exists. */
function strongest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}

/** The coordinate-wise median of a track's boxes: the face's usual place, robust to a bad frame. */
function medianBox(boxes: Box[]): Box {
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return [0, 1, 2, 3].map((i) => median(boxes.map((box) => box[i]!))) as Box;
}

export async function analyseVideoDeepfake(
  input: DetectorInput,
  signal: AbortSignal,
  options: VideoDeepfakeOptions,
): Promise<DetectorOutput> {
  const frameCount = integerParameter(input.parameters, 'maxFrames', options.defaultFrames, 3, MAX_FRAMES);
  const original = slotFile(input.files, 'original');
  if (!original) throw new MediaError('the original video is missing');
  const video = await sampleFrames(original.path, frameCount, signal);

  const frames = [];
  for (const frame of video.frames) {
    const faces = await analyseFaces(frame, { emotion: false, spoof: options.identityFlow });
    signal.throwIfAborted();
    const withExtra: Array<{ face: (typeof faces)[number]; extra: LivenessAssessment | null }> = [];
    for (const face of faces) {
      // Liveness only for the faces that matter in eKYC: the subject is the largest.
      const extra = options.identityFlow && face === faces[0] ? await assessLiveness(frame, face) : null;
      withExtra.push({ face, extra });
    }
    frames.push({ timeSeconds: frame.timeSeconds, faces: withExtra });
  }
  const tracks = buildTracks(frames);
  const consistency = assessTemporalConsistency(tracks);
  // The face-forgery model on every tracked face crop; absent or broken, it says why and the rest stands.
  const forgery: FaceForgeryAssessment | null = tracks.length ? await assessFaceForgery(tracks, video.frames, input.modelsDir, signal) : null;
  const forgeryOf = (id: number) => forgery?.participants.find((p) => p.id === id) ?? null;
  const media = {
    durationSeconds: round4(video.durationSeconds),
    width: video.width,
    height: video.height,
    framesAnalysed: video.frames.length,
    ...damagedSeeksReport(video.damagedSeeks),
  };
  // One face crop per person (the frame where the face is largest) and, for the largest
  // people, a heatmap video of their per-frame score: what a reviewer looks at.
  const artifacts: ArtifactOutput[] = [];
  const participants = [];
  const upright = video.frames[0]!;
  for (const participant of consistency.participants) {
    const track = tracks[participant.id]!;
    const best = [...track.observations].sort((a, b) => b.face.box[2] * b.face.box[3] - a.face.box[2] * a.face.box[3])[0]!;
    const name = `participant-${participant.id}.jpg`;
    artifacts.push({
      name,
      kind: 'frame',
      contentType: 'image/jpeg',
      data: await faceCrop(video.frames[best.frame]!, best.face.boxAnalysisPixels),
    });
    const { frameScores, score: identityScore, ...summary } = participant;
    const model = forgeryOf(participant.id);
    // The model's probabilities count wherever the model decides; otherwise they are shown, not used.
    const modelCounts = Boolean(forgery?.decides && model && model.probability !== null);
    const modelSaysFake = modelCounts && model!.decision === 'manipulated';
    // frameIndex: the frame's number in the video (its time at the stream's rate), as SDKs key boxes by frame.
    const frameIndex = (timeSeconds: number, sample: number) => (video.fps ? Math.round(timeSeconds * video.fps) : sample);
    // Each frame is as suspicious as its strongest evidence: the identity break or the model's blending probability.
    const boxes = track.observations.map((o, i) => {
      const identityFrame = frameScores?.[i] ?? null;
      const modelFrame = model?.frameProbabilities[i] ?? null;
      return {
        timeSeconds: o.timeSeconds,
        frameIndex: frameIndex(o.timeSeconds, o.frame),
        box: o.face.box,
        score: strongest(identityFrame, modelCounts ? modelFrame : null),
        identityScore: identityFrame,
        ...(model && { forgeryProbability: modelFrame }),
      };
    });
    // Ranked now, listed once the verdict is settled (only a decided verdict was driven by frames).
    const rankedFrames = boxes
      .filter((b): b is typeof b & { score: number } => b.score !== null)
      .sort((a, b) => b.score - a.score || a.timeSeconds - b.timeSeconds)
      .slice(0, DECISIVE_FRAMES)
      .map((b) => ({
        timeSeconds: b.timeSeconds,
        frameIndex: b.frameIndex,
        score: b.score,
        by: b.score === b.identityScore ? ('identity-consistency' as const) : ('face-forgery-model' as const),
      }));
    let heatmap: string | undefined;
    // Tracks come largest first.
    if (participants.length < MAX_HEATMAP_VIDEOS) {
      heatmap = `participant-${participant.id}-heatmap.mp4`;
      const size = { width: upright.originalWidth, height: upright.originalHeight, durationSeconds: video.durationSeconds };
      artifacts.push({ name: heatmap, kind: 'heatmap', contentType: 'video/mp4', data: await renderHeatmapVideo(original.path, size, boxes, input.workDir, heatmap, signal) });
    }
    const fake = summary.fake || modelSaysFake;
    const score = strongest(identityScore, modelCounts ? model!.probability : null);
    participants.push({
      ...summary,
      fake,
      score,
      // Verdict, confidence and decisive frames are settled below, once the subject's liveness is known (eKYC).
      verdict: fake ? ('manipulated' as const) : ('inconclusive' as const),
      clearedByModel: !fake && modelCounts && model!.decision === 'authentic',
      ...(modelSaysFake && { reason: `${summary.reason}; the face-forgery model finds blending traces` }),
      identityScore,
      rankedFrames,
      ...(model && { faceForgery: { probability: model.probability, framesScored: model.framesScored, decision: model.decision, decides: forgery!.decides } }),
      box: best.face.box,
      bestFrameSeconds: best.timeSeconds,
      firstSeenSeconds: track.observations[0]!.timeSeconds,
      artifact: name,
      ...(heatmap && { heatmap }),
      track: boxes,
    });
  }

  if (tracks.length === 0) {
    return {
      result: verdictResult({
        flag: 'isDeepFake',
        detector: options.detector,
        score: 0.5,
        inconclusive: true,
        confidence: 0,
        signals: [
          {
            id: 'face-detection',
            label: 'Faces to assess',
            score: null,
            weight: 0,
            evidence: { facesFound: 0, framesAnalysed: video.frames.length },
          },
        ],
        details: { participants: [], faces: 0, deepFakes: 0, media, note: 'no face was found in the sampled frames' },
      }),
    };
  }

  const identityScore = consistency.score;
  const signals: Signal[] = [
    {
      id: 'identity-consistency',
      label: 'Recognised identity stays the same across frames for every tracked face',
      score: identityScore,
      weight: identityScore === null ? 0 : 1,
      evidence: participants.map((p) => ({ id: p.id, framesSeen: p.framesSeen, identity: p.identity })),
    },
    {
      id: 'landmark-jitter',
      label: 'Spread of eye-aligned landmark geometry across frames (informative, uncalibrated)',
      score: null,
      weight: 0,
      evidence: participants.map((p) => ({ id: p.id, landmarkJitter: p.landmarkJitter })),
    },
  ];
  if (forgery) signals.push(forgery.signal);
  let manipulated = consistency.isDeepFake || Boolean(forgery?.manipulated);
  // Whether the subject was assessed live (eKYC): clearing an identity check needs it.
  let subjectLive = !options.identityFlow;
  const details: Record<string, unknown> = {};

  if (options.identityFlow) {
    const subject = tracks[0]!;
    const assessments = subject.observations.map((o) => o.extra).filter((a): a is LivenessAssessment => a !== null);
    if (assessments.length) {
      const score = assessments.reduce((sum, a) => sum + a.score, 0) / assessments.length;
      const reliability = assessments.reduce((sum, a) => sum + a.reliability, 0) / assessments.length;
      const decision = decideSpoof(score, reliability);
      signals.push({
        id: 'subject-liveness',
        label: 'Presentation-attack assessment of the subject (mean over frames)',
        score: round4(score),
        weight: 0.5,
        evidence: { ...decision, frames: assessments.length },
      });
      if (decision.isSpoof) manipulated = true;
      subjectLive = decision.verdict === 'authentic';
    }
    const capture = await readCaptureSigns(original.path, signal);
    signals.push({
      id: 'camera-injection',
      label: 'Virtual-camera, streaming or face-filter software named in the file (ENISA 2022, §3.3)',
      score: capture.injectionTools.length ? 0.9 : null,
      weight: capture.injectionTools.length ? 1 : 0,
      evidence: capture,
    });
    // An identity check's selfie written by an injection tool has bypassed the camera.
    if (capture.injectionTools.length) manipulated = true;
    // Replay and injection: a screen re-filmed or a rendered stream loses the sensor's own noise,
    // which is independent from one frame to the next.
    const noise = await sampleFramePairs(original.path, SENSOR_NOISE_PAIRS, signal);
    signals.push(...noiseSignals(noise.pairs.map(noiseCues), 'reported, not weighed: no labelled replayed or injected selfie video calibrates it here'));
    const pulse = await estimatePulse(original.path, medianBox(subject.observations.map((o) => o.face.box)), {
      width: upright.originalWidth,
      height: upright.originalHeight,
      durationSeconds: video.durationSeconds,
    }, signal);
    signals.push({
      id: 'remote-pulse',
      label: 'Pulse in the skin colour of the subject (rPPG, POS method, Wang et al., TBME 2017): reported, not weighted',
      score: null,
      weight: 0,
      evidence: pulse ?? { reason: 'under 5 s of video: too short for a pulse spectrum' },
    });
    signals.push({
      id: 'people-in-frame',
      label: 'An identity check expects one person in front of the camera',
      score: null,
      weight: 0,
      evidence: { peopleTracked: tracks.length },
    });
    const reference = slotFile(input.files, 'reference');
    if (reference) {
      const referenceFace = (await analyseFaces(await decodeImage(reference.path), { emotion: false, spoof: false }))[0];
      details.verification = referenceFace?.embedding
        ? verify(subject.centroid, referenceFace.embedding)
        : unverified('no face was found in the reference image');
    }
  }

  const weighted = signals.filter((s) => s.score !== null && s.weight > 0);
  const totalWeight = weighted.reduce((sum, s) => sum + s.weight, 0);
  const fused = totalWeight ? weighted.reduce((sum, s) => sum + s.score! * s.weight, 0) / totalWeight : 0.5;
  // A break, a spoof, an injection tool or the face-forgery model over its threshold decides.
  // Only the model can clear a video: every participant under its authentic threshold, nothing
  // else objecting (fused evidence under 0.5) and, in eKYC, a live subject.
  const cleared = !manipulated && Boolean(forgery?.authentic) && subjectLive && fused < 0.5;
  const score = manipulated ? Math.max(fused, 0.5) : fused;
  // A person is authentic by the same rule as the video: the model clears the face and, in eKYC, the subject is live.
  const settled = participants.map(({ clearedByModel, rankedFrames, ...participant }) => {
    const verdict = clearedByModel && subjectLive ? ('authentic' as const) : participant.verdict;
    const reason =
      verdict === 'authentic'
        ? 'identity is stable and the face-forgery model finds no blending traces'
        : clearedByModel
          ? 'the face-forgery model finds no blending traces, but the subject was not assessed live'
          : participant.reason;
    const { score } = participant;
    // The probability of what the verdict says; an undecided person gets at most the envelope's undecided confidence.
    const confidence =
      score === null ? null : verdict === 'manipulated' ? score : verdict === 'authentic' ? round4(1 - score) : round4(Math.min(UNDECIDED_CONFIDENCE, 1 - score));
    return { ...participant, verdict, reason, confidence, decisiveFrames: verdict === 'inconclusive' ? [] : rankedFrames };
  });
  return {
    artifacts,
    result: verdictResult({
      flag: 'isDeepFake',
      detector: options.detector,
      score,
      inconclusive: !manipulated && !cleared,
      confidence: manipulated || cleared ? 0.6 : Math.min(UNDECIDED_CONFIDENCE, consistency.confidence),
      signals,
      details: {
        participants: settled,
        faces: tracks.length,
        deepFakes: settled.filter((p) => p.fake).length,
        media,
        ...(cleared && { note: 'cleared by the face-forgery model: no participant shows blending traces and no other signal objects' }),
        ...details,
      },
    }),
  };
}
