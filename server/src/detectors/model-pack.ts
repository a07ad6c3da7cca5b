/**
 * The one model-pack loader (DESIGN.md §4, TRAINING.md "Shipping a model"): every learned
 * model, built in or dropped in by an operator, is an ONNX file plus a JSON descriptor, run by
 * onnxruntime-node. Built-in models ship in `server/models/` with a sha256 that is checked at
 * load; operator packs in `MODELS_DIR` keep working and replace a built-in model of the same
 * name. A pack that is malformed, missing or altered is reported and skipped, never fatal: the
 * detector's other evidence still works. Nothing is downloaded.
 *
 * Descriptor (`<name>.json` beside `<name>.onnx`):
 * {
 *   "name": "my-detector", "version": "1", "taskTypes": ["ai-image-detection"],
 *   "model": "my-detector.onnx", "sha256": "…",          // sha256 required for built-in models
 *   "input": one of
 *     { "kind": "image", "name"?, "width": 224, "height": 224, "layout": "NCHW" | "NHWC",
 *       "scale": 0.00392156862745098, "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225],
 *       "resize": "fill" | "cover" }
 *     { "kind": "waveform", "name"?, "sampleRate": 16000, "seconds": 4, "normalise": "peak" | "none" }
 *     { "kind": "tensor", "name"?, "shape": [1, 3, 64, 64], …detector-specific preprocessing }
 *   (without "kind": "sampleRate" means waveform, "width"/"height" image, as older packs wrote),
 *   "output": { "name"?, "kind": "logit" | "sigmoid" | "probability" | "softmax", "positiveIndex": 1 },
 *   "weight": 1,                                          // log-odds weight in a fusion
 *   "calibration"?: { "method": "platt", "a": 1.2, "b": -0.3 },   // p = sigmoid(a·logit + b)
 *   "thresholds"?: { "authentic": 0.2, "manipulated": 0.8 },     // on the calibrated probability
 *   "codecThresholds"?: [{ "codec": "opus", "maxKbpsPerChannel": 34, "authentic": 0.1, "manipulated": 0.9 }],
 *                                                         // audio: for files of that codec up to that bitrate
 *   "narrowbandThresholds"?: { "sampleRates": [8000], "authentic": 0.1, "manipulated": 0.9 },
 *                                                         // audio: for files sampled at those rates, below the model's
 *   "training"?: { … }                                   // data and figures, for the model card
 * }
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InferenceSession } from 'onnxruntime-node';
import sharp from 'sharp';
import type { Raster } from './image/image-input.js';
import { sigmoid } from './result.js';
import type { Signal } from './types.js';

export interface ImageInput {
  kind: 'image';
  name?: string;
  width: number;
  height: number;
  layout: 'NCHW' | 'NHWC';
  scale: number;
  mean: number[];
  std: number[];
  resize: 'fill' | 'cover';
  /** Face models: the square crop's side as a share of the larger side of the face box (the training geometry). */
  faceCropShare?: number;
}
export interface WaveformInput {
  kind: 'waveform';
  name?: string;
  sampleRate: number;
  seconds: number;
  normalise: 'peak' | 'none';
}
export interface TensorInput {
  kind: 'tensor';
  name?: string;
  shape: number[];
  [detectorSpecific: string]: unknown;
}

export interface ModelDescriptor {
  name: string;
  version: string;
  taskTypes: string[];
  model: string;
  sha256?: string;
  input: ImageInput | WaveformInput | TensorInput;
  output: { name?: string; kind: 'logit' | 'sigmoid' | 'probability' | 'softmax'; positiveIndex: number };
  weight: number;
  calibration?: { method: 'platt'; a: number; b: number };
  thresholds?: { authentic: number; manipulated: number };
  /** Audio models: thresholds for files of a lossy codec (ffmpeg's name) up to a bitrate, chosen on the validation clips encoded so. */
  codecThresholds?: Array<{ codec: string; maxKbpsPerChannel: number; authentic: number; manipulated: number }>;
  /** Audio models: thresholds for files sampled at these rates (below the model's own), chosen on the validation clips resampled so. */
  narrowbandThresholds?: { sampleRates: number[]; authentic: number; manipulated: number };
  training?: Record<string, unknown>;
}

export interface LoadedModel {
  descriptor: ModelDescriptor;
  session: InferenceSession;
  inputName: string;
  outputName: string;
  origin: 'built-in' | 'operator';
  /** An operator pack that took a built-in model's name: it runs wherever that model runs. */
  replacesBuiltIn: boolean;
}

