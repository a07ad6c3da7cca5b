/**
 * Stop 79: model-free temporal cues of the face against its own border, on labelled clips (measure only).
 *
 * A face swap or a lip-sync renders the face in every frame on its own and blends it in, with a colour correction
 * fitted per frame; nothing ties one frame's rendering to the next, so the rendered part flickers against the
 * frame around it (Y. Zheng et al., "Exploring Temporal Coherence for More General Video Face Forgery
 * Detection", ICCV 2021, §1 and §3: forgeries are detected by temporal incoherence alone). A real face's colour and
 * sharpness against its own border change only with light and pose, slowly. Stop 78's cues compared levels, which
 * each source's filming and compression set; these compare a clip with itself over time.
 *
 * Regions per frame, from the largest face's 468-point mesh (`analyseFaces`): inner = the face oval scaled by 0.7
 * (what a swap or a lip-sync renders); border = the oval minus the oval scaled by 0.85 (forehead edge, cheeks and
 * jaw, mostly left to the target face by the blend). Per frame: dCb, dCr = the mean BT.601 chroma of inner minus
 * that of border; s = ln(fine(border) / fine(inner)), fine = mean squared 3x3 Laplacian of the luma. Cues, higher
 * = read as manipulated:
 *   pairChromaFlicker    = median over 12 pairs of consecutive frames (`sampleFramePairs`, evenly spaced) of
 *                          hypot(Δ dCb, Δ dCr) between the two frames; needs ≥ 4 pairs with a face in both;
 *   pairSharpnessFlicker = median over those pairs of |Δ s|;
 *   clipChromaSpread     = 1.4826 × hypot(MAD dCb, MAD dCr) over the 16 frames faceswap-detection samples
 *                          (`sampleFrames`); needs ≥ 8 frames with a face;
 *   clipSharpnessSpread  = 1.4826 × MAD s over those frames.
 *
 *   node --import tsx training/face-forgery/temporal-cues.ts <folder with labels.csv> <survey json> <out json>
 *   node --import tsx training/face-forgery/temporal-cues.ts summary val74=<out json> val77=<out json>
 *
 * Evaluation only: never trains or tunes the shipped detector.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sampleFrames } from '../../server/src/detectors/face/video-frames.js';
import { analyseFaces } from '../../server/src/detectors/face/face-analysis.js';
import type { DecodedImage } from '../../server/src/detectors/face/image-input.js';
import type { Raster } from '../../server/src/detectors/image/image-input.js';
import { luma, sampleFramePairs } from '../../server/src/detectors/video/frame-pairs.js';
import { FACE_OVAL, laplacianEnergy, median, polygonMask, scaled, summariseCues, type Point } from './face-regions.js';

const CUE_NAMES = ['pairChromaFlicker', 'pairSharpnessFlicker', 'clipChromaSpread', 'clipSharpnessSpread'];
const PAIRS = 12, MIN_PAIRS = 4;
const FRAMES = 16, MIN_FRAMES = 8;
const MAD_TO_SIGMA = 1.4826;

interface FrameMeasures { dCb: number; dCr: number; s: number }

/** Mean BT.601 chroma (Cb, Cr) of an RGB raster over a mask. */
function meanChroma(rgb: Uint8Array, mask: Uint8Array): [number, number] {
  let cb = 0, cr = 0, count = 0;
  for (let p = 0; p < mask.length; p++) {
    if (!mask[p]) continue;
    const r = rgb[3 * p]!, g = rgb[3 * p + 1]!, b = rgb[3 * p + 2]!;
    cb += -0.168736 * r - 0.331264 * g + 0.5 * b;
    cr += 0.5 * r - 0.418688 * g - 0.081312 * b;
    count++;
  }
  return count ? [cb / count, cr / count] : [Number.NaN, Number.NaN];
}

function frameMeasures(frame: Raster, mesh: Point[]): FrameMeasures {
  const { width, height } = frame;
  const oval = FACE_OVAL.map((i) => mesh[i]!);
  const inner = polygonMask(scaled(oval, 0.7), width, height);
  const whole = polygonMask(oval, width, height), core = polygonMask(scaled(oval, 0.85), width, height);
  const border = whole.map((v, p) => (v && !core[p] ? 1 : 0));
  const [cbInner, crInner] = meanChroma(frame.data, inner), [cbBorder, crBorder] = meanChroma(frame.data, border);
  const plane = luma(frame);
  return { dCb: cbInner - cbBorder, dCr: crInner - crBorder, s: Math.log(laplacianEnergy(plane, width, border) / laplacianEnergy(plane, width, inner)) };
}

