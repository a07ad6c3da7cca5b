/**
 * Signal-level measurements of speech that synthetic speech tends to get wrong, each computed
 * only where Silero VAD hears speech (or, for the floor, only where it hears none):
 *
 * - Band limit: neural vocoders are trained at 16/22.05/24 kHz, so speech resampled into a
 *   44.1/48 kHz file stops sharply at 8/11/12 kHz, below the codec's own low-pass (sub-band
 *   artefacts of spoofed speech: Tak et al., "Spoofing Attack Detection using the Non-linear
 *   Fusion of Sub-band Classifiers", Interspeech 2020, §2).
 * - Silence floor: TTS pipelines emit exact digital silence between phrases; microphones never
 *   do (a room and a preamp give a noise floor around −50 to −75 dBFS). Müller et al., "Speech
 *   is Silver, Silence is Golden: What do ASVspoof-trained Models Really Learn?", ASVspoof 2021
 *   Workshop, show how strongly silence separates bona-fide from spoofed speech.
 * - Spectral flatness (Gray & Markel, IEEE TASSP 1974) and its spread over voiced frames, and
 *   modulation statistics of sub-band envelopes (Houtgast & Steeneken's modulation transfer
 *   view; Wu, Xiao, Chng & Li, "Synthetic Speech Detection using Temporal Modulation
 *   Feature", ICASSP 2013, §2): vocoders smooth the fast (> 16 Hz) envelope fluctuations of natural speech.
 * - Bicoherence statistics (AlBadawy, Lyu & Farid, "Detecting AI-Synthesized Speech Using
 *   Bispectral Analysis", CVPRW 2019, §3): mean, variance, skewness and kurtosis of the
 *   bicoherence magnitude and phase over the bifrequency plane, frame-averaged. Synthetic
 *   speech shows stronger higher-order correlations (larger bicoherence) than human speech.
 */
import { Fft } from '../signal/fft.js';
import { hann } from './stft.js';
import type { SpeechSegment } from './vad.js';

export interface BandLimit {
  /** Highest frequency of the speech's long-term spectrum above its floor, Hz. */
  cutoffHz: number;
  nyquistHz: number;
  /** Level just below the cut-off minus the level just above it, dB: large for a brick wall. */
  edgeDropDb: number;
}

export interface SilenceFloor {
  /** 10th percentile level of non-speech 20 ms frames, dBFS; null without non-speech audio. */
  floorDbfs: number | null;
  /** Share of non-speech frames below −90 dBFS (digital silence). */
  digitalSilenceShare: number;
  nonSpeechSeconds: number;
}

export interface VoicedStatistics {
  frames: number;
  flatnessMean: number;
  flatnessSpread: number;
  /** Share of envelope modulation energy above 16 Hz (of 1–50 Hz), mean over bands. */
  fastModulationShare: number;
}

export interface Bicoherence {
  frames: number;
  magnitude: { mean: number; variance: number; skewness: number; kurtosis: number };
  phase: { mean: number; variance: number; skewness: number; kurtosis: number };
}

function isInSpeech(segments: readonly SpeechSegment[], seconds: number): boolean {
  // Segments are sorted; a linear scan is fine for the few hundred a file has.
  for (const segment of segments) {
    if (seconds < segment.start) return false;
    if (seconds < segment.end) return true;
  }
  return false;
}

