/**
 * image-forgery-detection (task type 5): was the image tampered with, and where?
 *
 * Published, model-free methods each produce a block suspicion map: error level
 * analysis (Krawetz 2007), JPEG ghosts (Farid 2009), aligned double-JPEG quantisation
 * (Bianchi & Piva 2012), local noise-level inconsistency (Lyu, Pan & Zhang 2014),
 * dense-field copy-move matching (Cozzolino, Poggi & Verdoliva 2015), on a PNG saved
 * after a JPEG life, misalignment with that JPEG's grid (steps after Fan & de Queiroz 2003) and,
 * on full-size JPEG photos, regions smoother than the camera's noise (Mahdian & Saic 2009).
 * The maps are fused (weighted maximum, per-method weights fitted) into a heatmap the size of
 * the input; the image score is a logistic model over each method's peak and area, fitted by
 * `scripts/fit-forgery.ts` (the grid map's by `scripts/fit-grid-fusion.ts`) and stored in
 * `forgery-fusion.json`.
 *
 * `analyzeImageForgery()` is exported for other detectors (document-intelligence calls it on
 * scanned pages); its return shape is stable.
 */
import sharp from 'sharp';
import type { Detector, DetectorInput, DetectorOutput, Signal } from '../types.js';
import { round4, sigmoid, verdictResult } from '../result.js';
import { mapToGrey, regionsOf, resampleMap, smoothMap, type BlockMap, type Box } from './forensic-map.js';
import { decodePixels, loadImage, MAX_INPUT_PIXELS, type LoadedImage } from './image-input.js';
import { lumaTable, parseJpegStructure, estimateIjgQuality } from './jpeg-structure.js';
import { ELA_LABEL, errorLevelAnalysis } from './forgery/ela.js';
import { GHOST_LABEL, jpegGhosts } from './forgery/jpeg-ghost.js';
import { alignedDoubleJpeg, DOUBLE_JPEG_LABEL } from './forgery/double-jpeg.js';
import { noiseLevelInconsistency } from './forgery/noise-level.js';
import { copyMoveDetection, type FullResolution } from './forgery/copy-move.js';
import { fillProbability, MISSING_NOISE_LABEL, missingCameraNoise, type MissingNoiseRule } from './forgery/missing-noise.js';
import { blockDct } from './forgery/block-dct.js';
import { estimateJpegGrid, GRID_MISALIGNMENT, gridMisalignmentMethod, GRID_METHOD_LABEL, type JpegGrid } from './forgery/grid-alignment.js';
import { skippedMethod, type MethodResult } from './forgery/method.js';
import { runLocaliser, type LocaliserResult } from './forgery/learned-localiser.js';
import fusion from './forgery-fusion.json' with { type: 'json' };

const DETECTOR = { name: 'mediaproof-image-forgery', version: '1.0.0' };

/**
 * Compression methods need the stored 8x8 grid, so they run at full resolution up to this size:
 * 2^24 pixels, so that a "16-megapixel" camera's frame (4624x3472 or 4640x3480, 16.05-16.15 MP) is
 * analysed whole.
 */
export const COMPRESSION_MAX_PIXELS = 16_777_216;
/**
 * ...and from this many whole 8x8 blocks (an 8x8 grid of them, e.g. 64x64 pixels): each compression
 * method reads a block against the others, and a handful of blocks has no others to speak of.
 */
export const COMPRESSION_MIN_BLOCKS = 64;
/** Noise and copy-move analysis run on a copy scaled down to at most this many pixels. */
export const GEOMETRY_MAX_PIXELS = 600_000;
/** Copy-move matches every pixel against the whole image, so it runs on a smaller copy. */
export const COPY_MOVE_MAX_PIXELS = 240_000;
/** Heatmap grid: cells of at least 8 pixels, at most this many cells on the long side. */
const HEATMAP_MAX_CELLS = 256;
/** Fused heatmap cells at or above this form regions. */
const REGION_THRESHOLD = 0.4;

export interface ForgeryRegion extends Box {
  /**
   * Every method that flagged the box (its own weighted map reaches the region threshold there),
   * most evidence inside the box first, and the first of them.
   */
  method: MethodResult['id'];
  methods: Array<MethodResult['id']>;
  score: number;
}

