import { test } from 'node:test';
import assert from 'node:assert/strict';
import { denoise48k } from '../../src/detectors/audio/rnnoise.js';
import { speechForeground, speechGate } from '../../src/detectors/audio/speech-denoise.js';
import { Fft } from '../../src/detectors/signal/fft.js';
import { mixAtSnr, noise, speechLike } from '../../src/eval/audio-mixtures.js';
import { seededRandom } from '../../src/detectors/signal/seeded-random.js';

function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

/** X[k] = Σ x[j] e^(−2πi jk/n) summed directly, twiddles read from one exact table. */
function directDft(re: Float64Array, im: Float64Array): { re: Float64Array; im: Float64Array } {
  const n = re.length;
  const cos = Float64Array.from({ length: n }, (_, m) => Math.cos((2 * Math.PI * m) / n));
  const sin = Float64Array.from({ length: n }, (_, m) => -Math.sin((2 * Math.PI * m) / n));
  const outRe = new Float64Array(n);
  const outIm = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    let sumRe = 0;
    let sumIm = 0;
    for (let j = 0, m = 0; j < n; j++, m = (m + k) & (n - 1)) {
      sumRe += re[j]! * cos[m]! - im[j]! * sin[m]!;
      sumIm += re[j]! * sin[m]! + im[j]! * cos[m]!;
    }
    outRe[k] = sumRe;
    outIm[k] = sumIm;
  }
  return { re: outRe, im: outIm };
}

function peak(values: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) max = Math.max(max, Math.abs(values[i]!));
  return max;
}

// Every size the callers use: STFTs 1024/2048, speech-denoise ~64 ms (512 at 8 kHz … 16384 at
// 192 kHz), speech-cues ~43 ms (256 … 8192) and 128/256/512, background profile 512, image and
// face 2-D spectra 8 … 256; odd log2 (one radix-2 stage) and even alike, down to 2 points.
const CALLER_SIZES = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];

test('the FFT matches a direct DFT at every size the callers use, forward and inverse, natural and bit-reversed', () => {
  const random = seededRandom(5);
  for (const size of CALLER_SIZES) {
    const fft = new Fft(size);
    const re = Float64Array.from({ length: size }, () => random() - 0.5);
    const im = Float64Array.from({ length: size }, () => random() - 0.5);
    const forward = directDft(re, im);
    // The unscaled inverse DFT is the forward one read at n − k.
    const mirrored = (values: Float64Array) => values.map((_, k) => values[(size - k) & (size - 1)]!);
    for (const inverse of [false, true]) {
      const expected = inverse ? { re: mirrored(forward.re), im: mirrored(forward.im) } : forward;
      const tolerance = 1e-12 * Math.max(peak(expected.re), peak(expected.im));
      const natRe = re.slice();
      const natIm = im.slice();
      fft.transform(natRe, natIm, inverse);
      const natural = Math.max(maxDifference(natRe, expected.re), maxDifference(natIm, expected.im));
      assert.ok(natural <= tolerance, `size ${size} inverse ${inverse}: ${natural} > ${tolerance}`);
      const revRe = re.slice();
      const revIm = im.slice();
      fft.transformToBitReversed(revRe, revIm, inverse);
      const at = Array.from(fft.bitReversed);
      const reversed = Math.max(maxDifference(at.map((p) => revRe[p]!), expected.re), maxDifference(at.map((p) => revIm[p]!), expected.im));
      assert.ok(reversed <= tolerance, `bit-reversed output, size ${size} inverse ${inverse}: ${reversed} > ${tolerance}`);
      // The same spectrum handed over bit-reversed: transformFromBitReversed gives it in order.
      const fromRe = new Float64Array(size);
      const fromIm = new Float64Array(size);
      for (let k = 0; k < size; k++) {
        fromRe[fft.bitReversed[k]!] = re[k]!;
        fromIm[fft.bitReversed[k]!] = im[k]!;
      }
      fft.transformFromBitReversed(fromRe, fromIm, inverse);
      const fromReversed = Math.max(maxDifference(fromRe, expected.re), maxDifference(fromIm, expected.im));
      assert.ok(fromReversed <= tolerance, `bit-reversed input, size ${size} inverse ${inverse}: ${fromReversed} > ${tolerance}`);
    }
  }
});

test('the FFT round trips: inverse after forward restores the input times the size, natural and bit-reversed', () => {
  const random = seededRandom(6);
  for (const size of CALLER_SIZES) {
    const fft = new Fft(size);
    const re = Float64Array.from({ length: size }, () => random() - 0.5);
    const im = Float64Array.from({ length: size }, () => random() - 0.5);
    const natRe = re.slice();
    const natIm = im.slice();
    fft.transform(natRe, natIm);
    fft.transform(natRe, natIm, true);
    assert.ok(maxDifference(natRe.map((v) => v / size), re) < 1e-12 && maxDifference(natIm.map((v) => v / size), im) < 1e-12, `natural round trip ${size}`);
    const revRe = re.slice();
    const revIm = im.slice();
    fft.transformToBitReversed(revRe, revIm);
    fft.transformFromBitReversed(revRe, revIm, true);
    assert.ok(maxDifference(revRe.map((v) => v / size), re) < 1e-12 && maxDifference(revIm.map((v) => v / size), im) < 1e-12, `bit-reversed round trip ${size}`);
  }
  for (const size of [0, 1, 3, 12, 1000]) assert.throws(() => new Fft(size), /not a power of two/);
});

test('RNNoise keeps the length at and around its chunk boundaries and gives a voice probability per frame', async () => {
  for (const length of [1, 479, 480, 481, 47_519, 47_520, 48_000, 96_481]) {
    const samples = noise('white', length, 3).map((v) => v * 0.1);
    const { denoised, frameVoiceProbability } = await denoise48k(samples);
    assert.equal(denoised.length, length);
    assert.equal(frameVoiceProbability.length, Math.ceil((length + 480) / 480) - 1);
    assert.ok(denoised.every(Number.isFinite));
  }
});

test('speech foreground: same length, finite, and no louder than the input, also shorter than half a window', () => {
  const rate = 48_000;
  for (const length of [100, 1500, 2048, 5000, rate * 3]) {
    const { mixture } = mixAtSnr(speechLike(length, rate, 4), noise('pink', length, 6), 5);
    const segments = [{ start: 0.5, end: 2.5, probability: 0.9 }];
    const gates = { noise: speechGate(segments, length, rate), output: speechGate(segments, length, rate, 0.2) };
    const { foreground } = speechForeground(mixture, mixture.map((v) => v * 0.5), gates, rate);
    assert.equal(foreground.length, length);
    assert.ok(foreground.every(Number.isFinite), `finite at length ${length}`);
    let input = 0;
    let output = 0;
    for (let i = 0; i < length; i++) {
      input += mixture[i]! * mixture[i]!;
      output += foreground[i]! * foreground[i]!;
    }
    assert.ok(output <= input * 1.0001, `length ${length}: gains never amplify (${output} vs ${input})`);
  }
});
