/**
 * Operator model packs (DESIGN.md §4): an ONNX classifier plus a JSON descriptor dropped into
 * MODELS_DIR, run with onnxruntime-node and fused with the built-in signals. Nothing is
 * downloaded; a pack that is malformed is reported and skipped, never fatal.
 *
 * Descriptor (`<anything>.json` beside the model):
 * {
 *   "name": "my-detector", "version": "1", "taskTypes": ["ai-image-detection"],
 *   "model": "my-detector.onnx",                      // file name inside MODELS_DIR
 *   "input": { "name": "input", "width": 224, "height": 224, "layout": "NCHW" | "NHWC",
 *              "scale": 0.00392156862745098,            // applied first (1/255)
 *              "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225],
 *              "resize": "fill" | "cover" },            // stretch, or centre-crop to aspect
 *   "output": { "name": "logits", "kind": "logit" | "probability" | "softmax", "positiveIndex": 1 },
 *   "weight": 1                                         // log-odds weight in the fusion
 * }
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import sharp from 'sharp';
import type { Signal } from '../types.js';
import { round4 } from '../result.js';
import type { Raster } from './image-input.js';

export interface ModelPackDescriptor {
  name: string;
  version: string;
  taskTypes: string[];
  model: string;
  input: { name?: string; width: number; height: number; layout: 'NCHW' | 'NHWC'; scale: number; mean: number[]; std: number[]; resize: 'fill' | 'cover' };
  output: { name?: string; kind: 'logit' | 'probability' | 'softmax'; positiveIndex: number };
  weight: number;
}

type Ort = typeof import('onnxruntime-node');
type Session = Awaited<ReturnType<Ort['InferenceSession']['create']>>;

export interface LoadedModelPack {
  descriptor: ModelPackDescriptor;
  session: Session;
  inputName: string;
  outputName: string;
}

export interface ModelPackProblem {
  file: string;
  problem: string;
}

const MAX_INPUT_SIDE = 2048;

/** Checks a parsed descriptor and fills defaults; throws with a message naming the problem. */
export function validateDescriptor(value: unknown): ModelPackDescriptor {
  const d = value as Partial<ModelPackDescriptor> & { input?: Partial<ModelPackDescriptor['input']>; output?: Partial<ModelPackDescriptor['output']> };
  if (!d || typeof d !== 'object') throw new Error('descriptor is not an object');
  if (typeof d.name !== 'string' || !d.name) throw new Error('"name" is required');
  if (!Array.isArray(d.taskTypes) || d.taskTypes.length === 0) throw new Error('"taskTypes" must list task type slugs');
  if (typeof d.model !== 'string' || basename(d.model) !== d.model || !d.model.endsWith('.onnx')) throw new Error('"model" must be a .onnx file name inside MODELS_DIR');
  const input: Partial<ModelPackDescriptor['input']> = d.input ?? {};
  const width = Number(input.width), height = Number(input.height);
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width > MAX_INPUT_SIDE || height > MAX_INPUT_SIDE) {
    throw new Error(`"input.width" and "input.height" must be integers in 1..${MAX_INPUT_SIDE}`);
  }
  const mean = input.mean ?? [0, 0, 0], std = input.std ?? [1, 1, 1];
  if (mean.length !== 3 || std.length !== 3 || std.some((s: number) => !(Number(s) > 0))) throw new Error('"input.mean" and "input.std" must hold 3 numbers (std > 0)');
  const output: Partial<ModelPackDescriptor['output']> = d.output ?? {};
  const kind = output.kind ?? 'probability';
  if (!['logit', 'probability', 'softmax'].includes(kind)) throw new Error('"output.kind" must be logit, probability or softmax');
  return {
    name: d.name,
    version: String(d.version ?? '0'),
    taskTypes: d.taskTypes.map(String),
    model: d.model,
    input: {
      ...(input.name && { name: input.name }),
      width,
      height,
      layout: input.layout === 'NHWC' ? 'NHWC' : 'NCHW',
      scale: Number(input.scale ?? 1 / 255),
      mean: mean.map(Number),
      std: std.map(Number),
      resize: input.resize === 'cover' ? 'cover' : 'fill',
    },
    output: { ...(output.name && { name: output.name }), kind, positiveIndex: Number(output.positiveIndex ?? (kind === 'softmax' ? 1 : 0)) },
    weight: Number.isFinite(Number(d.weight)) ? Number(d.weight) : 1,
  };
}

