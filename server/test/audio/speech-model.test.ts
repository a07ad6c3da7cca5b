import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import detector from '../../src/detectors/audio/ai-audio.js';
import { scoreSpeech, SPEECH_MODEL_NAME } from '../../src/detectors/audio/speech-model.js';
import { istft, stft, type Spectrogram } from '../../src/detectors/audio/stft.js';
import { loadModel, outputProbability, runModel, type LoadedModel } from '../../src/detectors/model-pack.js';
import { noise, speechLike } from '../../src/eval/audio-mixtures.js';
import type { Signal } from '../../src/detectors/types.js';
import { inputFor, scratchDir, writeAudio } from './fixtures.js';
import { assertShippedWeights } from '../model-files.js';

const RATE = 16_000;
const LENGTH = 4 * RATE;
let model: LoadedModel;
let dir: string;
let cleanup: () => Promise<void>;
const never = new AbortController().signal;

before(async () => {
  ({ dir, cleanup } = await scratchDir());
  const loaded = await loadModel(SPEECH_MODEL_NAME);
  assert.deepEqual(loaded.problems, []);
  assert.ok(loaded.model, 'the built-in speech-antispoof model loads');
  model = loaded.model;
  await detector.load();
});
after(() => cleanup());

const peakNormalised = (x: Float32Array) => {
  let peak = 0;
  for (const v of x) peak = Math.max(peak, Math.abs(v));
  return x.map((v) => v / peak);
};
/** Deterministic 4 s inputs: speech-like harmonics over a noise floor, pink noise, a chirp. */
function generated(): Float32Array[] {
  const speech = speechLike(LENGTH, RATE, 11);
  const floor = noise('pink', LENGTH, 5);
  const chirp = new Float32Array(LENGTH).map((_, i) => Math.sin(2 * Math.PI * (100 + (3900 * i) / LENGTH / 2) * (i / RATE)) * 0.5);
  return [speech.map((v, i) => 0.1 * v + 0.003 * floor[i]!), noise('pink', LENGTH, 9), chirp].map(peakNormalised);
}
const logitOf = async (x: Float32Array) => (await runModel(model, x, [1, LENGTH]))[0]!;

// Logits recorded from onnxruntime-node for the shipped weights (7.0.0, training/speech/fuse.py).
const RECORDED = [-0.410589337348938, 0.6653480529785156, 3.1178994178771973];

test('the model file matches the sha256 in its descriptor', async () => {
  await assertShippedWeights(model);
  assert.equal(model.descriptor.input.kind, 'waveform');
  assert.deepEqual(model.descriptor.taskTypes, ['ai-audio-detection']);
  const t = model.descriptor.thresholds!;
  assert.ok(t.authentic <= t.manipulated);
});

test('the model reproduces its recorded outputs on generated waveforms', async () => {
  const inputs = generated();
  for (let i = 0; i < inputs.length; i++) {
    const logit = await logitOf(inputs[i]!);
    assert.ok(Math.abs(logit - RECORDED[i]!) < 1e-3, `input ${i}: logit ${logit}, recorded ${RECORDED[i]}`);
  }
});

test('speech shorter than one window is repeated to fill it, as training crops short clips, not padded with digital silence', async () => {
  const short = speechLike(Math.round(1.5 * RATE), RATE, 17).map((v) => 0.1 * v);
  const outcome = await scoreSpeech(model, short, RATE, [{ start: 0, end: 1.5, probability: 1 }]);
  assert.ok(outcome);
  assert.equal(outcome.windows.length, 1);
  assert.deepEqual([outcome.windows[0]!.start, outcome.windows[0]!.end], [0, 1.5]);
  const repeated = new Float32Array(LENGTH).map((_, i) => short[i % short.length]!);
  const zeroPadded = new Float32Array(LENGTH);
  zeroPadded.set(short);
  const probabilityOf = async (x: Float32Array) => outputProbability([await logitOf(peakNormalised(x))], model.descriptor);
  const [fromRepeated, fromZeros] = [await probabilityOf(repeated), await probabilityOf(zeroPadded)];
  assert.ok(Math.abs(outcome.probability - fromRepeated) < 1e-6, `scored ${outcome.probability}, repeated window ${fromRepeated}`);
  assert.ok(Math.abs(fromRepeated - fromZeros) > 1e-3, 'the two fillings must differ for this test to mean anything');
});

