/**
 * Stop 78: model-free sharpness cues measured inside one face, on labelled clips (measure only).
 *
 * Face-warping artefacts (Y. Li and S. Lyu, "Exposing DeepFake Videos By Detecting Face Warping
 * Artifacts", CVPRW 2019, §3): a generator renders the face, or only its lower half, at a lower
 * resolution than the frame and warps it in, so the rendered part is softer than what surrounds
 * it. Lip-sync tools re-render the lower half of the face box only (K. R. Prajwal et al.,
 * "A Lip Sync Expert Is All You Need", ACM MM 2020, §3.1: the generator sees the face with its
 * lower half masked, at 96 px). Each cue compares two regions of the same face in the same frame,
 * so a clip's own resolution and compression weigh on both sides.
 *
 * On the frames faceswap-detection samples (`sampleFrames`, 16), the largest face's 468-point
 * mesh (`analyseFaces`); per frame and region, over the frame's luma (BT.601):
 *   fine   = mean squared 3x3 Laplacian;
 *   coarse = mean squared 3x3 Laplacian of the luma after a 5x5 box blur;
 *   detail = fine / coarse (how much of the region's structure lives at the finest scale).
 * Regions (MediaPipe mesh vertices): eyes = both eyes' and brows' vertices; mouth = the outer lip
 * contour scaled by 1.3 about its centroid; inner = the face oval scaled by 0.7; ring = the oval
 * scaled by 1.35 minus the oval scaled by 1.1 (stop 77's). Each region is the convex hull of its
 * points, clipped to the frame. Cues, higher = read as manipulated, a clip's = the median over its
 * frames with a face:
 *   mouthEnergy  = ln(fine(eyes) / fine(mouth))
 *   mouthDetail  = ln(detail(eyes) / detail(mouth))
 *   ringEnergy   = ln(fine(ring) / fine(inner))        (stop 77's cue, recomputed)
 *   innerDetail  = ln(detail(ring) / detail(inner))
 *
 *   node --import tsx training/face-forgery/within-face-cues.ts <folder with labels.csv> <survey json> <out json>
 *   node --import tsx training/face-forgery/within-face-cues.ts summary val74=<out json> val77=<out json>
 *
 * Evaluation only: never trains or tunes the shipped detector.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sampleFrames } from '../../server/src/detectors/face/video-frames.js';
import { analyseFaces } from '../../server/src/detectors/face/face-analysis.js';
import type { DecodedImage } from '../../server/src/detectors/face/image-input.js';
import { luma } from '../../server/src/detectors/video/frame-pairs.js';
import { EYES_AND_BROWS, FACE_OVAL, laplacianEnergy, median, OUTER_LIPS, polygonMask, scaled, summariseCues, type Point } from './face-regions.js';

function boxBlur5(plane: Float32Array, width: number, height: number): Float32Array {
  const out = new Float32Array(plane.length);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    let sum = 0;
    for (let dy = -2; dy <= 2; dy++) for (let dx = -2; dx <= 2; dx++) sum += plane[Math.min(height - 1, Math.max(0, y + dy)) * width + Math.min(width - 1, Math.max(0, x + dx))]!;
    out[y * width + x] = sum / 25;
  }
  return out;
}

function frameCues(frame: DecodedImage, mesh: Point[]) {
  const { width, height } = frame;
  const plane = luma({ ...frame, data: Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength), channels: 3 }), blurred = boxBlur5(plane, width, height);
  const region = (points: Point[]) => polygonMask(points, width, height);
  const oval = FACE_OVAL.map((i) => mesh[i]!);
  const eyes = region(EYES_AND_BROWS.map((i) => mesh[i]!));
  const mouth = region(scaled(OUTER_LIPS.map((i) => mesh[i]!), 1.3));
  const inner = region(scaled(oval, 0.7));
  const outer = region(scaled(oval, 1.35)), face = region(scaled(oval, 1.1));
  const ring = outer.map((v, p) => (v && !face[p] ? 1 : 0));
  const fine = (mask: Uint8Array) => laplacianEnergy(plane, width, mask);
  const detail = (mask: Uint8Array) => fine(mask) / laplacianEnergy(blurred, width, mask);
  return {
    mouthEnergy: Math.log(fine(eyes) / fine(mouth)),
    mouthDetail: Math.log(detail(eyes) / detail(mouth)),
    ringEnergy: Math.log(fine(ring) / fine(inner)),
    innerDetail: Math.log(detail(ring) / detail(inner)),
  };
}

type Cues = ReturnType<typeof frameCues>;
const CUE_NAMES: Array<keyof Cues> = ['mouthEnergy', 'mouthDetail', 'ringEnergy', 'innerDetail'];

async function main() {
  if (process.argv[2] === 'summary') return summariseCues(process.argv.slice(3), CUE_NAMES);
  const [folder, surveyPath, outPath] = process.argv.slice(2);
  if (!folder || !surveyPath || !outPath) throw new Error('usage: within-face-cues.ts <folder with labels.csv> <survey json> <out json>');
  const survey = JSON.parse(await readFile(surveyPath, 'utf8')) as { clips: Array<{ file: string; method?: string; dataset?: string; pairGroup?: string }> };
  const byFile = new Map(survey.clips.map((clip) => [clip.file, clip]));
  const labels = (await readFile(join(folder, 'labels.csv'), 'utf8')).trim().split('\n').slice(1).map((line) => line.split(','));
  const clips = [];
  for (const [file, label] of labels) {
    const clip = byFile.get(file!);
    const perFrame: Cues[] = [];
    let problem: string | null = null;
    try {
      const sampled = await sampleFrames(join(folder, file!), 16, new AbortController().signal);
      for (const frame of sampled.frames) {
        const [face] = await analyseFaces(frame, { emotion: false, spoof: false });
        if (face) perFrame.push(frameCues(frame, face.meshAnalysisPixels));
      }
    } catch (error) {
      problem = (error as Error).message;
    }
    const cues = Object.fromEntries(CUE_NAMES.map((name) => [name, median(perFrame.map((c) => c[name]))]));
    clips.push({ file, label: Number(label), method: clip?.method ?? null, pairGroup: clip?.pairGroup ?? null, frames: perFrame.length, problem, cues });
    console.log(file, label, perFrame.length, CUE_NAMES.map((name) => `${name} ${(cues[name] as number).toFixed(3)}`).join(' '), problem ?? '');
  }
  await writeFile(outPath, JSON.stringify(clips, null, 1) + '\n');
}

await main();
