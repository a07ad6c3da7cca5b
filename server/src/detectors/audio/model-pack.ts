/**
 * Operator model packs for audio (DESIGN.md §4): an ONNX classifier plus a JSON descriptor
 * dropped into MODELS_DIR, run by onnxruntime-node on windows of the detected speech and fused
 * with the built-in signals in log-odds.
 *
 * Descriptor (`<name>.json`, beside the model):
 * {
 *   "name": "aasist-l", "version": "1", "taskTypes": ["ai-audio-detection"],
 *   "model": "aasist-l.onnx",
 *   "input": { "name": "waveform", "sampleRate": 16000, "seconds": 4, "normalise": "peak" | "none" },
 *   "output": { "name": "logits", "kind": "logit" | "probability" | "softmax", "positiveIndex": 1 },
 *   "weight": 1
 * }
 * The same shape as the image packs' descriptor (image/model-pack.ts) where it can be: the
 * model takes float32 [1, samples] of mono waveform (input and output names default to the
 * model's first); its output is read as the probability that the speech is synthetic, after a
 * sigmoid (`logit`, alias `sigmoid`) or a softmax when `kind` says so.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, resolve, sep } from 'node:path';
import type { InferenceSession } from 'onnxruntime-node';

export interface AudioModelDescriptor {
  name: string;
  version: string;
  taskTypes: string[];
  model: string;
  input: { name?: string; sampleRate: number; seconds: number; normalise?: 'peak' | 'none' };
  output: { name?: string; kind: 'logit' | 'sigmoid' | 'probability' | 'softmax'; positiveIndex?: number };
  weight?: number;
}

export interface LoadedAudioModel {
  descriptor: AudioModelDescriptor;
  session: InferenceSession;
  inputName: string;
  outputName: string;
}

export interface PackProblem {
  file: string;
  problem: string;
}

const cache = new Map<string, Promise<{ models: LoadedAudioModel[]; problems: PackProblem[] }>>();

function validate(value: unknown): AudioModelDescriptor {
  const d = value as Partial<AudioModelDescriptor>;
  const fail = (what: string): never => {
    throw new Error(`descriptor ${what}`);
  };
  if (!d || typeof d !== 'object') fail('is not an object');
  if (typeof d.name !== 'string' || !d.name) fail('needs a name');
  if (typeof d.model !== 'string' || !d.model.endsWith('.onnx')) fail('needs "model": a .onnx file name');
  if (!Array.isArray(d.taskTypes)) fail('needs "taskTypes"');
  if (!d.input || !(Number(d.input.sampleRate) >= 8000) || !(Number(d.input.seconds) > 0 && Number(d.input.seconds) <= 30)) fail('needs input.sampleRate >= 8000 and 0 < input.seconds <= 30');
  if (!d.output || !['logit', 'sigmoid', 'probability', 'softmax'].includes(String(d.output.kind))) fail('needs output.kind logit | probability | softmax');
  return { version: '0', weight: 1, ...d } as AudioModelDescriptor;
}

/**
 * Loads every pack in `modelsDir` that serves `taskType`, once per thread. A broken pack is
 * skipped and reported (the detector lists it), never fatal: the built-in signals still work.
 */
export function loadAudioModelPacks(modelsDir: string | null, taskType: string): Promise<{ models: LoadedAudioModel[]; problems: PackProblem[] }> {
  if (!modelsDir) return Promise.resolve({ models: [], problems: [] });
  const key = `${resolve(modelsDir)}\0${taskType}`;
  let entry = cache.get(key);
  if (!entry) {
    entry = loadFrom(resolve(modelsDir), taskType);
    cache.set(key, entry);
  }
  return entry;
}

async function loadFrom(directory: string, taskType: string): Promise<{ models: LoadedAudioModel[]; problems: PackProblem[] }> {
  const models: LoadedAudioModel[] = [];
  const problems: PackProblem[] = [];
  let names: string[];
  try {
    names = (await readdir(directory)).filter((name) => name.endsWith('.json')).sort();
  } catch {
    return { models, problems: [{ file: directory, problem: 'models directory cannot be read' }] };
  }
  const ort = await import('onnxruntime-node');
  for (const name of names) {
    try {
      const descriptor = validate(JSON.parse(await readFile(join(directory, name), 'utf8')));
      if (!descriptor.taskTypes.includes(taskType)) continue;
      // The model file must sit in the models directory itself: no path tricks.
      const modelPath = join(directory, basename(descriptor.model));
      if (!modelPath.startsWith(directory + sep)) throw new Error('model path escapes the models directory');
      const session = await ort.InferenceSession.create(await readFile(modelPath), { intraOpNumThreads: 1, interOpNumThreads: 1 });
      const inputName = descriptor.input.name ?? session.inputNames[0]!;
      const outputName = descriptor.output.name ?? session.outputNames[0]!;
      if (!session.inputNames.includes(inputName)) throw new Error(`model has no input named ${inputName}`);
      if (!session.outputNames.includes(outputName)) throw new Error(`model has no output named ${outputName}`);
      models.push({ descriptor, session, inputName, outputName });
    } catch (error) {
      problems.push({ file: name, problem: (error as Error).message });
    }
  }
  return { models, problems };
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * Runs one model over up to `maxWindows` windows of speech (already at the model's rate) and
 * returns the mean probability of the positive class, or null when there is too little speech.
 */
export async function runAudioModel(model: LoadedAudioModel, speech: Float32Array, maxWindows = 8): Promise<{ probability: number; windows: number } | null> {
  const ort = await import('onnxruntime-node');
  const { input, output } = model.descriptor;
  const windowLength = Math.round(input.seconds * input.sampleRate);
  if (speech.length < windowLength / 2) return null;
  const windowCount = Math.max(1, Math.min(maxWindows, Math.floor(speech.length / windowLength)));
  const stride = windowCount > 1 ? (speech.length - windowLength) / (windowCount - 1) : 0;
  let sum = 0;
  for (let w = 0; w < windowCount; w++) {
    const window = new Float32Array(windowLength);
    const start = Math.max(0, Math.round(w * stride));
    window.set(speech.subarray(start, start + windowLength));
    if (input.normalise === 'peak') {
      let peak = 0;
      for (const v of window) peak = Math.max(peak, Math.abs(v));
      if (peak > 0) for (let i = 0; i < window.length; i++) window[i] = window[i]! / peak;
    }
    const result = await model.session.run({ [model.inputName]: new ort.Tensor('float32', window, [1, windowLength]) });
    const values = Array.from(result[model.outputName]!.data as Float32Array);
    const index = output.positiveIndex ?? (values.length > 1 ? 1 : 0);
    let probability: number;
    if (output.kind === 'softmax') {
      const max = Math.max(...values);
      const exps = values.map((v) => Math.exp(v - max));
      probability = exps[index]! / exps.reduce((a, b) => a + b, 0);
    } else if (output.kind === 'sigmoid' || output.kind === 'logit') probability = sigmoid(values[index]!);
    else probability = values[index]!;
    if (!Number.isFinite(probability)) throw new Error(`model ${model.descriptor.name} returned a non-finite output`);
    sum += Math.min(1, Math.max(0, probability));
  }
  return { probability: sum / windowCount, windows: windowCount };
}