/** Magnitude-only resynthesis (Griffin & Lim, 1984): what a vocoder does from a spectrogram. */
function griffinLim(x: Float32Array, iterations: number): Float32Array {
  const target = stft(x, 512, 128);
  const magnitude = target.re.map((re, i) => Math.hypot(re, target.im[i]!));
  let phase: Spectrogram = { ...target, re: magnitude.slice(), im: new Float32Array(magnitude.length) };
  let y = istft(phase);
  for (let k = 0; k < iterations; k++) {
    const s = stft(y, 512, 128);
    const re = new Float32Array(magnitude.length);
    const im = new Float32Array(magnitude.length);
    for (let i = 0; i < magnitude.length; i++) {
      const norm = Math.hypot(s.re[i]!, s.im[i]!) || 1;
      re[i] = (magnitude[i]! * s.re[i]!) / norm;
      im[i] = (magnitude[i]! * s.im[i]!) / norm;
    }
    phase = { ...s, re, im };
    y = istft(phase);
  }
  return y;
}

test('a vocoded (Griffin-Lim resynthesised) clip scores above its original', async () => {
  const original = generated()[0]!;
  const vocoded = peakNormalised(griffinLim(original, 8));
  const [a, b] = [await logitOf(original), await logitOf(vocoded)];
  assert.ok(b > a, `vocoded logit ${b} should exceed original ${a}`);
});

test('the detector carries the model as a cited signal and scores the segments timeline', async () => {
  const rate = 44_100;
  const speech = speechLike(rate * 10, rate, 6);
  const floor = noise('pink', speech.length, 4);
  const path = await writeAudio(join(dir, 'speech.wav'), [speech.map((v, i) => 0.1 * v + 0.002 * floor[i]!)], rate, 'wav');
  const result = (await detector.analyze(inputFor(path, 'audio/wav', dir), never)).result as unknown as {
    verdict: string;
    analysisDetails: { signals: Signal[]; segments: Array<{ start: number; end: number; syntheticProbability?: number }>; modelWindows: Array<{ start: number; end: number; probability: number }> };
  };
  const signal = result.analysisDetails.signals.find((s) => s.id === `model:${SPEECH_MODEL_NAME}`);
  assert.ok(signal, 'the model signal is reported');
  assert.equal(signal.weight, 2);
  assert.ok(signal.score! > 0 && signal.score! < 1);
  assert.ok(result.analysisDetails.modelWindows.length >= 2);
  assert.ok(result.analysisDetails.segments.some((s) => typeof s.syntheticProbability === 'number'));
  for (const w of result.analysisDetails.modelWindows) assert.ok(w.end > w.start && w.start >= 0 && w.end <= 10.01);
});

/** The speech model's evidence for a file run through the whole detector: which threshold pair judged it, and why. */
async function modelEvidenceOf(path: string, type: string) {
  const result = (await detector.analyze(inputFor(path, type, dir), never)).result as unknown as { analysisDetails: { signals: Signal[] } };
  return result.analysisDetails.signals.find((s) => s.id === `model:${SPEECH_MODEL_NAME}`)!.evidence as { thresholds: { authentic: number; manipulated: number }; thresholdsChosenFor: string };
}

test('a voice note (Opus at 16 kb/s) is judged by the thresholds chosen on Opus encodings; WAV and Opus above the measured bitrates by the validation ones', async () => {
  const rate = 16_000;
  const speech = speechLike(rate * 8, rate, 7);
  const floor = noise('pink', speech.length, 3);
  const samples = [speech.map((v, i) => 0.1 * v + 0.002 * floor[i]!)];
  const descriptor = model.descriptor;
  const opus = descriptor.codecThresholds?.find((t) => t.codec === 'opus');
  assert.ok(opus && descriptor.thresholds, 'the shipped descriptor carries Opus thresholds and the validation ones');
  const note = await modelEvidenceOf(await writeAudio(join(dir, 'note.ogg'), samples, rate, 'opus', ['-b:a', '16k']), 'audio/ogg');
  assert.deepEqual(note.thresholds, { authentic: opus.authentic, manipulated: opus.manipulated });
  assert.match(note.thresholdsChosenFor, /^opus at 1\d kb\/s per channel/);
  const wav = await modelEvidenceOf(await writeAudio(join(dir, 'note.wav'), samples, rate, 'wav'), 'audio/wav');
  assert.deepEqual(wav.thresholds, descriptor.thresholds);
  // Above the bitrates the Opus thresholds were measured at, the validation thresholds stand.
  const wide = await modelEvidenceOf(await writeAudio(join(dir, 'wide.ogg'), samples, rate, 'opus', ['-b:a', '128k']), 'audio/ogg');
  assert.deepEqual(wide.thresholds, descriptor.thresholds);
});