export interface ForgeryAnalysis {
  /** Calibrated probability that the image was tampered with. */
  score: number;
  signals: Signal[];
  regions: ForgeryRegion[];
  /** 8-bit greyscale PNG, same size as the input: 0 = no evidence, 255 = strongest. */
  heatmapPng: Buffer;
  width: number;
  height: number;
  /** EXIF orientation (1-8): the heatmap and regions lie on the stored pixels; turn them this way to lay them over the upright image. */
  orientation: number;
  format: 'jpeg' | 'png';
  /** Scale (per side) at which noise and copy-move ran; compression methods ran at 1 or not at all. */
  analysisScale: number;
  /** Whether the pixels carry traces of an earlier JPEG compression (8x8 blocking). */
  compressionHistory: { jpegFile: boolean; quality: number | null; blockingInPixels: number; note: string };
  /** Methods that could run; an image with none usable is inconclusive. */
  methodsRun: Array<MethodResult['id']>;
  /**
   * The learned localiser's calibrated probability and validated thresholds, when it ran, and
   * whether the image lies in the size range it was validated on (it decides only there).
   */
  learned: { probability: number; thresholds: LocaliserResult['thresholds']; decides: boolean } | null;
  /** The model-free methods' probability: the fitted fusion, raised by a filled region found decisively. */
  classicScore: number;
  /** The missing-noise method's calibrated probability of a filled region, when it ran, and whether it decided. */
  filledRegion: { probability: number; decides: boolean } | null;
  /** The per-method and fused maps on the heatmap grid (cells of `cell` input pixels), for evaluation. */
  maps: { cell: number; cols: number; rows: number; fused: Float32Array; byMethod: Partial<Record<MethodResult['id'], Float32Array>> };
}

type ImageWeights = { weights: Record<string, { peak: number; area: number }>; bias: number };
type FusionModel = ImageWeights & {
  reliability: Record<string, number>;
  missingNoise: { rule: MissingNoiseRule; decisiveProbability: number; decides: boolean; notDecidingBecause?: string };
  /** Image-level weights of images over `minPixels`, fitted on full-size and saved-twice photos (`fit-forgery.ts --large`). */
  large?: ImageWeights & { minPixels: number };
};
const model = fusion as FusionModel;

/**
 * The image-level weights for a file of this format and size. A JPEG over GEOMETRY_MAX_PIXELS
 * has its geometry methods see a reduced copy and its compression methods a camera's own grid,
 * and the methods rank forgeries there otherwise than on the small synthetic images the main
 * weights were fitted on (measured: the main weights rank the camera fitting half's forgeries
 * below chance). The large weights were fitted on JPEGs only: PNGs keep the main ones, with the
 * grid map's weights fitted on top of them.
 */
export function imageWeights(format: string, pixels: number, fitted: FusionModel = model): ImageWeights {
  return fitted.large && format === 'jpeg' && pixels > fitted.large.minPixels ? fitted.large : fitted;
}

function checkAborted(signal: AbortSignal) {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('analysis aborted');
}

/**
 * JPEG's luminance (ITU-R BT.601 weights, T.81 via JFIF) of interleaved RGB, unrounded, and its
 * blocking artefact strength: mean absolute luminance step across 8-pixel boundaries over the
 * mean step inside blocks (≈1 for never-compressed pixels, clearly above after JPEG). One pass:
 * each row's steps are taken while it and the row above are still in cache.
 */
export function lumaAndBlocking(rgb: Uint8Array, width: number, height: number): { luma: Float32Array; blocking: number } {
  const luma = new Float32Array(width * height);
  let boundary = 0, inside = 0;
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0, p = row * 3; x < width; x++, p += 3) luma[row + x] = 0.299 * rgb[p]! + 0.587 * rgb[p + 1]! + 0.114 * rgb[p + 2]!;
    if (y === 0) continue;
    let vertical = 0, horizontalBoundary = 0, horizontalInside = 0;
    for (let x = 1; x < width; x++) {
      vertical += Math.abs(luma[row + x]! - luma[row + x - width]!);
      const horizontal = Math.abs(luma[row + x]! - luma[row + x - 1]!);
      if ((x & 7) === 0) horizontalBoundary += horizontal;
      else horizontalInside += horizontal;
    }
    boundary += horizontalBoundary;
    inside += horizontalInside;
    if ((y & 7) === 0) boundary += vertical;
    else inside += vertical;
  }
  // Step counts: per row, floor((width-1)/8) boundary columns; per boundary row, width-1 steps.
  const boundaryColumns = Math.floor((width - 1) / 8), boundaryRows = Math.floor((height - 1) / 8);
  const nb = (height - 1) * boundaryColumns + boundaryRows * (width - 1);
  const ni = 2 * (height - 1) * (width - 1) - nb;
  return { luma, blocking: nb && ni && inside > 0 ? boundary / nb / (inside / ni) : 1 };
}

