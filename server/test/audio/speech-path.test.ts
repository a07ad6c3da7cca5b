import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Fft4 } from '../../src/detectors/audio/fft-radix4.js';
import { denoise48k } from '../../src/detectors/audio/rnnoise.js';
import { speechForeground, speechGate } from '../../src/detectors/audio/speech-denoise.js';
import { Fft } from '../../src/detectors/signal/fft.js';
import { mixAtSnr, noise, speechLike } from '../../src/eval/audio-mixtures.js';
import { seededRandom } from '../../src/eval/seeded-random.js';

function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

test('the radix-4 FFT matches the radix-2 one, forward and inverse, also with bit-reversed spectra', () => {
  const random = seededRandom(5);
  for (const size of [4, 8, 32, 512, 1024, 2048, 4096]) {
    const re = Float64Array.from({ length: size }, () => random() - 0.5);
    const im = Float64Array.from({ length: size }, () => random() - 0.5);
    for (const inverse of [false, true]) {
      const expectedRe = re.slice();
      const expectedIm = im.slice();
      new Fft(size).transform(expectedRe, expectedIm, inverse);
      const fft = new Fft4(size);
      const natRe = re.slice();
      const natIm = im.slice();
      fft.transform(natRe, natIm, inverse);
      assert.ok(maxDifference(natRe, expectedRe) < 1e-9 && maxDifference(natIm, expectedIm) < 1e-9, `size ${size} inverse ${inverse}`);
      const revRe = re.slice();
      const revIm = im.slice();
      fft.forwardBitReversed(revRe, revIm, inverse);
      const at = Array.from(fft.bitReversed);
      assert.ok(maxDifference(at.map((p) => revRe[p]!), expectedRe) < 1e-9, `bit-reversed size ${size} inverse ${inverse}`);
      assert.ok(maxDifference(at.map((p) => revIm[p]!), expectedIm) < 1e-9);
    }
    // Forward to bit-reversed and back restores the input (times the size).
    const roundRe = re.slice();
    const roundIm = im.slice();
    const fft = new Fft4(size);
    fft.forwardBitReversed(roundRe, roundIm);
    fft.fromBitReversed(roundRe, roundIm, true);
    assert.ok(maxDifference(roundRe.map((v) => v / size), re) < 1e-12 && maxDifference(roundIm.map((v) => v / size), im) < 1e-12, `round trip ${size}`);
  }
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