export interface ModelProblem {
  file: string;
  problem: string;
  /** The task types the broken pack meant to serve, when its descriptor could be read. */
  taskTypes?: string[];
}

/**
 * The signal of a learned model that did not run (not installed, refused, or the input is
 * outside its gate): reported with the reason and any load problems, weighing nothing.
 */
export function modelNotRunSignal(model: string, label: string, reason: string, problems?: ModelProblem[], evidence: Record<string, unknown> = {}): Signal {
  return { id: `model:${model}`, label, score: null, weight: 0, evidence: { ...evidence, note: reason, ...(problems?.length && { problems }) } };
}

/** `server/models`, shipped with the code. */
export const BUILT_IN_MODELS_DIR = fileURLToPath(new URL('../../models/', import.meta.url));

const MAX_INPUT_SIDE = 2048;
const OUTPUT_KINDS = ['logit', 'sigmoid', 'probability', 'softmax'] as const;

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** 0 <= authentic <= manipulated <= 1, on the calibrated probability. */
const isThresholdPair = (t: unknown): t is { authentic: number; manipulated: number } =>
  isObject(t) && typeof t.authentic === 'number' && typeof t.manipulated === 'number' && t.authentic >= 0 && t.authentic <= t.manipulated && t.manipulated <= 1;
const isCodecThreshold = (t: unknown): t is { codec: string; maxKbpsPerChannel: number; authentic: number; manipulated: number } =>
  isObject(t) && typeof t.codec === 'string' && Number(t.maxKbpsPerChannel) > 0 && isThresholdPair(t);
const isNarrowband = (t: unknown): t is { sampleRates: number[]; authentic: number; manipulated: number } =>
  isObject(t) && Array.isArray(t.sampleRates) && t.sampleRates.length > 0 && t.sampleRates.every((rate) => Number.isInteger(rate) && rate > 0) && isThresholdPair(t);
const isOutputKind = (kind: unknown): kind is ModelDescriptor['output']['kind'] => (OUTPUT_KINDS as readonly unknown[]).includes(kind);

/** Checks a parsed descriptor and fills defaults; throws with a message naming the problem. */
export function validateDescriptor(value: unknown): ModelDescriptor {
  if (!isObject(value)) throw new Error('descriptor is not an object');
  const d = value;
  if (typeof d.name !== 'string' || !d.name) throw new Error('"name" is required');
  if (!Array.isArray(d.taskTypes) || d.taskTypes.length === 0) throw new Error('"taskTypes" must list task type slugs');
  if (typeof d.model !== 'string' || basename(d.model) !== d.model || !d.model.endsWith('.onnx')) throw new Error('"model" must be a .onnx file name inside the models directory');
  if (d.sha256 !== undefined && !/^[0-9a-f]{64}$/.test(String(d.sha256))) throw new Error('"sha256" must be 64 lowercase hex digits');
  const output = isObject(d.output) ? d.output : {};
  const kind = output.kind ?? 'probability';
  if (!isOutputKind(kind)) throw new Error('"output.kind" must be logit, sigmoid, probability or softmax');
  const calibration = d.calibration;
  if (calibration !== undefined && !(isObject(calibration) && calibration.method === 'platt' && Number.isFinite(calibration.a) && Number.isFinite(calibration.b))) {
    throw new Error('"calibration" must be {method: "platt", a, b} with finite numbers');
  }
  const thresholds = d.thresholds;
  if (thresholds !== undefined && !isThresholdPair(thresholds)) {
    throw new Error('"thresholds" must satisfy 0 <= authentic <= manipulated <= 1');
  }
  const codecThresholds = d.codecThresholds;
  if (codecThresholds !== undefined && !(Array.isArray(codecThresholds) && codecThresholds.every(isCodecThreshold))) {
    throw new Error('"codecThresholds" must list {codec, maxKbpsPerChannel > 0, authentic, manipulated} with 0 <= authentic <= manipulated <= 1');
  }
  const narrowband = d.narrowbandThresholds;
  if (narrowband !== undefined && !isNarrowband(narrowband)) {
    throw new Error('"narrowbandThresholds" must be {sampleRates: [positive integers], authentic, manipulated} with 0 <= authentic <= manipulated <= 1');
  }
  return {
    name: d.name,
    version: String(d.version ?? '0'),
    taskTypes: d.taskTypes.map(String),
    model: d.model,
    ...(d.sha256 !== undefined && { sha256: String(d.sha256) }),
    input: validateInput(isObject(d.input) ? d.input : {}),
    output: { ...(output.name ? { name: String(output.name) } : {}), kind, positiveIndex: Number(output.positiveIndex ?? (kind === 'softmax' ? 1 : 0)) },
    weight: Number.isFinite(Number(d.weight)) ? Number(d.weight) : 1,
    ...(isObject(calibration) && { calibration: { method: 'platt' as const, a: calibration.a as number, b: calibration.b as number } }),
    ...(isThresholdPair(thresholds) && { thresholds: { authentic: thresholds.authentic, manipulated: thresholds.manipulated } }),
    ...(Array.isArray(codecThresholds) && {
      codecThresholds: codecThresholds.filter(isCodecThreshold).map((t) => ({ codec: t.codec, maxKbpsPerChannel: Number(t.maxKbpsPerChannel), authentic: t.authentic, manipulated: t.manipulated })),
    }),
    ...(isNarrowband(narrowband) && { narrowbandThresholds: { sampleRates: narrowband.sampleRates.map(Number), authentic: narrowband.authentic, manipulated: narrowband.manipulated } }),
    ...(isObject(d.training) && { training: d.training }),
  };
}