/** Long-term average spectrum of the speech at the file's own rate, and where it ends. */
export function measureBandLimit(samples: Float32Array, sampleRate: number, segments: readonly SpeechSegment[]): BandLimit | null {
  const fftSize = 2 ** Math.round(Math.log2(sampleRate / 23)); // ~2048 at 44.1/48 kHz
  const hop = fftSize;
  const bins = fftSize / 2 + 1;
  const fft = new Fft(fftSize);
  const window = hann(fftSize);
  const re = new Float64Array(fftSize);
  const im = new Float64Array(fftSize);
  const power = new Float64Array(bins);
  let frames = 0;
  for (let start = 0; start + fftSize <= samples.length; start += hop) {
    if (!isInSpeech(segments, (start + fftSize / 2) / sampleRate)) continue;
    for (let i = 0; i < fftSize; i++) {
      re[i] = samples[start + i]! * window[i]!;
      im[i] = 0;
    }
    fft.transform(re, im);
    for (let k = 0; k < bins; k++) power[k] = power[k]! + re[k]! * re[k]! + im[k]! * im[k]!;
    frames++;
  }
  if (frames < 4) return null;
  const hzPerBin = sampleRate / fftSize;
  const db = Array.from(power, (p) => 10 * Math.log10(p / frames + 1e-20));
  // Reference: the speech band 300 Hz – 3 kHz; the floor is 60 dB under it.
  const reference = db.slice(Math.round(300 / hzPerBin), Math.round(3000 / hzPerBin)).sort((a, b) => a - b);
  const speechLevel = reference[Math.floor(reference.length / 2)]!;
  const smoothed = db.map((_, k) => {
    let sum = 0;
    let count = 0;
    for (let j = Math.max(0, k - 2); j <= Math.min(bins - 1, k + 2); j++, count++) sum += db[j]!;
    return sum / count;
  });
  let cutoffBin = Math.round(1000 / hzPerBin);
  for (let k = bins - 1; k > cutoffBin; k--) {
    if (smoothed[k]! > speechLevel - 60) {
      cutoffBin = k;
      break;
    }
  }
  // Edge: the band 1.5–0.5 kHz below the cut-off against 0.2–1.2 kHz above it (medians), so a
  // resampler's transition band does not hide a brick wall.
  const medianDb = (fromHz: number, toHz: number) => {
    const from = Math.max(0, Math.round(fromHz / hzPerBin));
    const to = Math.min(bins - 1, Math.max(from + 1, Math.round(toHz / hzPerBin)));
    const values = db.slice(from, to).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? db[bins - 1]!;
  };
  const cutoffHz = cutoffBin * hzPerBin;
  return {
    cutoffHz: Math.round(cutoffHz),
    nyquistHz: sampleRate / 2,
    edgeDropDb: Math.round((medianDb(cutoffHz - 1500, cutoffHz - 500) - medianDb(cutoffHz + 200, cutoffHz + 1200)) * 10) / 10,
  };
}

export function measureSilenceFloor(samples: Float32Array, sampleRate: number, segments: readonly SpeechSegment[]): SilenceFloor {
  const frameLength = Math.round(0.02 * sampleRate);
  const levels: number[] = [];
  // Skip the first and last 20 ms: encoder padding is digital silence in every file.
  for (let start = frameLength; start + 2 * frameLength <= samples.length; start += frameLength) {
    if (isInSpeech(segments, (start + frameLength / 2) / sampleRate)) continue;
    let energy = 0;
    for (let i = start; i < start + frameLength; i++) energy += samples[i]! * samples[i]!;
    levels.push(10 * Math.log10(energy / frameLength + 1e-20));
  }
  if (levels.length === 0) return { floorDbfs: null, digitalSilenceShare: 0, nonSpeechSeconds: 0 };
  const sorted = [...levels].sort((a, b) => a - b);
  return {
    floorDbfs: Math.round(sorted[Math.floor(sorted.length * 0.1)]! * 10) / 10,
    digitalSilenceShare: levels.filter((level) => level < -90).length / levels.length,
    nonSpeechSeconds: (levels.length * frameLength) / sampleRate,
  };
}

const VOICED_FFT = 512;
const VOICED_HOP = 160; // 10 ms at 16 kHz: a 100 Hz envelope rate
const ENVELOPE_BANDS = 16;
const MODULATION_WINDOW = 128; // 1.28 s of envelope

