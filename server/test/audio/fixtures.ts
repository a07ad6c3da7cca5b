/** Small audio files generated for the audio tests: nothing here needs shared data. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../../src/detectors/media/ffmpeg.js';
import type { DetectorInput } from '../../src/detectors/types.js';

export async function scratchDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-audio-test-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

const ENCODERS = {
  wav: ['-c:a', 'pcm_s16le'],
  wavf32: ['-c:a', 'pcm_f32le'],
  mp3: ['-c:a', 'libmp3lame', '-b:a', '128k'],
  m4a: ['-c:a', 'aac', '-b:a', '128k'],
  flac: ['-c:a', 'flac'],
  opus: ['-c:a', 'libopus', '-b:a', '32k', '-f', 'ogg'],
  weba: ['-c:a', 'libopus', '-b:a', '48k', '-f', 'webm'],
} as const;

/** Encodes float samples (one array per channel) to a file with ffmpeg; returns its path. */
export async function writeAudio(
  path: string,
  channels: Float32Array[],
  sampleRate: number,
  format: keyof typeof ENCODERS,
  extraArgs: string[] = [],
): Promise<string> {
  const length = channels[0]!.length;
  const interleaved = new Float32Array(length * channels.length);
  for (let i = 0; i < length; i++) for (let c = 0; c < channels.length; c++) interleaved[i * channels.length + c] = channels[c]![i]!;
  await runFfmpeg(
    ['-f', 'f32le', '-ar', String(sampleRate), '-ac', String(channels.length), '-i', 'pipe:0', ...ENCODERS[format], ...extraArgs, '-y', path],
    { stdin: new Uint8Array(interleaved.buffer) },
  );
  return path;
}

export function inputFor(path: string, contentType: string, workDir: string, parameters: Record<string, unknown> = {}, modelsDir: string | null = null): DetectorInput {
  return {
    jobId: 'test',
    taskTypeSlug: 'test',
    files: [{ slotName: 'original', contentType, fileName: 'input', sizeBytes: 0, path }],
    parameters,
    workDir,
    modelsDir,
  };
}

export { writeFile };