function validateInput(input: JsonObject): ModelDescriptor['input'] {
  const name = typeof input.name === 'string' && input.name ? { name: input.name } : {};
  const kind = input.kind ?? (input.sampleRate !== undefined ? 'waveform' : input.shape !== undefined ? 'tensor' : 'image');
  if (kind === 'waveform') {
    const sampleRate = Number(input.sampleRate), seconds = Number(input.seconds);
    if (!(sampleRate >= 8000 && sampleRate <= 192000) || !(seconds > 0 && seconds <= 30)) throw new Error('"input.sampleRate" must be 8000..192000 and "input.seconds" in (0, 30]');
    return { kind, ...name, sampleRate, seconds, normalise: input.normalise === 'peak' ? 'peak' : 'none' };
  }
  if (kind === 'tensor') {
    const shape = input.shape;
    if (!Array.isArray(shape) || shape.length === 0 || shape.some((n: unknown) => !Number.isInteger(n) || (n as number) < 1)) throw new Error('"input.shape" must list positive integers');
    return { ...input, kind, shape: shape.map(Number) } as TensorInput;
  }
  if (kind !== 'image') throw new Error('"input.kind" must be image, waveform or tensor');
  const width = Number(input.width), height = Number(input.height);
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width > MAX_INPUT_SIDE || height > MAX_INPUT_SIDE) {
    throw new Error(`"input.width" and "input.height" must be integers in 1..${MAX_INPUT_SIDE}`);
  }
  const mean = input.mean ?? [0, 0, 0], std = input.std ?? [1, 1, 1];
  if (!Array.isArray(mean) || !Array.isArray(std) || mean.length !== 3 || std.length !== 3 || std.some((s: unknown) => !(Number(s) > 0))) {
    throw new Error('"input.mean" and "input.std" must hold 3 numbers (std > 0)');
  }
  const faceCropShare = input.faceCropShare === undefined ? undefined : Number(input.faceCropShare);
  if (faceCropShare !== undefined && !(faceCropShare >= 0.1 && faceCropShare <= 3)) throw new Error('"input.faceCropShare" must be a number in 0.1..3');
  return {
    kind,
    ...name,
    width,
    height,
    layout: input.layout === 'NHWC' ? 'NHWC' : 'NCHW',
    scale: Number(input.scale ?? 1 / 255),
    mean: mean.map(Number),
    std: std.map(Number),
    resize: input.resize === 'cover' ? 'cover' : 'fill',
    ...(faceCropShare !== undefined && { faceCropShare }),
  };
}

interface Catalogue {
  models: LoadedModel[];
  problems: ModelProblem[];
}

// Loaded once per thread and MODELS_DIR: sessions are expensive; operators restart workers to add packs.
const catalogues = new Map<string, Promise<Catalogue>>();

function catalogue(modelsDir: string | null | undefined, builtInDir: string): Promise<Catalogue> {
  const operatorDir = modelsDir ? resolve(modelsDir) : null;
  const key = `${resolve(builtInDir)}\0${operatorDir ?? ''}`;
  let entry = catalogues.get(key);
  if (!entry) {
    entry = loadCatalogue(operatorDir, builtInDir);
    catalogues.set(key, entry);
  }
  return entry;
}