/** Flatness and envelope-modulation statistics over the speech, at 16 kHz. */
export function measureVoiced(samples16k: Float32Array, segments: readonly SpeechSegment[]): VoicedStatistics | null {
  const fft = new Fft(VOICED_FFT);
  const window = hann(VOICED_FFT);
  const re = new Float64Array(VOICED_FFT);
  const im = new Float64Array(VOICED_FFT);
  const edges: number[] = [];
  for (let b = 0; b <= ENVELOPE_BANDS; b++) edges.push(Math.round(4 * Math.pow(240 / 4, b / ENVELOPE_BANDS)));
  const flatness: number[] = [];
  let fastEnergy = 0;
  let totalEnergy = 0;
  const modulationFft = new Fft(MODULATION_WINDOW);
  const modRe = new Float64Array(MODULATION_WINDOW);
  const modIm = new Float64Array(MODULATION_WINDOW);
  const modWindow = hann(MODULATION_WINDOW);
  for (const segment of segments) {
    const first = Math.floor((segment.start * 16_000) / VOICED_HOP);
    const last = Math.floor((segment.end * 16_000 - VOICED_FFT) / VOICED_HOP);
    if (last <= first) continue;
    const envelopes = Array.from({ length: ENVELOPE_BANDS }, () => new Float64Array(last - first));
    for (let t = first; t < last; t++) {
      for (let i = 0; i < VOICED_FFT; i++) {
        re[i] = (samples16k[t * VOICED_HOP + i] ?? 0) * window[i]!;
        im[i] = 0;
      }
      fft.transform(re, im);
      let logSum = 0;
      let sum = 0;
      let frameEnergy = 0;
      for (let k = 4; k < 240; k++) {
        const p = re[k]! * re[k]! + im[k]! * im[k]! + 1e-12;
        logSum += Math.log(p);
        sum += p;
        frameEnergy += p;
      }
      for (let b = 0; b < ENVELOPE_BANDS; b++) {
        let bandEnergy = 0;
        for (let k = edges[b]!; k < Math.max(edges[b + 1]!, edges[b]! + 1); k++) bandEnergy += re[k]! * re[k]! + im[k]! * im[k]!;
        envelopes[b]![t - first] = Math.sqrt(bandEnergy);
      }
      // Flatness of frames that carry energy (the VAD pads segments with quiet edges).
      if (frameEnergy > 1e-6) flatness.push(Math.exp(logSum / 236) / (sum / 236));
    }
    for (const envelope of envelopes) {
      for (let start = 0; start + MODULATION_WINDOW <= envelope.length; start += MODULATION_WINDOW / 2) {
        let mean = 0;
        for (let i = 0; i < MODULATION_WINDOW; i++) mean += envelope[start + i]!;
        mean /= MODULATION_WINDOW;
        if (mean <= 1e-9) continue;
        for (let i = 0; i < MODULATION_WINDOW; i++) {
          modRe[i] = ((envelope[start + i]! - mean) / mean) * modWindow[i]!;
          modIm[i] = 0;
        }
        modulationFft.transform(modRe, modIm);
        // Bins are 100/128 Hz apart: 1–50 Hz total, > 16 Hz fast.
        for (let k = 1; k < MODULATION_WINDOW / 2; k++) {
          const p = modRe[k]! * modRe[k]! + modIm[k]! * modIm[k]!;
          totalEnergy += p;
          if (k * (100 / MODULATION_WINDOW) > 16) fastEnergy += p;
        }
      }
    }
  }
  if (flatness.length < 50) return null;
  const mean = flatness.reduce((a, b) => a + b, 0) / flatness.length;
  const spread = Math.sqrt(flatness.reduce((a, b) => a + (b - mean) ** 2, 0) / flatness.length);
  return { frames: flatness.length, flatnessMean: mean, flatnessSpread: spread, fastModulationShare: totalEnergy > 0 ? fastEnergy / totalEnergy : 0 };
}