/** Feature vector order used by the fitted fusion model. */
export const METHOD_IDS: Array<MethodResult['id']> = ['ela', 'jpeg-ghost', 'double-jpeg', 'noise-level', 'copy-move', 'grid-alignment'];

export function fuseScore(methods: MethodResult[], { bias, weights }: ImageWeights = model): number {
  let z = bias;
  for (const method of methods) {
    const w = weights[method.id];
    if (!w || !method.map) continue;
    z += w.peak * method.peak + w.area * method.area;
  }
  return sigmoid(z);
}

/** The model-free fusion's own manipulated threshold (0.5 + its 0.1 inconclusive margin). */
export const CLASSIC_DECISIVE = 0.6;

/**
 * The missing-noise method is not in the fitted fusion (fitted before it, on scaled photos where
 * it does not run): its own calibrated probability raises the model-free score where it decides
 * (`fillDecides`), and is only reported otherwise.
 */
export function withFilledRegion(classic: number, fill: { probability: number; decides: boolean } | null): number {
  return fill?.decides ? Math.max(classic, fill.probability) : classic;
}

/**
 * Whether the missing-noise probability decides: its rule in force (forgery-fusion.json) and its
 * decisive level reached (fitted on untouched photos' false alarms, never under the model-free 0.6).
 */
export function fillDecides(probability: number, rule: { decides: boolean; decisiveProbability: number } = model.missingNoise): boolean {
  return rule.decides && probability >= Math.max(CLASSIC_DECISIVE, rule.decisiveProbability);
}

/**
 * With the learned localiser, its calibrated probability decides; model-free evidence that is
 * decisive on its own (a copy-move found, a double-JPEG mismatch) still raises the score.
 */
export function decideWithLearned(learned: number, classic: number): number {
  return classic >= CLASSIC_DECISIVE ? Math.max(learned, classic) : learned;
}

/** Outside its validated size range the localiser only raises a score the model-free methods already lean on. */
function corroborated(learned: number | null, thresholds: LocaliserResult['thresholds'], classic: number): number {
  return learned !== null && thresholds && classic >= 0.5 && learned >= thresholds.manipulated ? Math.max(classic, learned) : classic;
}

/**
 * `cameraNoise`: also look for regions smoother than the camera's noise (full-size JPEG photos
 * only; document scans leave it out, as a scanner's flat paper is no camera's noise).
 */
