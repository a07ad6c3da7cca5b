/**
 * Turns Human's per-face output into the records the face detectors report: boxes and
 * landmarks in the pixel coordinates of the uploaded image, an L2-normalised embedding,
 * faces ordered largest first.
 */
import type { FaceResult } from '@vladmandic/human';
import { round4 } from '../result.js';
import { ALL_MODULES, detectFaces, loadHuman, type FaceModules, type RgbImage } from './human-runtime.js';
import type { DecodedImage } from './image-input.js';

/** Name and size of the embedding every face detector reports. */
export const EMBEDDING_MODEL = 'human-faceres-3.3.6';

export type Point = [number, number];

export interface FaceLandmarks {
  /** The subject's own left and right (the left eye appears on the right of the image). */
  leftEye: Point;
  rightEye: Point;
  noseTip: Point;
  mouthLeft: Point;
  mouthRight: Point;
}

export interface AnalysedFace {
  /** [x, y, width, height] in pixels of the uploaded (upright) image. */
  box: [number, number, number, number];
  detectionScore: number;
  landmarks: FaceLandmarks;
  /** Head pose in radians (yaw: left/right turn, pitch: up/down, roll: in-plane tilt). */
  pose: { yaw: number; pitch: number; roll: number } | null;
  embedding: number[] | null;
  age: number | null;
  gender: { label: 'male' | 'female' | 'unknown'; score: number } | null;
  emotion: Array<{ emotion: string; score: number }>;
  /** Human's antispoof (realness) and liveness model outputs, 0..1, 1 = real/live. */
  realness: number | null;
  liveness: number | null;
  /** The face's 468-point mesh in analysis pixels (for model-free cues), not reported. */
  meshAnalysisPixels: Point[];
  /** The box in analysis pixels (the decoded, possibly downscaled image). */
  boxAnalysisPixels: [number, number, number, number];
}

/** MediaPipe face-mesh vertex indices of the five classic landmarks. */
const MESH = {
  rightEye: [33, 133],
  leftEye: [263, 362],
  noseTip: [1],
  mouthRight: [61],
  mouthLeft: [291],
} as const;

export function l2Normalise(vector: readonly number[]): number[] {
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  return norm > 0 ? vector.map((value) => value / norm) : vector.map(() => 0);
}

/** Cosine similarity of two L2-normalised vectors. */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}

function meanPoint(mesh: FaceResult['mesh'], indices: readonly number[], scale: number): Point {
  let x = 0;
  let y = 0;
  for (const index of indices) {
    x += mesh[index]?.[0] ?? 0;
    y += mesh[index]?.[1] ?? 0;
  }
  return [round2((x / indices.length) * scale), round2((y / indices.length) * scale)];
}

const round2 = (value: number) => Math.round(value * 100) / 100;

function toAnalysedFace(face: FaceResult, image: DecodedImage): AnalysedFace {
  const s = image.scale;
  const [x, y, w, h] = face.box;
  const topEmotions = [...(face.emotion ?? [])].sort((a, b) => b.score - a.score);
  return {
    box: [Math.round(x * s), Math.round(y * s), Math.round(w * s), Math.round(h * s)],
    detectionScore: round4(face.score),
    landmarks: {
      leftEye: meanPoint(face.mesh, MESH.leftEye, s),
      rightEye: meanPoint(face.mesh, MESH.rightEye, s),
      noseTip: meanPoint(face.mesh, MESH.noseTip, s),
      mouthLeft: meanPoint(face.mesh, MESH.mouthLeft, s),
      mouthRight: meanPoint(face.mesh, MESH.mouthRight, s),
    },
    pose: face.rotation
      ? { yaw: round4(face.rotation.angle.yaw), pitch: round4(face.rotation.angle.pitch), roll: round4(face.rotation.angle.roll) }
      : null,
    embedding: face.embedding?.length ? l2Normalise(face.embedding) : null,
    age: typeof face.age === 'number' ? Math.round(face.age * 10) / 10 : null,
    gender: face.gender ? { label: face.gender, score: round4(face.genderScore ?? 0) } : null,
    emotion: topEmotions.map((entry) => ({ emotion: entry.emotion, score: round4(entry.score) })),
    realness: typeof face.real === 'number' ? face.real : null,
    liveness: typeof face.live === 'number' ? face.live : null,
    meshAnalysisPixels: face.mesh.map((point) => [point[0], point[1]] as Point),
    boxAnalysisPixels: [x, y, w, h],
  };
}

/** Share of the smaller box covered by the larger: 1 when one box lies inside the other. */
function overlapOfSmaller(a: readonly number[], b: readonly number[]): number {
  const width = Math.min(a[0]! + a[2]!, b[0]! + b[2]!) - Math.max(a[0]!, b[0]!);
  const height = Math.min(a[1]! + a[3]!, b[1]! + b[3]!) - Math.max(a[1]!, b[1]!);
  if (width <= 0 || height <= 0) return 0;
  return (width * height) / Math.min(a[2]! * a[3]!, b[2]! * b[3]!);
}

/** A copy of a rectangle of the image (analysis pixels). */
function tileOf(image: DecodedImage, left: number, top: number, width: number, height: number): RgbImage {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const start = ((top + y) * image.width + left) * 3;
    data.set(image.data.subarray(start, start + width * 3), y * width * 3);
  }
  return { data, width, height };
}

/** Moves a face found in a tile back into the coordinates of the whole image. */
function shiftFace(face: FaceResult, dx: number, dy: number): FaceResult {
  const [x, y, w, h] = face.box;
  return {
    ...face,
    box: [x + dx, y + dy, w, h],
    mesh: face.mesh.map((point) => [point[0] + dx, point[1] + dy, point[2] ?? 0] as FaceResult['mesh'][number]),
  };
}

/**
 * The face detector sees the image at 256 pixels, so faces under ~1/12 of the longer side
 * are missed. The small-face search also looks at 2×2 overlapping tiles (a quarter overlap,
 * so a face cut by one tile lies whole in its neighbour); a tile face that lies mostly
 * inside a face already found is the same face and is dropped.
 */
async function detectInTiles(image: DecodedImage, modules: FaceModules, found: FaceResult[]): Promise<FaceResult[]> {
  const human = await loadHuman();
  const tileWidth = Math.ceil(image.width / 1.75);
  const tileHeight = Math.ceil(image.height / 1.75);
  const faces = [...found];
  for (const top of [0, image.height - tileHeight]) {
    for (const left of [0, image.width - tileWidth]) {
      const inTile = await detectFaces(human, tileOf(image, left, top, tileWidth, tileHeight), modules);
      for (const face of inTile.map((f) => shiftFace(f, left, top))) {
        if (faces.every((known) => overlapOfSmaller(known.box, face.box) < 0.5)) faces.push(face);
      }
    }
  }
  return faces;
}

/**
 * Detects and analyses every face of a decoded image, largest face first. `smallFaces`
 * adds the tiled search (about 5x the detection cost) on images of 768 pixels and more.
 */
export async function analyseFaces(image: DecodedImage, modules: FaceModules = ALL_MODULES, smallFaces = false): Promise<AnalysedFace[]> {
  const human = await loadHuman();
  let faces = await detectFaces(human, image, modules);
  if (smallFaces && Math.max(image.width, image.height) >= 768) faces = await detectInTiles(image, modules, faces);
  return faces.map((face) => toAnalysedFace(face, image)).sort((a, b) => b.box[2] * b.box[3] - a.box[2] * a.box[3]);
}