const BISPECTRUM_FFT = 256;
const BISPECTRUM_MAX_FRAMES = 1500;

/**
 * Bicoherence over speech frames (AlBadawy et al. §3, eq. 3): per frame X(f1)X(f2)X*(f1+f2),
 * accumulated over frames and normalised, then moments of its magnitude and phase.
 */
export function measureBicoherence(samples16k: Float32Array, segments: readonly SpeechSegment[]): Bicoherence | null {
  const fftSize = BISPECTRUM_FFT;
  const half = fftSize / 2;
  const starts: number[] = [];
  for (const segment of segments) {
    for (let start = Math.floor(segment.start * 16_000); start + fftSize <= Math.min(samples16k.length, segment.end * 16_000); start += fftSize / 2) starts.push(start);
  }
  if (starts.length < 20) return null;
  const stride = Math.max(1, starts.length / BISPECTRUM_MAX_FRAMES);
  const chosen: number[] = [];
  for (let i = 0; i < starts.length; i += stride) chosen.push(starts[Math.floor(i)]!);
  const fft = new Fft(fftSize);
  const window = hann(fftSize);
  const re = new Float64Array(fftSize);
  const im = new Float64Array(fftSize);
  // Bifrequency plane f2 <= f1, f1 + f2 < half: the non-redundant triangle.
  const pairs: Array<[number, number]> = [];
  for (let f1 = 1; f1 < half; f1++) for (let f2 = 1; f2 <= f1 && f1 + f2 < half; f2++) pairs.push([f1, f2]);
  const sumRe = new Float64Array(pairs.length);
  const sumIm = new Float64Array(pairs.length);
  const normProduct = new Float64Array(pairs.length);
  const normSum = new Float64Array(pairs.length);
  for (const start of chosen) {
    let energy = 0;
    for (let i = 0; i < fftSize; i++) {
      re[i] = samples16k[start + i]! * window[i]!;
      im[i] = 0;
      energy += re[i]! * re[i]!;
    }
    if (energy < 1e-8) continue;
    fft.transform(re, im);
    // Normalise each frame so loud frames do not dominate the average.
    const scale = 1 / Math.sqrt(energy);
    for (let k = 0; k < half; k++) {
      re[k] = re[k]! * scale;
      im[k] = im[k]! * scale;
    }
    for (let p = 0; p < pairs.length; p++) {
      const [f1, f2] = pairs[p]!;
      const ar = re[f1]! * re[f2]! - im[f1]! * im[f2]!;
      const ai = re[f1]! * im[f2]! + im[f1]! * re[f2]!;
      const cr = re[f1 + f2]!;
      const ci = -im[f1 + f2]!;
      sumRe[p] = sumRe[p]! + ar * cr - ai * ci;
      sumIm[p] = sumIm[p]! + ar * ci + ai * cr;
      normProduct[p] = normProduct[p]! + ar * ar + ai * ai;
      normSum[p] = normSum[p]! + cr * cr + ci * ci;
    }
  }
  const magnitudes: number[] = [];
  const phases: number[] = [];
  for (let p = 0; p < pairs.length; p++) {
    const denominator = Math.sqrt(normProduct[p]! * normSum[p]!);
    if (denominator <= 0) continue;
    magnitudes.push(Math.hypot(sumRe[p]!, sumIm[p]!) / denominator);
    phases.push(Math.atan2(sumIm[p]!, sumRe[p]!));
  }
  return { frames: chosen.length, magnitude: moments(magnitudes), phase: moments(phases) };
}

function moments(values: number[]): { mean: number; variance: number; skewness: number; kurtosis: number } {
  const n = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  let m2 = 0, m3 = 0, m4 = 0;
  for (const v of values) {
    const d = v - mean;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  return { mean, variance: m2, skewness: m2 > 0 ? m3 / m2 ** 1.5 : 0, kurtosis: m2 > 0 ? m4 / (m2 * m2) : 0 };
}