/** The largest face's measures in a frame, null without a face. */
async function measure(frame: Raster): Promise<FrameMeasures | null> {
  const image: DecodedImage = { data: frame.data, width: frame.width, height: frame.height, originalWidth: frame.width, originalHeight: frame.height, scale: 1, format: 'raw' };
  const [face] = await analyseFaces(image, { emotion: false, spoof: false });
  return face ? frameMeasures(frame, face.meshAnalysisPixels) : null;
}

function mad(values: number[]): number {
  const centre = median(values);
  return median(values.map((v) => Math.abs(v - centre)));
}

async function clipCues(path: string, signal: AbortSignal) {
  const flickers: Array<{ chroma: number; sharpness: number }> = [];
  for (const pair of (await sampleFramePairs(path, PAIRS, signal)).pairs) {
    if (!pair.second) continue;
    const [a, b] = [await measure(pair.first), await measure(pair.second)];
    if (a && b) flickers.push({ chroma: Math.hypot(b.dCb - a.dCb, b.dCr - a.dCr), sharpness: Math.abs(b.s - a.s) });
  }
  const frames: FrameMeasures[] = [];
  for (const frame of (await sampleFrames(path, FRAMES, signal)).frames) {
    const measures = await measure({ data: Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength), width: frame.width, height: frame.height, channels: 3 });
    if (measures) frames.push(measures);
  }
  const pairsOk = flickers.length >= MIN_PAIRS, framesOk = frames.length >= MIN_FRAMES;
  return {
    pairs: flickers.length,
    frames: frames.length,
    cues: {
      pairChromaFlicker: pairsOk ? median(flickers.map((f) => f.chroma)) : Number.NaN,
      pairSharpnessFlicker: pairsOk ? median(flickers.map((f) => f.sharpness)) : Number.NaN,
      clipChromaSpread: framesOk ? MAD_TO_SIGMA * Math.hypot(mad(frames.map((f) => f.dCb)), mad(frames.map((f) => f.dCr))) : Number.NaN,
      clipSharpnessSpread: framesOk ? MAD_TO_SIGMA * mad(frames.map((f) => f.s)) : Number.NaN,
    },
  };
}

async function main() {
  if (process.argv[2] === 'summary') return summariseCues(process.argv.slice(3), CUE_NAMES);
  const [folder, surveyPath, outPath] = process.argv.slice(2);
  if (!folder || !surveyPath || !outPath) throw new Error('usage: temporal-cues.ts <folder with labels.csv> <survey json> <out json>');
  const survey = JSON.parse(await readFile(surveyPath, 'utf8')) as { clips: Array<{ file: string; method?: string; pairGroup?: string }> };
  const byFile = new Map(survey.clips.map((clip) => [clip.file, clip]));
  const labels = (await readFile(join(folder, 'labels.csv'), 'utf8')).trim().split('\n').slice(1).map((line) => line.split(','));
  const clips = [];
  for (const [file, label] of labels) {
    const clip = byFile.get(file!);
    let measured: Awaited<ReturnType<typeof clipCues>> = { pairs: 0, frames: 0, cues: Object.fromEntries(CUE_NAMES.map((name) => [name, Number.NaN])) as never };
    let problem: string | null = null;
    try {
      measured = await clipCues(join(folder, file!), new AbortController().signal);
    } catch (error) {
      problem = (error as Error).message;
    }
    clips.push({ file, label: Number(label), method: clip?.method ?? null, pairGroup: clip?.pairGroup ?? null, ...measured, problem });
    console.log(file, label, measured.pairs, measured.frames, CUE_NAMES.map((name) => `${name} ${(measured.cues as Record<string, number>)[name]!.toFixed(3)}`).join(' '), problem ?? '');
  }
  await writeFile(outPath, JSON.stringify(clips, null, 1) + '\n');
}

await main();