export async function runForgeryMethods(image: LoadedImage, signal: AbortSignal, { cameraNoise = false } = {}) {
  const pixels = image.width * image.height;
  const methods: MethodResult[] = [];
  const jpeg = image.format === 'jpeg' ? parseJpegStructure(image.bytes) : null;
  const table = jpeg ? lumaTable(jpeg) : null;
  let compressionHistory: ForgeryAnalysis['compressionHistory'];
  let full: FullResolution | undefined;
  let priorJpegGrid: JpegGrid | null = null;

  const wholeBlocks = Math.floor(image.width / 8) * Math.floor(image.height / 8);
  if (pixels <= COMPRESSION_MAX_PIXELS && wholeBlocks >= COMPRESSION_MIN_BLOCKS) {
    const rgb = await decodePixels(image, { channels: 3 });
    checkAborted(signal);
    const { luma, blocking } = lumaAndBlocking(rgb.data, rgb.width, rgb.height);
    full = { luma, width: rgb.width, height: rgb.height };
    const quality = table ? estimateIjgQuality(table).quality : null;
    // Every PNG gets a block DCT: its coefficients show a JPEG past by the quantiser steps they
    // still sit on (Fan & de Queiroz 2003), and the grid map localises what does not.
    const dct = blockDct(luma, rgb.width, rgb.height);
    // A PNG that was a JPEG keeps that JPEG's grid: its steps are estimated once, for the grid
    // map and copy-move's alignment cue. A JPEG file's last compression sits on every block alike.
    if (!table) priorJpegGrid = estimateJpegGrid(dct);
    // A colour photo turned grey hides the blocks whose colours were clipped: their grey levels
    // sit off the JPEG's steps, and with no colour left clippedBlocks cannot leave them out (stop 81:
    // 13 of 30 untouched camera photos saved as greyscale PNGs were called manipulated by this map,
    // 1 of the same 30 saved in colour).
    const grid = !priorJpegGrid
      ? skippedMethod('grid-alignment', GRID_METHOD_LABEL, 'a JPEG file: its last compression put every block on its grid; double-JPEG analysis reads the history before it')
      : image.greyscale
        ? skippedMethod('grid-alignment', GRID_METHOD_LABEL, 'a greyscale image: where a colour photo was clipped before it was turned grey, its grey levels leave the JPEG grid without any edit, and nothing shows where')
        : gridMisalignmentMethod(priorJpegGrid, rgb.data, rgb.width);
    // The steps the grid map reads (whether or not it ran): a PNG's JPEG past.
    const quantiserSteps = Boolean(priorJpegGrid?.frequencies.slice(0, GRID_MISALIGNMENT.frequencies).some((f) => f.step !== null));
    // Blocking in the pixels alone is not proof: resampled photos show it too (16 of 30 dev
    // photos scaled and saved as PNG without a JPEG life measured over 1.08), so a PNG's JPEG
    // past also needs the steps.
    const compressedBefore = image.format === 'jpeg' || (blocking > 1.08 && quantiserSteps);
    compressionHistory = {
      jpegFile: image.format === 'jpeg',
      quality,
      blockingInPixels: round4(blocking),
      note:
        image.format === 'jpeg'
          ? `JPEG file, quality about ${quality ?? 'unknown'}`
          : compressedBefore
            ? 'PNG whose pixels still show 8x8 JPEG blocking: it was a JPEG before, so compression methods can still see its history'
            : quantiserSteps
              ? "PNG without visible 8x8 blocking whose DCT coefficients still sit on a JPEG's quantiser steps: it was a high-quality JPEG before; grid misalignment, noise and copy-move analysis apply"
              : 'PNG without a JPEG past (its DCT coefficients sit on no quantiser steps): there is no compression history, so ELA, JPEG ghosts, double-JPEG and grid analysis have no evidence to find; only noise and copy-move analysis apply',
    };
    checkAborted(signal);
    if (compressedBefore) {
      methods.push(await errorLevelAnalysis(rgb));
      checkAborted(signal);
      methods.push(jpegGhosts(dct, signal));
      checkAborted(signal);
    } else {
      methods.push(skippedMethod('ela', ELA_LABEL, compressionHistory.note));
      methods.push(skippedMethod('jpeg-ghost', GHOST_LABEL, compressionHistory.note));
    }
    if (table) methods.push(alignedDoubleJpeg(dct, table, rgb.data, rgb.width));
    else methods.push(skippedMethod('double-jpeg', DOUBLE_JPEG_LABEL, image.format === 'png' ? 'PNG has no quantisation tables: double-JPEG analysis does not apply' : 'no quantisation table in the file'));
    methods.push(grid);
    checkAborted(signal);
    if (cameraNoise) {
      const withdrawn = model.missingNoise.decides ? {} : { notDeciding: model.missingNoise.notDecidingBecause };
      methods.push(
        image.format === 'jpeg'
          ? missingCameraNoise(luma, rgb.data, rgb.width, rgb.height, model.missingNoise.rule, withdrawn)
          : skippedMethod('missing-noise', MISSING_NOISE_LABEL, 'a PNG: the method compares regions with the noise of a camera photo, which a PNG (screenshots, graphics) rarely carries'),
      );
      checkAborted(signal);
    }
  } else {
    const tooLarge = pixels > COMPRESSION_MAX_PIXELS;
    compressionHistory = { jpegFile: image.format === 'jpeg', quality: table ? estimateIjgQuality(table).quality : null, blockingInPixels: 0, note: tooLarge ? 'image over the full-resolution limit for compression analysis' : 'image too small for compression analysis' };
    const reason = tooLarge
      ? `image over ${COMPRESSION_MAX_PIXELS} pixels: compression methods need the full-resolution 8x8 grid and were not run`
      : `image of ${wholeBlocks} whole 8x8 blocks: compression methods compare blocks with each other and need at least ${COMPRESSION_MIN_BLOCKS}`;
    methods.push(skippedMethod('ela', ELA_LABEL, reason), skippedMethod('jpeg-ghost', GHOST_LABEL, reason), skippedMethod('double-jpeg', DOUBLE_JPEG_LABEL, reason), skippedMethod('grid-alignment', GRID_METHOD_LABEL, reason));
    if (cameraNoise) methods.push(skippedMethod('missing-noise', MISSING_NOISE_LABEL, tooLarge ? `image over ${COMPRESSION_MAX_PIXELS} pixels: the camera's noise is compared at full resolution` : reason));
  }

  const grey = await decodePixels(image, { channels: 1, maxPixels: GEOMETRY_MAX_PIXELS });
  const greyFloat = new Float32Array(grey.data);
  checkAborted(signal);
  methods.push(noiseLevelInconsistency(greyFloat, grey.width, grey.height));
  checkAborted(signal);
  const small = await decodePixels(image, { channels: 1, maxPixels: COPY_MOVE_MAX_PIXELS });
  const singleCompression = methods.find((m) => m.id === 'double-jpeg')?.map ?? null;
  methods.push(copyMoveDetection(new Float32Array(small.data), small.width, small.height, signal, { full, singleCompression, priorJpegGrid }));
  checkAborted(signal);
  return { methods, compressionHistory, analysisScale: grey.scale };
}

