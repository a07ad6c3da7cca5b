/**
 * Waveform peaks of a job's audio (an input or a split track), computed here so the console
 * draws a 15-minute recording without decoding it in the browser. Stored files never change,
 * so peaks are kept in a small cache under the object key.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeAudio, probeAudio } from '../detectors/audio/pcm.js';
import { MediaError } from '../detectors/types.js';
import { withoutPaths } from '../detectors/media/ffmpeg.js';
import { AppError, jobNotFound } from '../errors.js';
import type { Repositories } from '../repositories/index.js';
import type { ObjectStore } from '../repositories/object-store.js';

/** Enough for the envelope of speech and music; a lower rate would smooth peaks away. */
const PEAKS_SAMPLE_RATE = 8_000;
const CACHE_ENTRIES = 64;

export interface AudioPeaks {
  durationSeconds: number;
  /** Largest absolute sample in each of `bins` equal slices, in [0, 1]. */
  peaks: number[];
}

/** The largest |sample| of each of `bins` equal slices. */
export function peaksOf(samples: Float32Array, bins: number): number[] {
  const peaks = new Array<number>(bins).fill(0);
  const perBin = samples.length / bins;
  for (let i = 0; i < samples.length; i++) {
    const bin = Math.min(bins - 1, Math.floor(i / perBin));
    const value = Math.abs(samples[i]!);
    if (value > peaks[bin]!) peaks[bin] = value;
  }
  return peaks.map((value) => Math.round(Math.min(1, value) * 1000) / 1000);
}

export class AudioPeaksService {
  private readonly cache = new Map<string, AudioPeaks>();

  constructor(private readonly deps: { repos: Pick<Repositories, 'jobs'>; store: ObjectStore }) {}

  /** Peaks of one of a job's files: `input-N` (as in the job's artifacts) or an artifact id. */
  async peaks(tenantId: string, jobId: string, fileId: string, bins: number): Promise<AudioPeaks> {
    const found = await this.deps.repos.jobs.findWithFiles(tenantId, jobId);
    if (!found) throw jobNotFound(jobId);
    const input = found.inputs.find((row) => `input-${row.position}` === fileId && row.uploaded_size !== null);
    const file = input ?? found.artifacts.find((row) => row.id === fileId);
    if (!file) throw new AppError('ARTIFACT_NOT_FOUND', `Job ${jobId} has no file ${fileId}`);
    if (!/^(audio|video)\//.test(file.content_type)) throw new AppError('VALIDATION_ERROR', `File ${fileId} is ${file.content_type}, not audio`);
    const cacheKey = `${file.object_key}#${bins}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;

    const scratch = await mkdtemp(join(tmpdir(), 'mediaproof-peaks-'));
    try {
      const path = await this.deps.store.materialise(file.object_key, join(scratch, 'audio'));
      const probe = await probeAudio(path, undefined, undefined, false);
      const audio = await decodeAudio(path, probe, { sampleRate: PEAKS_SAMPLE_RATE, channels: 1 });
      const result = { durationSeconds: audio.length / PEAKS_SAMPLE_RATE, peaks: peaksOf(audio.channels[0]!, bins) };
      if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(cacheKey, result);
      return result;
    } catch (error) {
      if (error instanceof MediaError) throw new AppError('VALIDATION_ERROR', `File ${fileId} cannot be decoded as audio: ${withoutPaths(error.message)}`);
      throw error;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
}