/** Loads every valid pack for the task type; problems are collected, not thrown. */
export async function loadModelPacks(modelsDir: string, taskType: string, problems: ModelPackProblem[] = []): Promise<LoadedModelPack[]> {
  let entries: string[];
  try {
    entries = await readdir(modelsDir);
  } catch {
    return [];
  }
  const packs: LoadedModelPack[] = [];
  let ort: Ort | undefined;
  for (const file of entries.filter((e) => e.endsWith('.json')).sort()) {
    try {
      const descriptor = validateDescriptor(JSON.parse(await readFile(join(modelsDir, file), 'utf8')));
      if (!descriptor.taskTypes.includes(taskType)) continue;
      const modelPath = join(modelsDir, descriptor.model);
      if (!(await stat(modelPath)).isFile()) throw new Error(`model file ${descriptor.model} not found`);
      ort ??= await import('onnxruntime-node');
      const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
      const inputName = descriptor.input.name ?? session.inputNames[0];
      const outputName = descriptor.output.name ?? session.outputNames[0];
      if (!inputName || !session.inputNames.includes(inputName)) throw new Error(`model has no input named ${inputName}`);
      if (!outputName || !session.outputNames.includes(outputName)) throw new Error(`model has no output named ${outputName}`);
      packs.push({ descriptor, session, inputName, outputName });
    } catch (error) {
      problems.push({ file, problem: (error as Error).message });
    }
  }
  return packs;
}

/** Resizes and normalises an RGB(A) raster into the pack's input tensor layout. */
export async function preprocess(raster: Raster, input: ModelPackDescriptor['input']): Promise<Float32Array> {
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

/** Turns the raw output into the probability of the positive class. */
export function outputProbability(values: ArrayLike<number>, output: ModelPackDescriptor['output']): number {
  const index = Math.min(values.length - 1, Math.max(0, output.positiveIndex));
  if (output.kind === 'softmax') {
    const max = Math.max(...Array.from(values));
    const exps = Array.from(values, (v) => Math.exp(v - max));
    return exps[index]! / exps.reduce((a, b) => a + b, 0);
  }
  const value = Number(values[index]);
  return output.kind === 'logit' ? 1 / (1 + Math.exp(-value)) : Math.min(1, Math.max(0, value));
}

export async function runModelPacks(packs: LoadedModelPack[], raster: Raster): Promise<Array<{ signal: Signal; probability: number; weight: number }>> {
  const results = [];
  for (const pack of packs) {
    const { descriptor } = pack;
    const { Tensor } = await import('onnxruntime-node');
    const tensor = await preprocess(raster, descriptor.input);
    const dims = descriptor.input.layout === 'NCHW' ? [1, 3, descriptor.input.height, descriptor.input.width] : [1, descriptor.input.height, descriptor.input.width, 3];
    const outputs = await pack.session.run({ [pack.inputName]: new Tensor('float32', tensor, dims) });
    const output = outputs[pack.outputName];
    const probability = outputProbability(output!.data as Float32Array, descriptor.output);
    results.push({
      probability,
      weight: descriptor.weight,
      signal: {
        id: `model-pack:${descriptor.name}`,
        label: `Operator model pack ${descriptor.name} ${descriptor.version}`,
        score: round4(probability),
        weight: descriptor.weight,
        evidence: { model: descriptor.model, input: `${descriptor.input.width}x${descriptor.input.height} ${descriptor.input.layout}`, outputKind: descriptor.output.kind },
      },
    });
  }
  return results;
}
