/**
 * Speech foreground from RNNoise (Valin, MMSP 2018) and a spectral gain, guided by Silero VAD.
 *
 * RNNoise alone caps the speech quality (~18 dB SI-SDR on clean speech: its 22-band gains and
 * pitch filter colour the voice) and over-suppresses weak speech in white and pink noise. So
 * its output is used as evidence for a per-bin Wiener gain on the mixture, which keeps the
 * mixture's own phase and fine structure:
 * 1. the noise power spectrum is the mean over frames where the (strict) VAD hears no speech,
 *    scaled by 0.85 (below);
 * 2. the a-priori SNR mixes the decision-directed estimate (Ephraim & Malah, IEEE TASSP 1984,
 *    §IV-B, eq. 51; α = 0.95) with RNNoise's output power over the noise power, weighted 0.2 /
 *    0.8: the learned estimate follows onsets that the decision-directed one lags behind;
 * 3. the Wiener gain of that SNR is refined by the two-step noise reduction (Plapous, Marro &
 *    Scalart, IEEE TASLP 14(6), 2006, §III, eqs. 9–11), which removes the decision-directed
 *    one-frame delay: ξ' = G² γ, G' = ξ' / (1 + ξ');
 * 4. a gain floor (−25 dB) against musical noise, lowered where the noise is stronger than its
 *    median over frequency so that the residual noise is no louder there (brown noise below
 *    200 Hz would otherwise stay audible);
 * 5. outside the permissive VAD's speech segments (margin and short ramps) the foreground is
 *    attenuated a further 10.5 dB, not muted: speech the VAD misses at low SNR is kept.
 * Measured on LibriSpeech + generated white / pink / brown noise at −5…10 dB: each step adds
 * 0.1–1 dB SI-SDR; together +2.1 dB on white, +1.35 on pink, +1.3 on brown over a max of the
 * RNNoise ratio mask and a plain Wiener gain (the eval's utterances 0–2 of each reader;
 * utterances 3–8 with other noise seeds gain the same within 0.3 dB). The MMSE
 * log-spectral-amplitude gain (Ephraim & Malah 1985) in place of Wiener measured within
 * ±0.1 dB, so the cheaper Wiener gain is used.
 * Everything is computed frame by frame, so memory stays flat on long inputs.
 */
import { Fft } from '../signal/fft.js';
import { hann } from './stft.js';
import type { SpeechSegment } from './vad.js';

const GATE_RAMP_SECONDS = 0.05;
const DECISION_DIRECTED_ALPHA = 0.95;
/** Share of RNNoise's estimate in the a-priori SNR; the rest is decision-directed. */
const RNNOISE_PRIOR_WEIGHT = 0.8;
/** Lowest gain (−25 dB) where the noise is at or below its median level. */
const GAIN_FLOOR = 0.056;
/**
 * The measured noise spectrum is scaled by this (−0.7 dB) before use: in white and pink noise
 * the SI-SDR error is mostly cut speech, not residual noise (measured by applying the gains to
 * speech and noise separately), so a slightly smaller estimate trades one for the other.
 */
const NOISE_SCALE = 0.85;
/** Gain (−10.5 dB) outside the speech segments of the permissive VAD. */
const OUTSIDE_SPEECH_GAIN = 0.3;

/** Gain 0..1 per sample at `sampleRate`: 1 within segments padded by `marginSeconds`, ramped edges. */
export function speechGate(segments: readonly SpeechSegment[], length: number, sampleRate: number, marginSeconds = 0.15): Float32Array {
  const gate = new Float32Array(length);
  const ramp = Math.max(1, Math.round(GATE_RAMP_SECONDS * sampleRate));
  for (const segment of segments) {
    const start = Math.max(0, Math.round((segment.start - marginSeconds) * sampleRate));
    const end = Math.min(length, Math.round((segment.end + marginSeconds) * sampleRate));
    // Full level between the ramps (nothing exceeds 1), the raised-cosine ramps at both ends.
    if (end - start > 2 * ramp) gate.fill(1, start + ramp, end - ramp);
    for (let i = start; i < end; i++) {
      const edge = Math.min(i - start, end - 1 - i);
      if (edge >= ramp) {
        i = end - ramp - 1;
        continue;
      }
      const value = 0.5 - 0.5 * Math.cos((Math.PI * edge) / ramp);
      if (value > gate[i]!) gate[i] = value;
    }
  }
  return gate;
}

export interface SpeechGates {
  /** 0 where the strict VAD hears no speech: the samples the noise spectrum is measured on. */
  noise: Float32Array;
  /** 1 where the permissive VAD may hear speech; elsewhere the foreground is attenuated. */
  output: Float32Array;
}

