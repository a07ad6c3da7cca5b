/**
 * Short-time Fourier transform and its inverse (weighted overlap-add, Griffin & Lim, IEEE
 * TASSP 1984, eq. 6), on the radix-4 FFT of signal/fft.ts. Spectra are stored frame-major:
 * bin k of frame t is at index t * bins + k, with bins = fftSize / 2 + 1.
 */
import { Fft } from '../signal/fft.js';

export function hann(size: number): Float64Array {
  const window = new Float64Array(size);
  // Periodic Hann: sums to a constant under overlap-add at hops of size / 4.
  for (let i = 0; i < size; i++) window[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / size);
  return window;
}

export interface Spectrogram {
  fftSize: number;
  hop: number;
  bins: number;
  frames: number;
  /** Length of the signal it was computed from (for the inverse). */
  length: number;
  re: Float32Array;
  im: Float32Array;
}

/**
 * Frames start at -fftSize/2 (the signal is zero-padded by half a window at each end) so that
 * every sample is covered by the same number of windows and the inverse is exact.
 */
export function stft(signal: Float32Array, fftSize: number, hop: number): Spectrogram {
  const fft = new Fft(fftSize);
  const window = hann(fftSize);
  const bins = fftSize / 2 + 1;
  const pad = fftSize / 2;
  const frames = Math.ceil((signal.length + pad) / hop) + 1;
  const re = new Float32Array(frames * bins);
  const im = new Float32Array(frames * bins);
  const bufferRe = new Float64Array(fftSize);
  const bufferIm = new Float64Array(fftSize);
  for (let t = 0; t < frames; t++) {
    const origin = t * hop - pad;
    for (let i = 0; i < fftSize; i++) {
      const index = origin + i;
      bufferRe[i] = index >= 0 && index < signal.length ? signal[index]! * window[i]! : 0;
      bufferIm[i] = 0;
    }
    fft.transform(bufferRe, bufferIm);
    const base = t * bins;
    for (let k = 0; k < bins; k++) {
      re[base + k] = bufferRe[k]!;
      im[base + k] = bufferIm[k]!;
    }
  }
  return { fftSize, hop, bins, frames, length: signal.length, re, im };
}

/** Inverse STFT by weighted overlap-add; `mask` (frame-major, one gain per bin) is optional. */
export function istft(spectrogram: Spectrogram, mask?: Float32Array): Float32Array {
  const { fftSize, hop, bins, frames, length, re, im } = spectrogram;
  const fft = new Fft(fftSize);
  const window = hann(fftSize);
  const pad = fftSize / 2;
  const output = new Float64Array(length);
  const windowSum = new Float64Array(length);
  const bufferRe = new Float64Array(fftSize);
  const bufferIm = new Float64Array(fftSize);
  for (let t = 0; t < frames; t++) {
    const base = t * bins;
    for (let k = 0; k < bins; k++) {
      const gain = mask ? mask[base + k]! : 1;
      bufferRe[k] = re[base + k]! * gain;
      bufferIm[k] = im[base + k]! * gain;
    }
    // Hermitian symmetry gives the negative frequencies of a real signal.
    for (let k = 1; k < fftSize / 2; k++) {
      bufferRe[fftSize - k] = bufferRe[k]!;
      bufferIm[fftSize - k] = -bufferIm[k]!;
    }
    fft.transform(bufferRe, bufferIm, true);
    const origin = t * hop - pad;
    for (let i = 0; i < fftSize; i++) {
      const index = origin + i;
      if (index < 0 || index >= length) continue;
      output[index] = output[index]! + (bufferRe[i]! / fftSize) * window[i]!;
      windowSum[index] = windowSum[index]! + window[i]! * window[i]!;
    }
  }
  const signal = new Float32Array(length);
  for (let i = 0; i < length; i++) signal[i] = windowSum[i]! > 1e-8 ? output[i]! / windowSum[i]! : 0;
  return signal;
}

/** Magnitudes of a spectrogram, frame-major. */
export function magnitude(spectrogram: Spectrogram): Float32Array {
  const out = new Float32Array(spectrogram.re.length);
  for (let i = 0; i < out.length; i++) out[i] = Math.sqrt(spectrogram.re[i]! * spectrogram.re[i]! + spectrogram.im[i]! * spectrogram.im[i]!);
  return out;
}