/**
 * The learned map is trusted in the heatmap like the most reliable model-free method; so is the
 * missing-noise map, which joins the heatmap only where it decided.
 */
const LEARNED_RELIABILITY = 1;
const reliabilityOf = (id: MethodResult['id']) => (id === 'learned' || id === 'missing-noise' ? LEARNED_RELIABILITY : (model.reliability[id] ?? 0));
/**
 * The localiser was trained and validated on photos of 256x256; its calibration is not
 * validated on full-size camera photos (untouched 1.5 MP photos scored 0.65-0.95 with v1, 0.08-0.61
 * with v2, and 50 other untouched photos of 0.7-16 MP up to 0.78 with v2), so above this size
 * it only corroborates the model-free methods and never decides alone.
 */
const LEARNED_DECIDES_MAX_PIXELS = 300_000;
/** Its smallest training crop: on a smaller image the map has no context it was validated on. */
const LEARNED_DECIDES_MIN_SIDE = 128;

/**
 * `learnedModels`: run the learned localiser (the built-in one, or an operator pack replacing
 * it from this MODELS_DIR); `cameraNoise`: the missing-noise method. Document scans leave both out.
 */
export async function analyzeImageForgery(path: string, signal: AbortSignal, options: { learnedModels?: { modelsDir: string | null }; cameraNoise?: boolean } = {}): Promise<ForgeryAnalysis> {
  const image = await loadImage(path);
  checkAborted(signal);
  const { methods, compressionHistory, analysisScale } = await runForgeryMethods(image, signal, { cameraNoise: options.cameraNoise });
  const fill = methods.find((m) => m.id === 'missing-noise' && m.map);
  // Its rule may be withdrawn from deciding (forgery-fusion.json says why): then it is only reported.
  const fillChance = fill ? fillProbability(fill.peak, model.missingNoise.rule) : null;
  const filledRegion = fillChance === null ? null : { probability: fillChance, decides: fillDecides(fillChance) };
  let learned: ForgeryAnalysis['learned'] = null;
  if (options.learnedModels) {
    const outcome = await runLocaliser(image, options.learnedModels.modelsDir);
    checkAborted(signal);
    if ('method' in outcome) {
      methods.push(outcome.method);
      learned = { probability: outcome.probability, thresholds: outcome.thresholds, decides: image.width * image.height <= LEARNED_DECIDES_MAX_PIXELS && Math.min(image.width, image.height) >= LEARNED_DECIDES_MIN_SIDE };
    } else {
      methods.push(skippedMethod('learned', 'Learned localiser', `the learned localiser did not load: ${outcome.problem}`));
    }
  }
  const { width, height } = image;

  const cell = Math.max(8, Math.ceil(Math.max(width, height) / HEATMAP_MAX_CELLS));
  const cols = Math.ceil(width / cell), rows = Math.ceil(height / cell);
  const resampled = new Map<MethodResult['id'], BlockMap>();
  for (const method of methods) if (method.map) resampled.set(method.id, resampleMap(method.map, cols, rows));
  // Outside the sizes it was validated on, the localiser's map is reported but not fused, as its score only corroborates there.
  // The missing-noise map likewise joins only where the method decided: below that, natural smooth areas would light it.
  const fusedMaps = [...resampled].filter(([id]) => (id !== 'learned' || learned?.decides) && (id !== 'missing-noise' || filledRegion?.decides));
  // Weighted maximum: a region the most reliable method is sure about stays hot; weaker
  // methods count in proportion to their fitted weight (0 for methods that did not help).
  const fusedValues = new Float32Array(cols * rows);
  for (let i = 0; i < fusedValues.length; i++) {
    let hottest = 0;
    for (const [id, map] of fusedMaps) hottest = Math.max(hottest, reliabilityOf(id) * map.values[i]!);
    fusedValues[i] = hottest;
  }
  const fused = smoothMap({ values: fusedValues, cols, rows }, 1);

  const regions: ForgeryRegion[] = regionsOf(fused, REGION_THRESHOLD, width, height, 3)
    .slice(0, 10)
    .map((box) => {
      const c0 = Math.floor(box.x / cell), c1 = Math.min(cols - 1, Math.floor((box.x + box.width - 1) / cell));
      const r0 = Math.floor(box.y / cell), r1 = Math.min(rows - 1, Math.floor((box.y + box.height - 1) / cell));
      const contributions = fusedMaps.map(([id, map]) => {
        let sum = 0, count = 0, peak = 0;
        for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) { sum += map.values[r * cols + c]!; count++; }
        // The fused map is smoothed over 3x3 cells, so a hot cell's evidence may lie one cell outside the box.
        for (let r = Math.max(0, r0 - 1); r <= Math.min(rows - 1, r1 + 1); r++) for (let c = Math.max(0, c0 - 1); c <= Math.min(cols - 1, c1 + 1); c++) peak = Math.max(peak, map.values[r * cols + c]!);
        // Weighted evidence, the same quantity that lit the fused map.
        return { id, mean: count ? (reliabilityOf(id) * sum) / count : 0, peak: reliabilityOf(id) * peak };
      }).sort((a, b) => b.mean - a.mean);
      // A method flagged the region if its own weighted map reaches the region threshold there.
      // The hottest cell's method does; should rounding the box to cells miss that cell, the
      // strongest inside the box is named.
      const reaching = contributions.filter((c) => c.peak >= REGION_THRESHOLD);
      const flagging = reaching.length ? reaching : contributions.slice(0, 1);
      return {
        x: box.x,
        y: box.y,
        width: box.width,
        height: box.height,
        method: flagging[0]?.id ?? 'ela',
        methods: flagging.map((c) => c.id),
        score: box.score,
      };
    });

  // zlib level 2: the same pixels as level 6 at a fifth of the time (a 12 MP heatmap: 22 ms
  // against 116 ms) for a file about 1.6 times larger (780 KiB against 480 KiB).
  const heatmapPng = await sharp(mapToGrey(fused, width, height), { raw: { width, height, channels: 1 } })
    .toColourspace('b-w')
    .png({ compressionLevel: 2 })
    .toBuffer();

  const fitted = imageWeights(image.format, image.width * image.height);
  const classicScore = withFilledRegion(fuseScore(methods, fitted), filledRegion);
  const score = learned?.decides ? decideWithLearned(learned.probability, classicScore) : corroborated(learned?.probability ?? null, learned?.thresholds ?? null, classicScore);
  const signals: Signal[] = methods.map((method) => ({
    id: method.id,
    label: method.label,
    score: method.map ? round4(method.id === 'learned' ? learned!.probability : method.id === 'missing-noise' ? filledRegion!.probability : method.peak) : null,
    weight: method.map ? (method.id === 'learned' ? 1 : method.id === 'missing-noise' ? (filledRegion!.decides ? 1 : 0) : round4(Math.abs(fitted.weights[method.id]?.peak ?? 0))) : 0,
    evidence: { ...method.evidence, ...(method.map && { peak: round4(method.peak), area: round4(method.area) }), ...(method.skipped && { skipped: method.skipped }) },
  }));
  return {
    score,
    signals,
    regions,
    heatmapPng,
    width,
    height,
    orientation: image.orientation,
    format: image.format,
    analysisScale: round4(analysisScale),
    compressionHistory,
    methodsRun: methods.filter((m) => m.map).map((m) => m.id),
    learned,
    classicScore,
    filledRegion,
    maps: { cell, cols, rows, fused: fused.values, byMethod: Object.fromEntries([...resampled].map(([id, map]) => [id, map.values])) },
  };
}