async function loadCatalogue(modelsDir: string | null, builtInDir: string): Promise<Catalogue> {
  const problems: ModelProblem[] = [];
  const builtIn = await loadDirectory(builtInDir, 'built-in', problems);
  const operator = modelsDir ? await loadDirectory(modelsDir, 'operator', problems) : [];
  const builtInNames = new Set(builtIn.map((m) => m.descriptor.name));
  const overridden = new Set(operator.map((m) => m.descriptor.name));
  for (const model of operator) model.replacesBuiltIn = builtInNames.has(model.descriptor.name);
  return { models: [...builtIn.filter((m) => !overridden.has(m.descriptor.name)), ...operator], problems };
}

async function loadDirectory(directory: string, origin: LoadedModel['origin'], problems: ModelProblem[]): Promise<LoadedModel[]> {
  let names: string[];
  try {
    names = (await readdir(directory)).filter((name) => name.endsWith('.json')).sort();
  } catch {
    if (origin === 'operator') problems.push({ file: directory, problem: 'models directory cannot be read' });
    return [];
  }
  const models: LoadedModel[] = [];
  for (const file of names) {
    let taskTypes: string[] | undefined;
    try {
      const parsed = JSON.parse(await readFile(join(directory, file), 'utf8'));
      if (Array.isArray(parsed?.taskTypes)) taskTypes = parsed.taskTypes.map(String);
      const descriptor = validateDescriptor(parsed);
      if (origin === 'built-in' && !descriptor.sha256) throw new Error('a built-in model must declare its sha256');
      const bytes = await readFile(join(directory, descriptor.model)).catch(() => {
        throw new Error(`model file ${descriptor.model} not found`);
      });
      if (descriptor.sha256) {
        const actual = createHash('sha256').update(bytes).digest('hex');
        if (actual !== descriptor.sha256) throw new Error(`${descriptor.model} has sha256 ${actual}, the descriptor says ${descriptor.sha256}: altered or corrupt, not loaded`);
      }
      const ort = await import('onnxruntime-node');
      const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, interOpNumThreads: 1 });
      const inputName = descriptor.input.name ?? session.inputNames[0]!;
      const outputName = descriptor.output.name ?? session.outputNames[0]!;
      if (!session.inputNames.includes(inputName)) throw new Error(`model has no input named ${inputName}`);
      if (!session.outputNames.includes(outputName)) throw new Error(`model has no output named ${outputName}`);
      models.push({ descriptor, session, inputName, outputName, origin, replacesBuiltIn: false });
    } catch (error) {
      problems.push({ file: origin === 'built-in' ? `server/models/${file}` : file, problem: (error as Error).message, ...(taskTypes && { taskTypes }) });
    }
  }
  return models;
}

/**
 * Every model (built in and from MODELS_DIR) that serves the task type slug. `builtInDir` is
 * `server/models` except in the loader's own tests.
 */
export async function loadModels(taskType: string, modelsDir?: string | null, builtInDir = BUILT_IN_MODELS_DIR): Promise<{ models: LoadedModel[]; problems: ModelProblem[] }> {
  const { models, problems } = await catalogue(modelsDir, builtInDir);
  return {
    models: models.filter((m) => m.descriptor.taskTypes.includes(taskType)),
    problems: problems.filter((p) => !p.taskTypes || p.taskTypes.includes(taskType)),
  };
}

/** Operator packs of one input kind run generically by a detector (not the built-ins it runs itself). */
export async function loadOperatorPacks(taskType: string, kind: ModelDescriptor['input']['kind'], modelsDir?: string | null, builtInDir = BUILT_IN_MODELS_DIR) {
  const { models, problems } = await loadModels(taskType, modelsDir, builtInDir);
  return { models: models.filter((m) => m.origin === 'operator' && !m.replacesBuiltIn && m.descriptor.input.kind === kind), problems };
}

/** One model by name: an operator pack of that name first, else the built-in one. */
export async function loadModel(name: string, modelsDir?: string | null, builtInDir = BUILT_IN_MODELS_DIR): Promise<{ model: LoadedModel | null; problems: ModelProblem[] }> {
  const { models, problems } = await catalogue(modelsDir, builtInDir);
  const model = models.find((m) => m.descriptor.name === name) ?? null;
  const own = problems.filter((p) => basename(p.file).replace(/\.json$/, '') === name);
  return { model, problems: model || own.length ? own : [{ file: `${name}.json`, problem: 'no such model is installed' }] };
}

