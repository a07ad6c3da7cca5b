/**
 * RNNoise (Valin, "A Hybrid DSP/Deep Learning Approach to Real-Time Full-Band Speech
 * Enhancement", MMSP 2018) through @echogarden/rnnoise-wasm, whose weights are compiled into
 * the wasm. It works on 48 kHz mono in frames of 480 samples, on the 16-bit sample scale.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

interface RnnoiseModule {
  _rnnoise_create(model: number): number;
  _rnnoise_destroy(state: number): void;
  _rnnoise_get_frame_size(): number;
  _rnnoise_process_frame(state: number, output: number, input: number): number;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  HEAPF32: Float32Array;
}

export const RNNOISE_SAMPLE_RATE = 48_000;
const PCM16_SCALE = 32_768;

let modulePromise: Promise<RnnoiseModule> | undefined;

/** Instantiates the wasm once per thread from the file inside the package (no fetch). */
export function loadRnnoise(): Promise<RnnoiseModule> {
  modulePromise ??= (async () => {
    const entry = require.resolve('@echogarden/rnnoise-wasm');
    const wasmBinary = readFileSync(join(dirname(entry), 'rnnoise.wasm'));
    const { default: factory } = await import('@echogarden/rnnoise-wasm');
    return (await factory({ wasmBinary })) as RnnoiseModule;
  })();
  return modulePromise;
}

export interface DenoiseResult {
  /** Denoised signal, same length and alignment as the input. */
  denoised: Float32Array;
  /** RNNoise's own voice probability per 10 ms frame. */
  frameVoiceProbability: Float32Array;
}

/** Frames copied to and from the wasm heap at a time (~1 s of audio). */
const CHUNK_FRAMES = 100;

/**
 * Denoises 48 kHz mono samples. RNNoise's output lags its input by one frame (its analysis
 * window overlaps the previous frame), so the result is shifted back by that lag. Samples go
 * to the wasm heap a chunk of frames at a time and are denoised in place there (RNNoise reads
 * its input frame before it writes the output frame).
 */
export async function denoise48k(samples: Float32Array, signal?: AbortSignal): Promise<DenoiseResult> {
  const rnnoise = await loadRnnoise();
  const frameSize = rnnoise._rnnoise_get_frame_size();
  const lag = frameSize;
  const frameCount = Math.ceil((samples.length + lag) / frameSize);
  const state = rnnoise._rnnoise_create(0);
  const chunkPointer = rnnoise._malloc(CHUNK_FRAMES * frameSize * 4);
  const denoised = new Float32Array(samples.length);
  const frameVoiceProbability = new Float32Array(frameCount);
  try {
    for (let first = 0; first < frameCount; first += CHUNK_FRAMES) {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      const frames = Math.min(CHUNK_FRAMES, frameCount - first);
      const start = first * frameSize;
      const count = frames * frameSize;
      // HEAPF32 may be replaced when the wasm memory grows: read it per chunk.
      const chunk = rnnoise.HEAPF32.subarray(chunkPointer >> 2, (chunkPointer >> 2) + count);
      const available = Math.max(0, Math.min(count, samples.length - start));
      for (let i = 0; i < available; i++) chunk[i] = samples[start + i]! * PCM16_SCALE;
      chunk.fill(0, available);
      for (let f = 0; f < frames; f++) {
        const pointer = chunkPointer + f * frameSize * 4;
        frameVoiceProbability[first + f] = rnnoise._rnnoise_process_frame(state, pointer, pointer);
      }
      const out = rnnoise.HEAPF32.subarray(chunkPointer >> 2, (chunkPointer >> 2) + count);
      // Output sample start + i belongs to input sample start + i - lag.
      for (let i = Math.max(0, lag - start), end = Math.min(count, samples.length + lag - start); i < end; i++) {
        denoised[start + i - lag] = out[i]! / PCM16_SCALE;
      }
    }
  } finally {
    rnnoise._free(chunkPointer);
    rnnoise._rnnoise_destroy(state);
  }
  // The voice probability of frame f describes the audio of frame f - 1 after the lag.
  return { denoised, frameVoiceProbability: frameVoiceProbability.subarray(1) };
}
