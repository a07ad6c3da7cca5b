/**
 * ai-video-detection (task type 3): is the video AI-generated?
 *
 * Evidence in order of strength:
 * 1. Provenance the file carries (video-provenance.ts): a C2PA manifest declaring
 *    `trainedAlgorithmicMedia` (Sora, Firefly video and others sign their output), an XMP
 *    source type, a generator's name or ComfyUI graph in the container's tags. Decisive,
 *    through the same rules as images (image/provenance.ts).
 * 2. Learned per-frame scores on sampled frames at native resolution: the built-in AI-image
 *    model when this build ships one, and operator image packs declared for this task type.
 *    They were fitted on still images and no labelled AI video was available to validate them
 *    on video, so they are reported per segment and fused into the score, but without
 *    provenance the verdict stays `inconclusive`.
 * 3. Temporal cues (Chang et al., "What Matters in Detecting AI-Generated Videos like Sora?",
 *    2024: generated frames lack the physical consistency of a recording): the stability of
 *    the sensor-noise level across the video (a camera's noise level follows its sensor and
 *    exposure: Healey & Kondepudy, IEEE TPAMI 1994) and the correlation of consecutive frames'
 *    noise residuals. Reported with weight 0: uncalibrated.
 *
 * `analysisDetails.segments` is the timeline: one segment per sampled time, with its scores.
 */
import type { Detector, DetectorInput, DetectorOutput, Signal } from '../types.js';
import { MediaError } from '../types.js';
import { logOdds, round4, sigmoid, verdictResult } from '../result.js';
import { initC2pa } from '../image/c2pa.js';
import { assessProvenance } from '../image/provenance.js';
import { loadOperatorPacks, runImageModel, type LoadedModel } from '../model-pack.js';
import { integerParameter } from '../face/parameters.js';
import { mean, noiseCues, noiseSignals, sampleFramePairs, type NoiseCues } from './frame-pairs.js';
import { damagedSeeksReport } from '../face/video-frames.js';
import { readVideoProvenance } from './video-provenance.js';

const DETECTOR = { name: 'mediaproof-ai-video', version: '1.0.0' };
const TASK = 'ai-video-detection';
const DEFAULT_FRAMES = 12;
const MAX_FRAMES = 48;

async function analyze(input: DetectorInput, signal: AbortSignal): Promise<DetectorOutput> {
  const file = input.files.find((f) => f.slotName === 'original') ?? input.files[0];
  if (!file) throw new MediaError('no input file');
  const frameCount = integerParameter(input.parameters, 'frames', DEFAULT_FRAMES, 1, MAX_FRAMES);

  const video = await sampleFramePairs(file.path, frameCount, signal);
  const origin = await readVideoProvenance(file.path, file.contentType, signal, input.c2paTrustAnchors ?? null);
  const provenance = assessProvenance(origin.c2pa, origin.metadata, null);
  const signals: Signal[] = [...provenance.signals.filter((s) => s.id !== 'camera-exif')];
  signals.push({
    id: 'camera-tags',
    label: "Phone camera app's container tags",
    score: origin.cameraTags.length ? 0.3 : null,
    weight: 0,
    evidence: origin.cameraTags.length
      ? { tags: origin.cameraTags, note: 'camera apps write these, generators do not; they can be copied, so this only leans' }
      : { note: 'no camera make, model or capture tags in the container' },
  });

  // Learned per-frame scores: operator image packs declared for this task type.
  const { models, problems } = await loadOperatorPacks(TASK, 'image', input.modelsDir);
  const frameScores: Array<Array<number>> = [];
  const cues: NoiseCues[] = [];
  for (const pair of video.pairs) {
    signal.throwIfAborted();
    cues.push(noiseCues(pair));
    frameScores.push(await Promise.all(models.map((model: LoadedModel) => runImageModel(model, pair.first))));
  }
  for (const [index, model] of models.entries()) {
    const scores = frameScores.map((row) => row[index]!);
    signals.push({
      id: `model-pack:${model.descriptor.name}`,
      label: `Operator model pack ${model.descriptor.name} ${model.descriptor.version} on sampled frames`,
      score: round4(mean(scores)),
      weight: model.descriptor.weight,
      evidence: { frames: scores.length, min: round4(Math.min(...scores)), max: round4(Math.max(...scores)) },
    });
  }

  signals.push(...noiseSignals(cues, 'reported, not weighed: no labelled AI video was available to calibrate it'));

  const slice = video.durationSeconds / video.pairs.length;
  const segments = video.pairs.map((pair, i) => ({
    start: round4(Math.max(0, pair.timeSeconds - slice / 2)),
    end: round4(Math.min(video.durationSeconds, pair.timeSeconds + slice / 2)),
    frameSeconds: pair.timeSeconds,
    score: models.length ? round4(sigmoid(mean(frameScores[i]!.map(logOdds)))) : null,
    noiseLevel: round4(cues[i]!.noiseLevel),
    residualCorrelation: cues[i]!.residualCorrelation === null ? null : round4(cues[i]!.residualCorrelation!),
  }));

  let score: number;
  let confidence: number;
  let inconclusive = false;
  let basis: string;
  if (provenance.decisive) {
    score = provenance.decisive.score;
    confidence = provenance.decisive.confidence;
    basis = provenance.decisive.reason;
  } else if (models.length) {
    const scored = segments.map((s) => s.score!);
    score = mean(scored);
    inconclusive = true;
    confidence = Math.min(0.5, Math.abs(score - 0.5) + 0.25);
    basis = 'no provenance; per-frame model scores are reported, but they were not validated on video, so they do not decide';
  } else {
    score = 0.5;
    inconclusive = true;
    confidence = 0.1;
    basis = 'no provenance (C2PA, XMP source type or generator tags) and no learned frame model: the pixels alone do not decide';
  }
  return {
    result: verdictResult({
      flag: 'isAiGenerated',
      detector: DETECTOR,
      score,
      inconclusive,
      confidence,
      signals,
      details: {
        basis,
        generator: provenance.generator,
        segments,
        video: { durationSeconds: round4(video.durationSeconds), width: video.width, height: video.height, fps: video.fps, codec: video.codec, framesSampled: video.pairs.length, ...damagedSeeksReport(video.damagedSeeks) },
        containerTags: origin.tags.slice(0, 40),
        ...(problems.length && { modelProblems: problems }),
      },
    }),
  };
}

const detector: Detector = {
  ...DETECTOR,
  async load() {
    initC2pa();
  },
  analyze,
};

export default detector;
