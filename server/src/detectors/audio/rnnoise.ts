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

/**
 * Denoises 48 kHz mono samples. RNNoise's output lags its input by one frame (its analysis
 * window overlaps the previous frame), so the result is shifted back by that lag.
 */
export async function denoise48k(samples: Float32Array, signal?: AbortSignal): Promise<DenoiseResult> {
  const rnnoise = await loadRnnoise();
  const frameSize = rnnoise._rnnoise_get_frame_size();
  const lag = frameSize;
  const frameCount = Math.ceil((samples.length + lag) / frameSize);
  const state = rnnoise._rnnoise_create(0);
  const inputPointer = rnnoise._malloc(frameSize * 4);
  const outputPointer = rnnoise._malloc(frameSize * 4);
  const output = new Float32Array(frameCount * frameSize);
  const frameVoiceProbability = new Float32Array(frameCount);
  try {
    for (let frame = 0; frame < frameCount; frame++) {
      if (frame % 2000 === 0 && signal?.aborted) throw signal.reason ?? new Error('aborted');
      // HEAPF32 may be replaced when the wasm memory grows: read it each frame.
      const heap = rnnoise.HEAPF32;
      const inputOffset = inputPointer >> 2;
      const start = frame * frameSize;
      for (let i = 0; i < frameSize; i++) {
        const index = start + i;
        heap[inputOffset + i] = index < samples.length ? samples[index]! * PCM16_SCALE : 0;
      }
      frameVoiceProbability[frame] = rnnoise._rnnoise_process_frame(state, outputPointer, inputPointer);
      output.set(rnnoise.HEAPF32.subarray(outputPointer >> 2, (outputPointer >> 2) + frameSize), start);
    }
  } finally {
    rnnoise._free(inputPointer);
    rnnoise._free(outputPointer);
    rnnoise._rnnoise_destroy(state);
  }
  const denoised = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) denoised[i] = output[i + lag]! / PCM16_SCALE;
  // The voice probability of frame f describes the audio of frame f - 1 after the lag.
  return { denoised, frameVoiceProbability: frameVoiceProbability.subarray(1) };
}
