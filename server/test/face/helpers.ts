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

/** The NAL units of an H.264 Annex B stream, each with its start code. */
function nalUnits(stream: Buffer): Buffer[] {
  const starts: number[] = [];
  for (let i = 0; i + 3 <= stream.length; i++) if (stream[i] === 0 && stream[i + 1] === 0 && stream[i + 2] === 1) starts.push(i);
  return starts.map((start, k) => stream.subarray(start, starts[k + 1] ?? stream.length));
}
const nalType = (unit: Buffer) => unit[3]! & 31;

/**
 * A clip whose later keyframe does not decode on its own, as clips cut by stream copy are:
 * `source` re-encoded (CABAC, a keyframe every `keyframeSeconds`) with its parameter sets sent
 * once, at the start, after a one-frame grey CAVLC lead whose parameter sets become the
 * container's. Decoded from the start every frame is clean; a fast seek to the second keyframe
 * decodes it with the lead's parameter sets, and ffmpeg reports the damage. `damageSecondKeyframe`
 * also overwrites part of that keyframe, so it is damaged however it is reached. 25 fps, `size` pixels.
 */
export async function clipWithStartOnlyParameterSets(dir: string, source: string[], name: string, keyframeSeconds: number, damageSecondKeyframe = false, size = '320x240'): Promise<string> {
  const { runFfmpeg } = await import('../../src/detectors/media/ffmpeg.js');
  const lead = join(dir, `${name}.lead.h264`), body = join(dir, `${name}.body.h264`), joined = join(dir, `${name}.h264`), path = join(dir, name);
  const frames = 25 * keyframeSeconds;
  await runFfmpeg([...source, '-r', '25', '-vf', `scale=${size.replace('x', ':')}`, '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-x264-params', `cabac=1:keyint=${frames}:min-keyint=${frames}:scenecut=0`, '-f', 'h264', '-y', body]);
  await runFfmpeg(['-f', 'lavfi', '-i', `color=c=gray:s=${size}:r=25`, '-frames:v', '1', '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-x264-params', 'cabac=0', '-f', 'h264', '-y', lead]);
  const kept = nalUnits(await readFile(lead)).filter((unit) => nalType(unit) !== 6); // no SEI: x264's settings text
  const seen = new Set<number>();
  let keyframes = 0;
  for (const unit of nalUnits(await readFile(body))) {
    const type = nalType(unit);
    if (type === 7 || type === 8) {
      if (seen.has(type)) continue; // parameter sets only once, at the start
      seen.add(type);
    }
    if (type === 5 && ++keyframes === 2 && damageSecondKeyframe) {
      const damaged = Buffer.from(unit);
      for (let i = Math.floor(damaged.length / 3); i < damaged.length; i += 7) damaged[i] = 0x5a;
      kept.push(damaged);
      continue;
    }
    kept.push(unit);
  }
  await writeFile(joined, Buffer.concat(kept));
  await runFfmpeg(['-r', '25', '-i', joined, '-c', 'copy', '-y', path]);
  return path;
}