test('an MP3 voice note takes the MP3 pair, and no codec pair calls synthetic more readily than the clean pair', async () => {
  const rate = 16_000;
  const speech = speechLike(rate * 8, rate, 11);
  const descriptor = model.descriptor;
  const mp3 = descriptor.codecThresholds?.find((t) => t.codec === 'mp3');
  assert.ok(mp3 && descriptor.thresholds, 'the shipped descriptor carries MP3 thresholds and the clean ones');
  // Stop 48: a pair chosen below the clean one (MP3 at 0.862) flagged 7.8 % of the test's real MP3s.
  for (const pair of descriptor.codecThresholds!) assert.ok(pair.manipulated >= descriptor.thresholds.manipulated, `${pair.codec} is no laxer than the clean pair`);
  const evidence = await modelEvidenceOf(await writeAudio(join(dir, 'note.mp3'), [speech.map((v) => 0.1 * v)], rate, 'mp3', ['-b:a', '64k']), 'audio/mpeg');
  assert.deepEqual(evidence.thresholds, { authentic: mp3.authentic, manipulated: mp3.manipulated });
  assert.match(evidence.thresholdsChosenFor, /^mp3 at/);
});

test('bad input gets a clear answer: a click, a 0.2 s clip, 8 kHz telephone audio (its own thresholds), 11 kHz (none), 5.1 channels, clipped audio', async () => {
  const analyse = async (path: string) =>
    (await detector.analyze(inputFor(path, 'audio/wav', dir), never)).result as unknown as { verdict: string; analysisDetails: { signals: Signal[]; notes: string[] } };
  const click = new Float32Array(RATE * 2);
  click[RATE] = 0.9;
  const clickResult = await analyse(await writeAudio(join(dir, 'click.wav'), [click], RATE, 'wav'));
  assert.equal(clickResult.verdict, 'inconclusive');
  assert.ok(clickResult.analysisDetails.notes.length > 0, 'says why');

  const short = await analyse(await writeAudio(join(dir, 'short.wav'), [speechLike(RATE / 5, RATE, 2).map((v) => v * 0.1)], RATE, 'wav'));
  assert.equal(short.verdict, 'inconclusive');

  const phone = speechLike(8_000 * 8, 8_000, 4).map((v, i) => 0.1 * v + 0.001 * Math.sin(i));
  const phoneResult = await analyse(await writeAudio(join(dir, 'phone.wav'), [phone], 8_000, 'wav'));
  const phoneModel = phoneResult.analysisDetails.signals.find((s) => s.id === `model:${SPEECH_MODEL_NAME}`);
  assert.ok(phoneModel && phoneModel.score !== null, 'the model still runs at 8 kHz (resampled to 16 kHz)');
  // 8 kHz has its own pair, chosen on the validation clips as telephone audio; the evidence names it.
  const { authentic, manipulated } = model.descriptor.narrowbandThresholds!;
  const phoneEvidence = phoneModel.evidence as { thresholds: unknown; thresholdsChosenFor: string };
  assert.deepEqual(phoneEvidence.thresholds, { authentic, manipulated });
  assert.match(phoneEvidence.thresholdsChosenFor, /sampled at 8000 Hz: thresholds chosen on the validation clips resampled to 8000 Hz/);
  assert.ok(!phoneResult.analysisDetails.notes.some((n) => /below the 16000 Hz/.test(n)), phoneResult.analysisDetails.notes.join('; '));
  // A rate below the model's that no validation clip was resampled to: it reports, names no thresholds, and does not decide.
  const odd = speechLike(11_025 * 8, 11_025, 4).map((v, i) => 0.1 * v + 0.001 * Math.sin(i));
  const oddResult = await analyse(await writeAudio(join(dir, 'odd-rate.wav'), [odd], 11_025, 'wav'));
  const oddModel = oddResult.analysisDetails.signals.find((s) => s.id === `model:${SPEECH_MODEL_NAME}`);
  assert.ok(oddModel && oddModel.score !== null);
  assert.equal((oddModel.evidence as { thresholds: unknown }).thresholds, null);
  assert.equal(oddResult.verdict, 'inconclusive');
  assert.ok(oddResult.analysisDetails.notes.some((n) => /sampled at 11025 Hz, below the 16000 Hz/.test(n)), oddResult.analysisDetails.notes.join('; '));

  const rate = 48_000;
  const voice = speechLike(rate * 6, rate, 8).map((v) => 0.1 * v);
  const silent = new Float32Array(voice.length);
  const surround = await analyse(await writeAudio(join(dir, 'surround.wav'), [silent, silent, voice, silent, silent, silent], rate, 'wav'));
  assert.ok(surround.analysisDetails.signals.some((s) => s.id === `model:${SPEECH_MODEL_NAME}`), '5.1 is downmixed and the centre speech scored');

  const clipped = await analyse(await writeAudio(join(dir, 'clipped.wav'), [voice.map((v) => Math.max(-0.05, Math.min(0.05, v * 4)))], rate, 'wav'));
  assert.ok(['authentic', 'manipulated', 'inconclusive'].includes(clipped.verdict));
});
