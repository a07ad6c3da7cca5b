/**
 * The built-in learned synthetic-speech model (issue 19), run over the speech Silero VAD finds.
 *
 * Model: linear-frequency cepstral coefficients (LFCC; Sahidullah, Kinnunen & Hanilçi,
 * "A comparison of features for synthetic speech detection", Interspeech 2015; Todisco, Delgado &
 * Evans, "Constant Q cepstral coefficients", Computer Speech & Language 2017, for cepstra in
 * anti-spoofing) computed inside the ONNX graph from raw 16 kHz samples, then a small CNN. Trained
 * in training/speech/ on real and synthetic speech from public TTS/vocoder demo pages, with whole
 * systems held out for validation; see training/speech/MODEL_CARD.md. Loaded only through
 * model-pack.ts; an operator pack named `speech-antispoof` in MODELS_DIR replaces it.
 */
import { outputProbability, positiveLogit, runModel, type LoadedModel, type WaveformInput } from '../model-pack.js';
import { resample } from './pcm.js';
import type { SpeechSegment } from './vad.js';

export const SPEECH_MODEL_NAME = 'speech-antispoof';
/** Bounds the work on long recordings: windows are spread evenly over the speech beyond this. */
const MAX_WINDOWS = 120;

export interface WindowScore {
  /** Seconds in the file of the first and last speech sample the window covers. */
  start: number;
  end: number;
  probability: number;
}

export interface SpeechModelOutcome {
  /** Calibrated probability that the speech is synthetic (from the mean window logit). */
  probability: number;
  windows: WindowScore[];
  /** Per VAD segment: overlap-weighted mean of the window probabilities covering it. */
  segmentProbabilities: Array<number | null>;
  windowSeconds: number;
}

/**
 * Scores the concatenated speech in windows of the model's length (the last one aligned to the
 * end) and maps each window back to file time. Speech shorter than one window is repeated to fill
 * it, as training crops short clips: zeros would be digital silence, which reads as synthetic.
 */
export async function scoreSpeech(
  model: LoadedModel,
  samples16k: Float32Array,
  rate16k: number,
  segments: readonly SpeechSegment[],
  signal?: AbortSignal,
): Promise<SpeechModelOutcome | null> {
  const input = model.descriptor.input as WaveformInput;
  const ranges = segments.map((s) => [Math.floor(s.start * rate16k), Math.min(samples16k.length, Math.ceil(s.end * rate16k))] as const);
  const total = ranges.reduce((n, [a, b]) => n + b - a, 0);
  if (total === 0) return null;
  const speech16k = new Float32Array(total);
  const starts: number[] = [];
  let offset = 0;
  for (const [a, b] of ranges) {
    starts.push(offset);
    speech16k.set(samples16k.subarray(a, b), offset);
    offset += b - a;
  }
  const speech = input.sampleRate === rate16k ? speech16k : await resample(speech16k, rate16k, input.sampleRate, signal);
  if (speech.length === 0) return null;
  const ratio = input.sampleRate / rate16k;
  const length = Math.round(input.seconds * input.sampleRate);
  const count = Math.max(1, Math.min(MAX_WINDOWS, Math.ceil(speech.length / length)));
  const stride = count > 1 ? (speech.length - length) / (count - 1) : 0;

  // Concatenated position (in 16 kHz samples) → seconds in the file.
  const toTime = (position16k: number) => {
    let k = 0;
    while (k + 1 < starts.length && starts[k + 1]! <= position16k) k++;
    return (ranges[k]![0] + Math.min(position16k - starts[k]!, ranges[k]![1] - ranges[k]![0])) / rate16k;
  };
  const windows: WindowScore[] = [];
  const spans: Array<[number, number]> = [];
  let logitSum = 0;
  let logitCount = 0;
  for (let w = 0; w < count; w++) {
    signal?.throwIfAborted();
    const begin = Math.max(0, Math.round(w * stride));
    const window = new Float32Array(length);
    if (speech.length >= length) window.set(speech.subarray(begin, begin + length));
    else for (let at = 0; at < length; at += speech.length) window.set(speech.subarray(0, Math.min(speech.length, length - at)), at);
    let peak = 0;
    for (const v of window) peak = Math.max(peak, Math.abs(v));
    if (input.normalise === 'peak' && peak > 0) for (let i = 0; i < length; i++) window[i] = window[i]! / peak;
    const values = await runModel(model, window, [1, length]);
    const logit = model.descriptor.output.kind === 'logit' && values.length > 0 ? positiveLogit(values, model.descriptor.output) : null;
    if (logit !== null) {
      logitSum += logit;
      logitCount++;
    }
    const span: [number, number] = [begin / ratio, Math.min(speech.length, begin + length) / ratio];
    spans.push(span);
    windows.push({ start: round3(toTime(span[0])), end: round3(toTime(span[1] - 1)), probability: outputProbability(values, model.descriptor) });
  }
  // Calibration was fitted on the mean window logit; other output kinds average probabilities.
  const probability = logitCount === count ? outputProbability([logitSum / count], model.descriptor) : windows.reduce((s, w) => s + w.probability, 0) / count;

  const segmentProbabilities = ranges.map(([a, b], k) => {
    const from = starts[k]!;
    const to = from + (b - a);
    let weight = 0;
    let sum = 0;
    spans.forEach(([s, e], w) => {
      const overlap = Math.min(e, to) - Math.max(s, from);
      if (overlap > 0) {
        weight += overlap;
        sum += overlap * windows[w]!.probability;
      }
    });
    return weight > 0 ? sum / weight : null;
  });
  return { probability, windows, segmentProbabilities, windowSeconds: input.seconds };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