const detector: Detector = {
  ...DETECTOR,
  async load() {
    // The model-free methods need nothing; the learned localiser loads on first use (model-pack.ts caches it per thread).
  },
  async analyze(input: DetectorInput, signal: AbortSignal): Promise<DetectorOutput> {
    const file = input.files.find((f) => f.slotName === 'original') ?? input.files[0];
    if (!file) throw new Error('no input file');
    const analysis = await analyzeImageForgery(file.path, signal, { learnedModels: { modelsDir: input.modelsDir }, cameraNoise: true });
    // The learned localiser's validated thresholds when it ran on an image of its validated size;
    // model-free evidence decisive on its own keeps deciding `manipulated`, as it did before.
    const thresholds = analysis.learned?.decides ? analysis.learned.thresholds : null;
    const classicDecides = analysis.classicScore >= CLASSIC_DECISIVE;
    const threshold = thresholds ? (classicDecides ? Math.min(thresholds.manipulated, CLASSIC_DECISIVE) : thresholds.manipulated) : 0.5;
    // Nothing that may decide ran: no model-free method, and the localiser only outside its validated sizes.
    const noEvidence = analysis.methodsRun.every((id) => id === 'learned' && !analysis.learned?.decides);
    const inconclusive =
      noEvidence || (thresholds ? !classicDecides && analysis.score > thresholds.authentic && analysis.score < thresholds.manipulated : Math.abs(analysis.score - 0.5) < 0.1);
    const result = verdictResult({
      flag: 'isForged',
      detector: DETECTOR,
      // With no method able to run, the fusion's bias is all that is left: no evidence either way.
      score: noEvidence ? 0.5 : analysis.score,
      threshold,
      inconclusive,
      signals: analysis.signals,
      details: {
        decidedBy: noEvidence
          ? `nothing: no method could analyse a ${analysis.width}x${analysis.height} image (too small, or nothing in it varies; each signal says why), so the answer is inconclusive`
          : analysis.filledRegion?.decides && analysis.classicScore === analysis.filledRegion.probability && analysis.score === analysis.classicScore
            ? "missing camera noise: a region smoother than the camera's own noise where the image around it is as bright and as textured (a filled, removed or painted-over area), decisive on its own"
            : !analysis.learned
            ? 'the model-free methods (fitted fusion)'
            : !analysis.learned.decides
              ? `the model-free methods; the learned localiser, validated on ${LEARNED_DECIDES_MIN_SIDE}-256 px photos, only corroborates at this size`
              : analysis.classicScore >= CLASSIC_DECISIVE && analysis.classicScore > analysis.learned.probability
                ? 'model-free methods (decisive on their own), with the learned localiser'
                : 'the learned localiser (calibrated on held-out manipulations), with the model-free methods as signals',
        classicScore: round4(analysis.classicScore),
        regions: analysis.regions,
        image: { format: analysis.format, width: analysis.width, height: analysis.height, orientation: analysis.orientation, maxPixels: MAX_INPUT_PIXELS },
        analysisScale: analysis.analysisScale,
        compressionHistory: analysis.compressionHistory,
        methodsRun: analysis.methodsRun,
        heatmap: { artifact: 'forgery-heatmap.png', encoding: 'greyscale 0-255, same size as the input', orientation: 'the stored pixels, as regions: turned by image.orientation to lie over the upright image' },
      },
    });
    return {
      result: { ...result, regions: analysis.regions },
      artifacts: [{ name: 'forgery-heatmap.png', kind: 'heatmap', slotName: file.slotName, contentType: 'image/png', data: analysis.heatmapPng }],
    };
  },
};

export default detector;
