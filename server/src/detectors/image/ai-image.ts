/**
 * ai-image-detection (task type 1): is the image AI-generated?
 *
 * Evidence in order of strength: provenance the file carries (C2PA, IPTC source type,
 * generator parameters, stealth PNG info), the invisible watermark of open generators in
 * the pixels, then statistical pixel forensics fused by a small fitted logistic model, the
 * learned models (ai-image-model.ts on images of 128 px and more, ai-image-thumbnail-model.ts on
 * 32×32 thumbnails) and operator model packs. Declared or watermarked origin decides; without it
 * the statistical and learned scores are reported with the confidence they earned, and weak
 * evidence answers `inconclusive`.
 */
import type { Detector, DetectorInput, DetectorOutput, Signal } from '../types.js';
import { logOdds, round4, sigmoid, verdictResult } from '../result.js';
import { initC2pa, readC2pa } from './c2pa.js';
import { readMetadata } from './generator-metadata.js';
import { decodePixels, loadImage } from './image-input.js';
import { assessProvenance } from './provenance.js';
import { detectWatermark, watermarkScore } from './sd-watermark.js';
import { readStealthPngInfo } from './stealth-pnginfo.js';
import { computeStatisticalSignals, fuseStatistical } from './ai-image-statistics.js';
import { loadOperatorPacks, runImageModel } from '../model-pack.js';
import { absentModel, runAiImageModel } from './ai-image-model.js';
import { absentThumbnailModel, runThumbnailModel } from './ai-image-thumbnail-model.js';

const DETECTOR = { name: 'mediaproof-ai-image', version: '1.0.0' };

/** Pixels read at full resolution for the watermark (it does not survive resizing). */
const WATERMARK_MAX_PIXELS = 40_000_000;

export function originalFile(input: DetectorInput) {
  const file = input.files.find((f) => f.slotName === 'original') ?? input.files[0];
  if (!file) throw new Error('no input file');
  return file;
}

function checkAborted(signal: AbortSignal) {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('analysis aborted');
}

