/**
 * Test signals for the audio evaluations, tests and benchmarks: stationary noises, a
 * synthetic repeating music bed, a speech-like voiced signal, mixing at a target SNR, and the
 * scale-invariant SDR (Le Roux et al., "SDR – half-baked or well done?", ICASSP 2019, eq. 5).
 * Every generator is seeded, so runs are reproducible.
 */
import { seededRandom } from '../detectors/signal/seeded-random.js';

export type NoiseKind = 'white' | 'pink' | 'brown';

export function noise(kind: NoiseKind, length: number, seed = 1): Float32Array {
  const random = seededRandom(seed);
  const out = new Float32Array(length);
  // Pink by Paul Kellet's economy filter; brown by leaky integration of white noise.
  let b0 = 0, b1 = 0, b2 = 0, brown = 0;
  for (let i = 0; i < length; i++) {
    const white = random() * 2 - 1;
    if (kind === 'white') out[i] = white;
    else if (kind === 'pink') {
      b0 = 0.99765 * b0 + white * 0.099046;
      b1 = 0.963 * b1 + white * 0.2965164;
      b2 = 0.57 * b2 + white * 1.0526913;
      out[i] = b0 + b1 + b2 + white * 0.1848;
    } else {
      brown = 0.995 * brown + white * 0.1;
      out[i] = brown;
    }
  }
  return normalise(out);
}

/**
 * A two-bar loop at 120 bpm repeated for `length` samples: four chords of decaying harmonic
 * tones, a bass line, a kick on every beat and a hi-hat on the off-beats.
 */
export function musicLoop(length: number, sampleRate: number, seed = 7): Float32Array {
  const random = seededRandom(seed);
  const beat = Math.round(sampleRate * 0.5);
  const bar = 4 * beat;
  const loop = new Float32Array(2 * bar);
  const chords = [[220, 277.18, 329.63], [196, 246.94, 293.66], [174.61, 220, 261.63], [196, 246.94, 329.63]];
  const addTone = (start: number, duration: number, frequency: number, gain: number, partials: number) => {
    for (let i = 0; i < duration && start + i < loop.length; i++) {
      const t = i / sampleRate;
      const envelope = Math.exp(-3 * t) * Math.min(1, i / (0.01 * sampleRate));
      let value = 0;
      for (let p = 1; p <= partials; p++) value += Math.sin(2 * Math.PI * frequency * p * t) / (p * p);
      loop[start + i] = loop[start + i]! + gain * envelope * value;
    }
  };
  chords.forEach((chord, index) => {
    for (const frequency of chord) addTone(index * 2 * beat, 2 * beat, frequency, 0.25, 6);
    addTone(index * 2 * beat, beat, chord[0]! / 2, 0.4, 3);
    addTone(index * 2 * beat + beat, beat, chord[0]! / 2, 0.3, 3);
  });
  for (let b = 0; b < 8; b++) {
    const start = b * beat;
    for (let i = 0; i < 0.15 * sampleRate; i++) {
      const t = i / sampleRate;
      const frequency = 50 + 100 * Math.exp(-30 * t);
      loop[start + i] = loop[start + i]! + 0.8 * Math.exp(-25 * t) * Math.sin(2 * Math.PI * frequency * t);
    }
    let previous = 0;
    for (let i = 0; i < 0.05 * sampleRate; i++) {
      const white = random() * 2 - 1;
      const highPassed = white - previous;
      previous = white;
      const index = start + Math.round(beat / 2) + i;
      loop[index] = loop[index]! + 0.15 * Math.exp(-80 * (i / sampleRate)) * highPassed;
    }
  }
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = loop[i % loop.length]!;
  return normalise(out);
}

/**
 * A speech-like voiced signal: a glottal pulse train with a wandering pitch through vowel
 * formant resonators, in syllables of ~200 ms grouped into words with pauses between them.
 */