/** ~64 ms analysis windows at any rate. */
function fftSizeFor(sampleRate: number): number {
  return 2 ** Math.round(Math.log2(0.064 * sampleRate));
}

/**
 * The foreground of one channel: the mixture under a Wiener gain whose a-priori SNR combines
 * the decision-directed estimate with RNNoise's output, refined by two-step noise reduction.
 */
export function speechForeground(mixture: Float32Array, rnnoiseOutput: Float32Array, gates: SpeechGates, sampleRate: number, signal?: AbortSignal): { foreground: Float32Array; noiseFrames: number } {
  const fftSize = fftSizeFor(sampleRate);
  // Two-thirds overlap: +0.2 dB SI-SDR over 50 % (finer time steps for the gain); 75 % adds
  // 0.04 dB more for a third more transforms. The window-sum division keeps the
  // reconstruction exact at any hop.
  const hop = Math.round(fftSize / 3);
  const bins = fftSize / 2 + 1;
  const fft = new Fft(fftSize);
  // The forward transforms leave spectra bit-reversed and the inverse takes them so (no
  // permutation passes): bins are visited through these positions.
  const order = spectrumOrder(fft);
  const window = hann(fftSize);
  const length = mixture.length;
  const frames = Math.ceil((length + fftSize / 2) / hop) + 1;
  const re = new Float64Array(fftSize);
  const im = new Float64Array(fftSize);
  const packedRe = new Float64Array(fftSize);
  const packedIm = new Float64Array(fftSize);
  // Frame t is centred on sample t * hop (its origin is half a window earlier).
  const noiseGateAt = (t: number) => gates.noise[Math.min(length - 1, t * hop)]!;

  // Pass 1: the noise power spectrum, averaged over frames the strict VAD leaves closed; frames
  // that do not overlap (every third) are enough for a mean and cost a third. Two such frames
  // go into one complex transform (one as real, one as imaginary part) and are separated by
  // Hermitian symmetry.
  const noisePower = new Float64Array(bins);
  let noiseFrames = 0;
  let pending = -1;
  const addNoiseFrames = (first: number, second: number) => {
    for (let i = 0; i < fftSize; i++) {
      const a = first * hop - fftSize / 2 + i;
      const b = second * hop - fftSize / 2 + i;
      re[i] = a >= 0 && a < length ? mixture[a]! * window[i]! : 0;
      im[i] = second >= 0 && b >= 0 && b < length ? mixture[b]! * window[i]! : 0;
    }
    fft.transformToBitReversed(re, im);
    for (let k = 0; k < bins; k++) {
      const at = order.bin[k]!;
      const mirror = order.mirror[k]!;
      // |X_a|² + |X_b|² = (|Z_k|² + |Z_{N−k}|²) / 2 for Z = X_a + jX_b.
      noisePower[k] = noisePower[k]! + 0.5 * (re[at]! * re[at]! + im[at]! * im[at]! + re[mirror]! * re[mirror]! + im[mirror]! * im[mirror]!);
    }
  };
  for (let t = 0; t < frames; t += 3) {
    if (noiseGateAt(t) > 0) continue;
    noiseFrames++;
    if (pending < 0) {
      pending = t;
      continue;
    }
    addNoiseFrames(pending, t);
    pending = -1;
  }
  if (pending >= 0) addNoiseFrames(pending, -1);
  for (let k = 0; k < bins; k++) noisePower[k] = (NOISE_SCALE * noisePower[k]!) / Math.max(1, noiseFrames) + 1e-12;
  // Too little pure noise to trust a spectrum: rely on RNNoise's ratio mask alone.
  const useWiener = noiseFrames * 3 * hop >= 0.5 * sampleRate;
  const medianNoise = Float64Array.from(noisePower).sort()[bins >> 1]!;
  const floor = new Float64Array(bins);
  const inverseNoise = new Float64Array(bins);
  for (let k = 0; k < bins; k++) {
    floor[k] = GAIN_FLOOR * Math.min(1, Math.sqrt(medianNoise / noisePower[k]!));
    inverseNoise[k] = 1 / noisePower[k]!;
  }

  // Pass 2: gains, inverse transform and weighted overlap-add into a ring of two windows,
  // from which each sample is written out once no later frame reaches it.
  const gainState: GainState = { useWiener, inverseNoise, floor, previousClean: new Float64Array(bins) };
  // Gained spectra of a pair of frames, inverted together (see below).
  const pairRe = [new Float64Array(bins), new Float64Array(bins)] as const;
  const pairIm = [new Float64Array(bins), new Float64Array(bins)] as const;
  const synthesis: Synthesis = {
    // 1/fftSize folded into the window (a power of two: the products round the same).
    window: window.map((w) => w / fftSize),
    ring: new Float64Array(2 * fftSize),
    windowSum: overlapWindowSum(window, hop, frames, length),
    gate: gates.output,
    foreground: new Float32Array(length),
    written: 0,
  };
  for (let t = 0; t < frames; t++) {
    if (t % 2048 === 0 && signal?.aborted) throw signal.reason ?? new Error('aborted');
    // Both real frames in one complex FFT (mixture as real part, RNNoise output as imaginary),
    // separated by Hermitian symmetry: one transform instead of two.
    windowFrame(mixture, rnnoiseOutput, window, t * hop - fftSize / 2, packedRe, packedIm);
    fft.transformToBitReversed(packedRe, packedIm);
    const odd = (t & 1) === 1;
    applyGains(packedRe, packedIm, order, gainState, odd ? pairRe[1] : pairRe[0], odd ? pairIm[1] : pairIm[0]);
    if (!odd && t + 1 < frames) continue;
    // Two real outputs in one inverse FFT: Z = A + jB with A, B Hermitian gives a + jb. A lone
    // last frame goes in with B = 0.
    packHermitianPair(pairRe[0], pairIm[0], odd ? pairRe[1] : null, odd ? pairIm[1] : null, order, re, im);
    fft.transformFromBitReversed(re, im, true);
    const firstOrigin = (odd ? t - 1 : t) * hop - fftSize / 2;
    overlapAdd(synthesis, re, firstOrigin);
    if (odd) overlapAdd(synthesis, im, firstOrigin + hop);
    writeOut(synthesis, Math.min(length, (t + 1) * hop - fftSize / 2));
  }
  writeOut(synthesis, length);
  const foreground = synthesis.foreground;
  return { foreground, noiseFrames };
}