/** Runs the session on one float32 tensor and returns its raw output values. */
export async function runModel(model: LoadedModel, data: Float32Array, dims: readonly number[]): Promise<Float32Array> {
  const ort = await import('onnxruntime-node');
  const outputs = await model.session.run({ [model.inputName]: new ort.Tensor('float32', data, dims) });
  const values = outputs[model.outputName]!.data as Float32Array;
  for (const value of values) if (!Number.isFinite(value)) throw new Error(`model ${model.descriptor.name} returned a non-finite output`);
  return values;
}

/** The raw logit of the positive class, for outputs that have one (calibration works on it). */
export function positiveLogit(values: ArrayLike<number>, output: ModelDescriptor['output']): number | null {
  const index = Math.min(values.length - 1, Math.max(0, output.positiveIndex));
  if (output.kind === 'logit' || output.kind === 'sigmoid') return Number(values[index]);
  if (output.kind === 'softmax' && values.length === 2) return Number(values[index]) - Number(values[1 - index]);
  return null;
}

/** Raw output → probability of the positive class, Platt-calibrated when the descriptor says so. */
export function outputProbability(values: ArrayLike<number>, descriptor: Pick<ModelDescriptor, 'output' | 'calibration'>): number {
  const { output, calibration } = descriptor;
  const logit = positiveLogit(values, output);
  if (calibration && logit !== null) return sigmoid(calibration.a * logit + calibration.b);
  if (logit !== null) return sigmoid(logit);
  const index = Math.min(values.length - 1, Math.max(0, output.positiveIndex));
  if (output.kind === 'softmax') {
    const max = Math.max(...Array.from(values));
    const exps = Array.from(values, (v) => Math.exp(v - max));
    return exps[index]! / exps.reduce((a, b) => a + b, 0);
  }
  return Math.min(1, Math.max(0, Number(values[index])));
}

/** Resizes and normalises an RGB(A) raster into an image input's tensor layout. */
export async function imageTensor(raster: Raster, input: ImageInput): Promise<Float32Array> {
  const { data } = await sharp(raster.data, { raw: { width: raster.width, height: raster.height, channels: raster.channels as 3 | 4 } })
    .removeAlpha()
    .resize({ width: input.width, height: input.height, fit: input.resize === 'cover' ? 'cover' : 'fill', kernel: 'cubic' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const plane = input.width * input.height;
  const tensor = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) {
      const value = (data[i * 3 + c]! * input.scale - input.mean[c]!) / input.std[c]!;
      tensor[input.layout === 'NCHW' ? c * plane + i : i * 3 + c] = value;
    }
  }
  return tensor;
}

/** Probability of the positive class for one image, per an `image` input. */
export async function runImageModel(model: LoadedModel, raster: Raster): Promise<number> {
  const input = model.descriptor.input as ImageInput;
  const dims = input.layout === 'NCHW' ? [1, 3, input.height, input.width] : [1, input.height, input.width, 3];
  return outputProbability(await runModel(model, await imageTensor(raster, input), dims), model.descriptor);
}

/**
 * Mean probability of the positive class over up to `maxWindows` windows of a waveform already
 * at the model's rate, or null when there is less than half a window.
 */
export async function runWaveformModel(model: LoadedModel, samples: Float32Array, maxWindows = 8): Promise<{ probability: number; windows: number } | null> {
  const input = model.descriptor.input as WaveformInput;
  const windowLength = Math.round(input.seconds * input.sampleRate);
  if (samples.length < windowLength / 2) return null;
  const windowCount = Math.max(1, Math.min(maxWindows, Math.floor(samples.length / windowLength)));
  const stride = windowCount > 1 ? (samples.length - windowLength) / (windowCount - 1) : 0;
  let sum = 0;
  for (let w = 0; w < windowCount; w++) {
    const window = new Float32Array(windowLength);
    const start = Math.max(0, Math.round(w * stride));
    window.set(samples.subarray(start, start + windowLength));
    if (input.normalise === 'peak') {
      let peak = 0;
      for (const v of window) peak = Math.max(peak, Math.abs(v));
      if (peak > 0) for (let i = 0; i < window.length; i++) window[i] = window[i]! / peak;
    }
    sum += outputProbability(await runModel(model, window, [1, windowLength]), model.descriptor);
  }
  return { probability: sum / windowCount, windows: windowCount };
}