export function speechLike(length: number, sampleRate: number, seed = 3): Float32Array {
  const random = seededRandom(seed);
  const vowels = [[730, 1090, 2440], [270, 2290, 3010], [300, 870, 2240], [530, 1840, 2480], [570, 840, 2410]];
  const out = new Float32Array(length);
  let phase = 0;
  let i = Math.round(0.3 * sampleRate);
  while (i < length) {
    const syllables = 2 + Math.floor(random() * 4);
    for (let s = 0; s < syllables && i < length; s++) {
      const duration = Math.round((0.15 + random() * 0.12) * sampleRate);
      const formants = vowels[Math.floor(random() * vowels.length)]!;
      const basePitch = 110 + random() * 60;
      const source = new Float32Array(duration);
      for (let n = 0; n < duration; n++) {
        const pitch = basePitch * (1 + 0.08 * Math.sin((2 * Math.PI * n) / duration));
        phase += pitch / sampleRate;
        // Rosenberg-like pulse: sharp closure once per period, plus a little aspiration.
        source[n] = (phase % 1 < 0.05 ? 1 : 0) + 0.02 * (random() * 2 - 1);
      }
      const voiced = new Float32Array(duration);
      for (const [index, frequency] of formants.entries()) {
        const bandwidth = 80 + 40 * index;
        const r = Math.exp((-Math.PI * bandwidth) / sampleRate);
        const a1 = 2 * r * Math.cos((2 * Math.PI * frequency) / sampleRate);
        const a2 = -r * r;
        let y1 = 0, y2 = 0;
        for (let n = 0; n < duration; n++) {
          const y = source[n]! + a1 * y1 + a2 * y2;
          y2 = y1;
          y1 = y;
          voiced[n] = voiced[n]! + y / (index + 1);
        }
      }
      for (let n = 0; n < duration && i + n < length; n++) {
        const envelope = Math.sin((Math.PI * n) / duration) ** 0.5;
        out[i + n] = voiced[n]! * envelope;
      }
      i += duration;
    }
    i += Math.round((0.2 + random() * 0.4) * sampleRate);
  }
  return normalise(out);
}

/** Scales to unit RMS. */
export function normalise(signal: Float32Array): Float32Array {
  const power = energy(signal) / Math.max(1, signal.length);
  const scale = power > 0 ? 1 / Math.sqrt(power) : 0;
  for (let i = 0; i < signal.length; i++) signal[i] = signal[i]! * scale;
  return signal;
}

export function energy(signal: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < signal.length; i++) sum += signal[i]! * signal[i]!;
  return sum;
}

/** Scales `interference` to the SNR against `target`, then both so the mix peaks at `peak`. */
export function mixAtSnr(target: Float32Array, interference: Float32Array, snrDb: number, peak = 0.8): { mixture: Float32Array; target: Float32Array; interference: Float32Array } {
  const gain = Math.sqrt(energy(target) / (energy(interference) * 10 ** (snrDb / 10)));
  const scaledInterference = interference.map((v) => v * gain);
  const mixture = target.map((v, i) => v + scaledInterference[i]!);
  let max = 0;
  for (const v of mixture) max = Math.max(max, Math.abs(v));
  const scale = max > 0 ? peak / max : 1;
  return {
    mixture: mixture.map((v) => v * scale),
    target: target.map((v) => v * scale),
    interference: scaledInterference.map((v) => v * scale),
  };
}

/** SI-SDR of `estimate` against `reference` in dB, on zero-mean signals. */
export function siSdr(estimate: Float32Array, reference: Float32Array): number {
  const n = Math.min(estimate.length, reference.length);
  let meanE = 0, meanR = 0;
  for (let i = 0; i < n; i++) {
    meanE += estimate[i]!;
    meanR += reference[i]!;
  }
  meanE /= n;
  meanR /= n;
  let dot = 0, refEnergy = 0;
  for (let i = 0; i < n; i++) {
    dot += (estimate[i]! - meanE) * (reference[i]! - meanR);
    refEnergy += (reference[i]! - meanR) ** 2;
  }
  const alpha = refEnergy > 0 ? dot / refEnergy : 0;
  let targetEnergy = 0, errorEnergy = 0;
  for (let i = 0; i < n; i++) {
    const projected = alpha * (reference[i]! - meanR);
    targetEnergy += projected * projected;
    errorEnergy += (estimate[i]! - meanE - projected) ** 2;
  }
  return 10 * Math.log10((targetEnergy + 1e-12) / (errorEnergy + 1e-12));
}

/** Reads a mono or multichannel 32-bit float WAV written by encodeWavFloat32. */
export function readWavFloat32(bytes: Uint8Array): { sampleRate: number; channels: Float32Array[] } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const channelCount = view.getUint16(22, true);
  const sampleRate = view.getUint32(24, true);
  if (view.getUint16(20, true) !== 3 || view.getUint16(34, true) !== 32) throw new Error('not a 32-bit float WAV');
  const dataBytes = view.getUint32(40, true);
  const length = dataBytes / (4 * channelCount);
  const channels = Array.from({ length: channelCount }, () => new Float32Array(length));
  for (let i = 0, k = 0; i < length; i++) for (let c = 0; c < channelCount; c++, k++) channels[c]![i] = view.getFloat32(44 + 4 * k, true);
  return { sampleRate, channels };
}
