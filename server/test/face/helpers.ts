/** Shared fixtures for the face tests: sample photos shipped inside @vladmandic/human. */
import { copyFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BUILT_IN_MODELS_DIR } from '../../src/detectors/model-pack.js';
import type { DetectorFile, DetectorInput } from '../../src/detectors/types.js';

const require = createRequire(import.meta.url);
const assets = join(dirname(require.resolve('@vladmandic/human')), '..', 'assets');

/** One man, photographed frontally (800x564). */
export const ONE_FACE = join(assets, 'screenshot-faceid.jpg');
/** Five different people in a row of portraits (800x718). */
export const FIVE_FACES = join(assets, 'screenshot-facedetect.jpg');

export async function scratchDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'mediaproof-face-test-'));
}

export async function writeScratch(dir: string, name: string, bytes: Uint8Array): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, bytes);
  return path;
}

export function fileOf(path: string, slotName = 'original', contentType = 'image/jpeg'): DetectorFile {
  return { slotName, contentType, fileName: path.split('/').pop()!, sizeBytes: 0, path };
}

export function inputOf(
  taskTypeSlug: string,
  files: DetectorFile[],
  parameters: Record<string, unknown> = {},
  workDir = tmpdir(),
): DetectorInput {
  return { jobId: `test-${taskTypeSlug}`, taskTypeSlug, files, parameters, workDir, modelsDir: null };
}

export const noAbort = () => new AbortController().signal;

/**
 * An operator pack in `dir` of each named built-in model: the same weights, the descriptor with
 * `overrides` (e.g. `{ weight: 1 }`: a pack of a built-in's name replaces it). Returns `dir`.
 */
export async function operatorPack(dir: string, names: readonly string[], overrides: Record<string, unknown>): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const name of names) {
    await copyFile(join(BUILT_IN_MODELS_DIR, `${name}.onnx`), join(dir, `${name}.onnx`));
    const descriptor = JSON.parse(await readFile(join(BUILT_IN_MODELS_DIR, `${name}.json`), 'utf8'));
    await writeFile(join(dir, `${name}.json`), JSON.stringify({ ...descriptor, ...overrides }));
  }
  return dir;
}

export function dot(a: readonly number[], b: readonly number[]): number {
  return a.reduce((sum, value, i) => sum + value * b[i]!, 0);
}

/** A still image turned into an H.264 clip with a slow zoom, so frames differ slightly. */
export async function stillClip(dir: string, image: string, name: string, seconds: number): Promise<string> {
  const { runFfmpeg } = await import('../../src/detectors/media/ffmpeg.js');
  const path = join(dir, name);
  await runFfmpeg([
    '-y',
    '-loop',
    '1',
    '-i',
    image,
    '-t',
    String(seconds),
    '-r',
    '5',
    '-vf',
    "scale=640:-2,zoompan=z='1+0.003*on':d=1:s=640x452",
    '-pix_fmt',
    'yuv420p',
    '-c:v',
    'libx264',
    path,
  ]);
  return path;
}

/**
 * Five one-second shots of the man of ONE_FACE; in the third, a woman's face from FIVE_FACES
 * is pasted over his: a crude frame-level face swap. Sampling five frames hits it once.
 */
export async function flickerClip(dir: string): Promise<string> {
  const { default: sharp } = await import('sharp');
  const { runFfmpeg } = await import('../../src/detectors/media/ffmpeg.js');
  const [left, top, size] = [15, 139, 134];
  const womanFace = await sharp(FIVE_FACES).extract({ left: 473, top: 341, width: 143, height: 143 }).resize(size, size).toBuffer();
  const swapped = await writeScratch(
    dir,
    'swapped.jpg',
    await sharp(ONE_FACE)
      .composite([{ input: womanFace, left, top }])
      .jpeg()
      .toBuffer(),
  );
  const still = await writeScratch(dir, 'man-still.jpg', await sharp(ONE_FACE).jpeg().toBuffer());
  const shots = [still, still, swapped, still, still].map((path) => `file '${path}'\nduration 1`).join('\n');
  const list = await writeScratch(dir, 'list.txt', Buffer.from(`${shots}\nfile '${still}'\n`));
  const clip = join(dir, 'flicker.mp4');
  await runFfmpeg(['-y', '-f', 'concat', '-safe', '0', '-i', list, '-vf', 'fps=5,format=yuv420p', '-c:v', 'libx264', clip]);
  return clip;
}
