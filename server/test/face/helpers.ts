/** Shared fixtures for the face tests: sample photos shipped inside @vladmandic/human. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

export function inputOf(taskTypeSlug: string, files: DetectorFile[], parameters: Record<string, unknown> = {}, workDir = tmpdir()): DetectorInput {
  return { jobId: `test-${taskTypeSlug}`, taskTypeSlug, files, parameters, workDir, modelsDir: null };
}

export const noAbort = () => new AbortController().signal;

export function dot(a: readonly number[], b: readonly number[]): number {
  return a.reduce((sum, value, i) => sum + value * b[i]!, 0);
}
