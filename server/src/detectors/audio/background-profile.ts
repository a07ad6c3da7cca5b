/**
 * What lies under and between the speech: noise-like or tonal (music). Measured on 16 kHz
 * mono with the spectral flatness (Gray & Markel, IEEE TASSP 1974: geometric over arithmetic
 * mean of the power spectrum; near 1 for white noise, near 0 for a few partials), taken on the
 * spectrum whitened by its local mean, of the frames
 * the VAD calls non-speech and that carry energy.
 */
import { Fft } from '../signal/fft.js';
import { hann } from './stft.js';
import type { VadResult } from './vad.js';

export interface BackgroundProfile {
  /** Seconds of non-speech audio above the file's silence floor. */
  nonSpeechActiveSeconds: number;
  /** Median spectral flatness (0..1) of those frames; null when there are none. */
  nonSpeechFlatness: number | null;
  /** Level of those frames relative to the loudest 10 % of frames, dB. */
  nonSpeechLevelDb: number | null;
  /** Fraction of frames above the silence floor. */
  activeFraction: number;
}

const FFT_SIZE = 512;
const HOP = 256;
const SAMPLE_RATE = 16_000;
const WHITEN_RADIUS = 8;

export function profileBackground(samples16k: Float32Array, vad: VadResult): BackgroundProfile {
  const frames = Math.max(0, Math.floor((samples16k.length - FFT_SIZE) / HOP) + 1);
  const levelDb = new Float64Array(frames);
  for (let t = 0; t < frames; t++) {
    let energy = 0;
    for (let i = t * HOP, end = i + FFT_SIZE; i < end; i++) energy += samples16k[i]! * samples16k[i]!;
    levelDb[t] = 10 * Math.log10(energy / FFT_SIZE + 1e-12);
  }
  const sortedLevels = levelDb.slice().sort();
  const loud = sortedLevels.length ? sortedLevels[Math.floor(sortedLevels.length * 0.9)]! : -120;
  const silenceFloor = Math.max(-70, loud - 45);
  // Spectra only of the frames that count: active and outside speech.
  const spectral = new SpectralFlatness();
  let active = 0;
  const nonSpeechFlatness: number[] = [];
  const nonSpeechLevels: number[] = [];
  for (let t = 0; t < frames; t++) {
    if (levelDb[t]! < silenceFloor) continue;
    active++;
    const centre = (t * HOP + FFT_SIZE / 2) / SAMPLE_RATE;
    const vadFrame = Math.floor(centre / vad.frameSeconds);
    const speechProbability = vad.frameProbability[Math.min(vad.frameProbability.length - 1, vadFrame)] ?? 0;
    if (speechProbability < 0.2) {
      nonSpeechFlatness.push(spectral.whitenedFlatness(samples16k, t * HOP));
      nonSpeechLevels.push(levelDb[t]!);
    }
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  return {
    nonSpeechActiveSeconds: (nonSpeechFlatness.length * HOP) / SAMPLE_RATE,
    nonSpeechFlatness: nonSpeechFlatness.length ? median(nonSpeechFlatness) : null,
    nonSpeechLevelDb: nonSpeechLevels.length ? median(nonSpeechLevels) - loud : null,
    activeFraction: frames ? active / frames : 0,
  };
}

class SpectralFlatness {
  private readonly fft = new Fft(FFT_SIZE);
  private readonly window = hann(FFT_SIZE);
  private readonly re = new Float64Array(FFT_SIZE);
  private readonly im = new Float64Array(FFT_SIZE);
  private readonly power = new Float64Array(FFT_SIZE / 2 + 1);

  /** Flatness of the frame at `start`, its spectrum divided by its local mean. */
  whitenedFlatness(samples: Float32Array, start: number): number {
    const { fft, window, re, im, power } = this;
    for (let i = 0; i < FFT_SIZE; i++) {
      re[i] = samples[start + i]! * window[i]!;
      im[i] = 0;
    }
    fft.transform(re, im);
    for (let k = 0; k <= FFT_SIZE / 2; k++) power[k] = re[k]! * re[k]! + im[k]! * im[k]! + 1e-12;
    // Flatness of the spectrum divided by its local mean (±WHITEN_RADIUS bins): a spectral
    // tilt (pink, brown noise) then no longer looks tonal; only peaks above their neighbourhood
    // do. 100 Hz – 7.5 kHz: below, hum and DC; above, resampler roll-off.
    let logSum = 0;
    let sum = 0;
    let count = 0;
    for (let k = 4; k < 240; k++) {
      let local = 0;
      for (let j = k - WHITEN_RADIUS; j <= k + WHITEN_RADIUS; j++) local += power[Math.max(0, j)]!;
      const ratio = power[k]! / (local / (2 * WHITEN_RADIUS + 1));
      logSum += Math.log(ratio);
      sum += ratio;
      count++;
    }
    return Math.exp(logSum / count) / (sum / count);
  }
}