interface GainState {
  useWiener: boolean;
  inverseNoise: Float64Array;
  floor: Float64Array;
  /** Clean power estimate of the previous frame per bin (decision-directed). */
  previousClean: Float64Array;
}

/** Windowed frame of two signals from `origin` into (re, im), zero outside the signals. */
function windowFrame(a: Float32Array, b: Float32Array, window: Float64Array, origin: number, re: Float64Array, im: Float64Array): void {
  const size = window.length;
  const length = a.length;
  if (origin >= 0 && origin + size <= length) {
    for (let i = 0, index = origin; i < size; i++, index++) {
      const w = window[i]!;
      re[i] = a[index]! * w;
      im[i] = b[index]! * w;
    }
    return;
  }
  for (let i = 0; i < size; i++) {
    const index = origin + i;
    const inside = index >= 0 && index < length;
    re[i] = inside ? a[index]! * window[i]! : 0;
    im[i] = inside ? b[index]! * window[i]! : 0;
  }
}

/**
 * Separates the mixture (real part) and RNNoise output (imaginary part) spectra of a packed
 * transform and writes the mixture spectrum under its gain to (gainedRe, gainedIm).
 */
function applyGains(packedRe: Float64Array, packedIm: Float64Array, order: SpectrumOrder, state: GainState, gainedRe: Float64Array, gainedIm: Float64Array): void {
  const bins = gainedRe.length;
  const { inverseNoise, floor, previousClean, useWiener } = state;
  for (let k = 0; k < bins; k++) {
    const at = order.bin[k]!;
    const mirror = order.mirror[k]!;
    const mixRe = 0.5 * (packedRe[at]! + packedRe[mirror]!);
    const mixIm = 0.5 * (packedIm[at]! - packedIm[mirror]!);
    const rnnRe = 0.5 * (packedIm[at]! + packedIm[mirror]!);
    const rnnIm = 0.5 * (packedRe[mirror]! - packedRe[at]!);
    const power = mixRe * mixRe + mixIm * mixIm;
    const rnnoisePower = rnnRe * rnnRe + rnnIm * rnnIm;
    let gain: number;
    if (useWiener) {
      const inverse = inverseNoise[k]!;
      const posteriorSnr = power * inverse;
      const decisionDirected = DECISION_DIRECTED_ALPHA * previousClean[k]! * inverse + (1 - DECISION_DIRECTED_ALPHA) * Math.max(posteriorSnr - 1, 0);
      const prioriSnr = (1 - RNNOISE_PRIOR_WEIGHT) * decisionDirected + RNNOISE_PRIOR_WEIGHT * rnnoisePower * inverse;
      // Wiener gain G = ξ / (1 + ξ), refined ξ' = G² γ, gain ξ' / (1 + ξ'), with one
      // division: ξ² γ / ((1 + ξ)² + ξ² γ).
      const onePlus = 1 + prioriSnr;
      const refined = prioriSnr * prioriSnr * posteriorSnr;
      gain = refined / (onePlus * onePlus + refined);
      previousClean[k] = gain * gain * power;
      gain = Math.max(gain, floor[k]!);
    } else {
      gain = power > 1e-18 ? Math.min(1, Math.sqrt(rnnoisePower / power)) : 0;
    }
    gainedRe[k] = mixRe * gain;
    gainedIm[k] = mixIm * gain;
  }
}