/** `learnedModel: false` leaves the learned models out (bench/ai-image-model.ts compares the two). */
export async function analyzeAiImage(path: string, modelsDir: string | null, signal: AbortSignal, options: { learnedModel?: boolean; c2paTrustAnchors?: string | null } = {}) {
  const image = await loadImage(path);
  checkAborted(signal);
  const [c2pa, metadata] = await Promise.all([readC2pa(image.bytes, image.mime, options.c2paTrustAnchors ?? null), readMetadata(image.bytes)]);
  checkAborted(signal);

  const pixelCount = image.width * image.height;
  const fullResolution = pixelCount <= WATERMARK_MAX_PIXELS;
  const raster = await decodePixels(image, { channels: image.hasAlpha ? 4 : 3, ...(fullResolution ? {} : { maxPixels: WATERMARK_MAX_PIXELS }) });
  checkAborted(signal);
  const stealth = image.format === 'png' && image.hasAlpha ? readStealthPngInfo(raster) : null;
  const provenance = assessProvenance(c2pa, metadata, stealth);

  const signals: Signal[] = [...provenance.signals];
  const watermark = fullResolution ? detectWatermark(raster) : null;
  const mark = watermark?.best ?? null;
  const markScore = mark ? watermarkScore(mark) : null;
  signals.push({
    id: 'invisible-watermark',
    label: 'Invisible watermark (invisible-watermark dwtDct: SD 1.x, SDXL, FLUX)',
    score: markScore,
    weight: markScore === null ? 0 : 1,
    evidence: watermark
      ? watermark.tooSmall
        ? { note: 'image too small to carry the watermark' }
        : { matches: watermark.matches, note: 'the mark survives noise and JPEG without chroma subsampling, not resizing, cropping or 4:2:0 JPEG: absence proves nothing' }
      : { note: 'image over the full-resolution limit; watermark not checked' },
  });
  checkAborted(signal);

  const statistics = await computeStatisticalSignals(image, raster, metadata, signal);
  const statistical = fuseStatistical(statistics);
  signals.push(...statistical.signals);
  checkAborted(signal);

  const { models: packs, problems: packProblems } = await loadOperatorPacks('ai-image-detection', 'image', modelsDir);
  const packResults = [];
  for (const pack of packs) {
    const { descriptor } = pack;
    const probability = await runImageModel(pack, raster);
    const input = descriptor.input as { width: number; height: number; layout: string };
    packResults.push({
      probability,
      weight: descriptor.weight,
      signal: {
        id: `model-pack:${descriptor.name}`,
        label: `Operator model pack ${descriptor.name} ${descriptor.version}`,
        score: round4(probability),
        weight: descriptor.weight,
        evidence: { model: descriptor.model, input: `${input.width}x${input.height} ${input.layout}`, outputKind: descriptor.output.kind },
      } satisfies Signal,
    });
  }
  for (const result of packResults) signals.push(result.signal);

  // The learned image model sees the same decoded raster (8-bit, checked channels and size).
  const learned = options.learnedModel === false ? absentModel('left out by the caller') : await runAiImageModel(raster, modelsDir);
  signals.push(learned.signal);
  checkAborted(signal);

  // The thumbnail model runs only on thumbnails (both sides 24–48 px) and decides only at 32×32,
  // where it was validated fused with the thumbnail regime's statistics; it is weighed only when
  // those statistics are trusted too (the image lies inside the range they were fitted on).
  const thumbnail = options.learnedModel === false ? absentThumbnailModel('left out by the caller') : await runThumbnailModel(raster, modelsDir);
  const thumbnailDecides = thumbnail.decides && thumbnail.logOdds !== null && statistical.trusted;
  const thumbnailSignal: Signal = thumbnail.decides && !thumbnailDecides
    ? { ...thumbnail.signal, weight: 0, evidence: { ...(thumbnail.signal.evidence as object), decides: false, reason: 'the pixel statistics it was validated with lie outside their fitted range: reported, not weighed' } }
    : thumbnail.signal;
  signals.push(thumbnailSignal);
  checkAborted(signal);

  // Decision: declared/watermarked origin first; otherwise the fitted statistical score,
  // combined with model packs in log-odds, and inconclusive unless it is far from 0.5.
  let score: number;
  let confidence: number | undefined;
  let inconclusive = false;
  let basis: string;
  let generator = provenance.generator;
  if (provenance.decisive && provenance.decisive.score >= 0.5) {
    score = provenance.decisive.score;
    confidence = provenance.decisive.confidence;
    basis = provenance.decisive.reason;
  } else if (markScore !== null && mark) {
    score = markScore;
    confidence = Math.min(0.98, markScore);
    basis = `invisible watermark of ${mark.generator}: ${mark.bitsMatched}/${mark.bitsTotal} bits matched`;
    generator ??= mark.generator;
  } else if (provenance.decisive) {
    score = provenance.decisive.score;
    confidence = provenance.decisive.confidence;
    basis = provenance.decisive.reason;
  } else {
    let combined = 0;
    for (const result of packResults) combined += result.weight * logOdds(result.probability);
    if (thumbnailDecides && thumbnail.thresholds) {
      // As validated out-of-fold: weight · the model's calibrated log-odds + the statistics' own
      // log-odds (neither held inside [0.001, 0.999]), thresholds chosen on the fused scores.
      score = sigmoid(combined + thumbnail.weight * thumbnail.logOdds! + Math.log(statistical.score / (1 - statistical.score)));
      inconclusive = score > thumbnail.thresholds.authentic && score < thumbnail.thresholds.manipulated;
      confidence = Math.min(0.95, 0.5 + Math.abs(score - 0.5));
      basis = `learned thumbnail model and pixel statistics${packResults.length > 0 ? ' with operator model packs' : ''} (no provenance or watermark found); ` +
        `thresholds ${thumbnail.thresholds.authentic} / ${thumbnail.thresholds.manipulated} chosen on out-of-fold CIFAKE scores`;
    } else if (learned.probability !== null && learned.thresholds && learned.decides) {
      // The calibrated model decides with the thresholds chosen on its validation split; pixel
      // statistics add their log-odds only in a regime trusted to decide, operator packs always.
      const statistics = statistical.trusted ? logOdds(statistical.score) : 0;
      score = sigmoid(combined + learned.weight * logOdds(learned.probability) + statistics);
      inconclusive = score > learned.thresholds.authentic && score < learned.thresholds.manipulated;
      confidence = Math.min(0.95, 0.5 + Math.abs(score - 0.5));
      basis = `learned image model${statistical.trusted ? ' and pixel statistics' : ''}${packResults.length > 0 ? ' with operator model packs' : ''} (no provenance or watermark found); ` +
        `calibrated thresholds ${learned.thresholds.authentic} / ${learned.thresholds.manipulated}`;
    } else {
      // The fitted statistics' own log-odds, not held inside [0.001, 0.999] (as before the learned model).
      combined += Math.log(statistical.score / (1 - statistical.score));
      score = sigmoid(combined);
      const margin = Math.abs(score - 0.5);
      // Pixel statistics alone are weaker than provenance: confidence is capped, and close
      // calls are inconclusive rather than a coin toss presented as an answer.
      inconclusive = packResults.length === 0 ? !statistical.trusted || margin < statistical.inconclusiveMargin : margin < 0.15;
      confidence = Math.min(packResults.length > 0 ? 0.9 : 0.75, 0.5 + margin);
      basis = packResults.length > 0 ? 'pixel statistics fused with operator model packs' : 'pixel statistics only (no provenance or watermark found)';
      if (!statistical.trusted && packResults.length === 0) {
        basis += statistics.tiles === 0
          ? `; the image (${raster.width}x${raster.height}) is too small for pixel statistics: no evidence either way`
          : statistical.outsideFittedRange.length > 0
          ? `; the image lies outside what the statistical model for ${statistical.regime} images was fitted on (${statistical.outsideFittedRange.join(', ')}), so it does not decide`
          : `; the statistical model for ${statistical.regime} images is not reliable enough to decide`;
      }
      basis += learned.probability === null
        ? `; learned model absent: ${(learned.signal.evidence as { note?: string }).note ?? 'not run'}`
        : `; learned image model reported, not weighed: ${(learned.signal.evidence as { reason?: string }).reason ?? 'outside what it was validated on'}`;
      if (thumbnail.probability !== null) basis += `; thumbnail model reported, not weighed: ${(thumbnailSignal.evidence as { reason?: string }).reason ?? 'outside what it was validated on'}`;
    }
    if (provenance.cameraOrigin) basis += '; camera EXIF present';
  }

  const result = verdictResult({
    flag: 'isAiGenerated',
    detector: DETECTOR,
    score,
    inconclusive,
    ...(confidence !== undefined && { confidence }),
    signals,
    details: {
      basis,
      generator,
      image: { format: image.format, width: image.width, height: image.height },
      provenance: { c2pa: c2pa.status, digitalSourceTypes: metadata.sourceTypes, metadataSegments: metadata.segments },
      modelPacks: packResults.map((r) => r.signal.id),
      learnedModel: learned.probability === null ? null : { probability: round4(learned.probability), thresholds: learned.thresholds, decides: learned.decides },
      thumbnailModel: thumbnail.probability === null ? null : { probability: round4(thumbnail.probability), thresholds: thumbnail.thresholds, decides: thumbnailDecides },
      ...(packProblems.length > 0 && { modelPackProblems: packProblems }),
      statisticalModel: { regime: statistical.regime, crossValidatedAuc: statistical.crossValidatedAuc, trusted: statistical.trusted, outsideFittedRange: statistical.outsideFittedRange },
    },
  });
  return { ...result, generator };
}

const detector: Detector = {
  ...DETECTOR,
  async load() {
    initC2pa();
  },
  async analyze(input: DetectorInput, signal: AbortSignal): Promise<DetectorOutput> {
    const file = originalFile(input);
    const result = await analyzeAiImage(file.path, input.modelsDir, signal, { c2paTrustAnchors: input.c2paTrustAnchors ?? null });
    return { result };
  },
};

export default detector;
