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

type Point = [number, number];

const FACE_OVAL = [10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148, 176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109];
const OUTER_LIPS = [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 409, 270, 269, 267, 0, 37, 39, 40, 185];
const EYES_AND_BROWS = [
  33, 7, 163, 144, 145, 153, 154, 155, 133, 173, 157, 158, 159, 160, 161, 246, 70, 63, 105, 66, 107, 55, 65, 52, 53, 46,
  263, 249, 390, 373, 374, 380, 381, 382, 362, 398, 384, 385, 386, 387, 388, 466, 300, 293, 334, 296, 336, 285, 295, 282, 283, 276,
];

function scaled(points: Point[], factor: number): Point[] {
  const cx = points.reduce((s, p) => s + p[0], 0) / points.length, cy = points.reduce((s, p) => s + p[1], 0) / points.length;
  return points.map(([x, y]) => [cx + (x - cx) * factor, cy + (y - cy) * factor]);
}

/** Convex hull (Andrew's monotone chain), counter-clockwise in image coordinates. */
function hull(points: Point[]): Point[] {
  const sorted = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o: Point, a: Point, b: Point) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const half = (list: Point[]) => {
    const out: Point[] = [];
    for (const p of list) {
      while (out.length >= 2 && cross(out[out.length - 2]!, out[out.length - 1]!, p) <= 0) out.pop();
      out.push(p);
    }
    return out.slice(0, -1);
  };
  return [...half(sorted), ...half([...sorted].reverse())];
}

/** Pixels inside a convex polygon, as a mask over the frame. */
function polygonMask(polygon: Point[], width: number, height: number): Uint8Array {
  const mask = new Uint8Array(width * height);
  const convex = hull(polygon);
  const inside = (x: number, y: number) => convex.every((a, i) => {
    const b = convex[(i + 1) % convex.length]!;
    return (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]) >= 0;
  });
  const x0 = Math.max(1, Math.floor(Math.min(...convex.map((p) => p[0])))), x1 = Math.min(width - 2, Math.ceil(Math.max(...convex.map((p) => p[0]))));
  const y0 = Math.max(1, Math.floor(Math.min(...convex.map((p) => p[1])))), y1 = Math.min(height - 2, Math.ceil(Math.max(...convex.map((p) => p[1]))));
  for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) if (inside(x + 0.5, y + 0.5)) mask[y * width + x] = 1;
  return mask;
}

function boxBlur5(plane: Float32Array, width: number, height: number): Float32Array {
  const out = new Float32Array(plane.length);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    let sum = 0;
    for (let dy = -2; dy <= 2; dy++) for (let dx = -2; dx <= 2; dx++) sum += plane[Math.min(height - 1, Math.max(0, y + dy)) * width + Math.min(width - 1, Math.max(0, x + dx))]!;
    out[y * width + x] = sum / 25;
  }
  return out;
}

/** Mean squared 3x3 (4-neighbour) Laplacian over the mask's pixels, NaN for an empty mask. */
function laplacianEnergy(plane: Float32Array, width: number, mask: Uint8Array): number {
  let sum = 0, count = 0;
  for (let p = 0; p < mask.length; p++) {
    if (!mask[p]) continue;
    const l = 4 * plane[p]! - plane[p - 1]! - plane[p + 1]! - plane[p - width]! - plane[p + width]!;
    sum += l * l;
    count++;
  }
  return count ? sum / count : Number.NaN;
}

function frameCues(frame: DecodedImage, mesh: Point[]) {
  const { width, height } = frame;
  const plane = luma({ ...frame, channels: 3 }), blurred = boxBlur5(plane, width, height);
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

function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!sorted.length) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface ClipCues { file: string; label: number; method: string | null; pairGroup: string | null; cues: Record<string, number> }

/** Mann-Whitney AUC of positives over negatives (ties count half), NaN when a class is empty. */
function auc(positives: number[], negatives: number[]): number {
  if (!positives.length || !negatives.length) return Number.NaN;
  let wins = 0;
  for (const p of positives) for (const n of negatives) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / positives.length / negatives.length;
}

/** `summary <set name>=<cues json>...`: the figures stop 78 declared, per cue. */
async function summary(args: string[]) {
  const sets = await Promise.all(args.map(async (arg) => {
    const [name, path] = arg.split('=') as [string, string];
    return { name, clips: (JSON.parse(await readFile(path, 'utf8')) as ClipCues[]).filter((clip) => CUE_NAMES.every((cue) => Number.isFinite(clip.cues[cue]))) };
  }));
  const union = sets.flatMap((set) => set.clips);
  const lipSync = (clip: ClipCues) => clip.label === 1 && /wav2lip|hyperlips/i.test(clip.method ?? '');
  const round3 = (v: number) => Math.round(v * 1000) / 1000;
  const figures = Object.fromEntries(CUE_NAMES.map((cue) => {
    const of = (clips: ClipCues[]) => round3(auc(clips.filter((c) => c.label === 1).map((c) => c.cues[cue]!), clips.filter((c) => c.label === 0).map((c) => c.cues[cue]!)));
    const reals = union.filter((c) => c.label === 0);
    let pairs = 0, right = 0;
    for (const fake of union.filter((c) => c.label === 1 && c.pairGroup)) {
      for (const real of reals.filter((c) => c.pairGroup === fake.pairGroup)) {
        pairs++;
        right += fake.cues[cue]! > real.cues[cue]! ? 1 : fake.cues[cue]! === real.cues[cue]! ? 0.5 : 0;
      }
    }
    return [cue, {
      union: of(union),
      ...Object.fromEntries(sets.map((set) => [set.name, of(set.clips)])),
      lipSyncs: of([...union.filter(lipSync), ...reals]),
      swapsAndReenactments: of(union.filter((c) => !lipSync(c))),
      withinPairGroups: { pairs, share: pairs ? round3(right / pairs) : null },
    }];
  }));
  const counts = { clips: union.length, fakes: union.filter((c) => c.label === 1).length, lipSyncs: union.filter(lipSync).length, perSet: Object.fromEntries(sets.map((set) => [set.name, set.clips.length])) };
  console.log(JSON.stringify({ counts, figures }, null, 1));
}

async function main() {
  if (process.argv[2] === 'summary') return summary(process.argv.slice(3));
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