/** Z = A + jB over all fftSize bins, bit-reversed, from the half spectra of two real signals (B may be absent). */
function packHermitianPair(aRe: Float64Array, aIm: Float64Array, bRe: Float64Array | null, bIm: Float64Array | null, order: SpectrumOrder, re: Float64Array, im: Float64Array): void {
  const half = re.length / 2;
  for (let k = 0; k <= half; k++) {
    const br = bRe ? bRe[k]! : 0;
    const bi = bIm ? bIm[k]! : 0;
    const at = order.bin[k]!;
    re[at] = aRe[k]! - bi;
    im[at] = aIm[k]! + br;
    if (k > 0 && k < half) {
      const mirror = order.mirror[k]!;
      re[mirror] = aRe[k]! + bi;
      im[mirror] = br - aIm[k]!;
    }
  }
}

interface SpectrumOrder {
  /** Position of bin k, 0 ≤ k ≤ fftSize / 2, in a bit-reversed spectrum. */
  bin: Uint32Array;
  /** Position of bin fftSize − k (of bin 0 for k = 0). */
  mirror: Uint32Array;
}

function spectrumOrder(fft: Fft): SpectrumOrder {
  const size = fft.size;
  const bin = new Uint32Array(size / 2 + 1);
  const mirror = new Uint32Array(size / 2 + 1);
  for (let k = 0; k <= size / 2; k++) {
    bin[k] = fft.bitReversed[k]!;
    mirror[k] = fft.bitReversed[(size - k) & (size - 1)]!;
  }
  return { bin, mirror };
}

interface Synthesis {
  /** Synthesis window, 1/fftSize included. */
  window: Float64Array;
  /** Overlap-add accumulator: sample n at n mod ring.length. */
  ring: Float64Array;
  windowSum: (n: number) => number;
  gate: Float32Array;
  foreground: Float32Array;
  /** Samples [0, written) are final and in `foreground`. */
  written: number;
}

function overlapAdd(synthesis: Synthesis, samples: Float64Array, origin: number): void {
  const { window, ring, foreground } = synthesis;
  const size = window.length;
  const length = foreground.length;
  const mask = ring.length - 1;
  for (let i = Math.max(0, -origin), end = Math.min(size, length - origin); i < end; i++) {
    const slot = (origin + i) & mask;
    ring[slot] = ring[slot]! + samples[i]! * window[i]!;
  }
}

/** Writes samples up to `end` (which no later frame reaches): divided by the window sum, gated. */
function writeOut(synthesis: Synthesis, end: number): void {
  const { ring, windowSum, gate, foreground } = synthesis;
  const mask = ring.length - 1;
  for (let n = synthesis.written; n < end; n++) {
    const slot = n & mask;
    const sum = windowSum(n);
    const level = OUTSIDE_SPEECH_GAIN + (1 - OUTSIDE_SPEECH_GAIN) * gate[n]!;
    foreground[n] = sum > 1e-8 ? (ring[slot]! / sum) * level : 0;
    ring[slot] = 0;
  }
  synthesis.written = Math.max(synthesis.written, end);
}

/**
 * Σ window² over the frames covering sample n, summed in frame order as an overlap-add would.
 * From half a window on every covering frame exists and the sum depends on n mod hop only;
 * before that it is accumulated frame by frame.
 */
function overlapWindowSum(window: Float64Array, hop: number, frames: number, length: number): (n: number) => number {
  const size = window.length;
  const half = size / 2;
  const edge = new Float64Array(Math.min(half, length));
  for (let t = 0; t < frames && t * hop - half < edge.length; t++) {
    const origin = t * hop - half;
    for (let i = Math.max(0, -origin); i < size && origin + i < edge.length; i++) edge[origin + i] = edge[origin + i]! + window[i]! * window[i]!;
  }
  // Sample n ≥ half sees window index i = n + half − t·hop of frame t: later frames, smaller i.
  const periodic = new Float64Array(hop);
  for (let phase = 0; phase < hop; phase++) {
    let sum = 0;
    const top = phase + hop * Math.floor((size - 1 - phase) / hop);
    for (let i = top; i >= 0; i -= hop) sum += window[i]! * window[i]!;
    periodic[phase] = sum;
  }
  return (n) => (n < half ? edge[n]! : periodic[(n + half) % hop]!);
}
