import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { loadGraphModel, type GraphModel } from '@tensorflow/tfjs-converter';
import { fuseRelu6Chains } from '../../src/detectors/face/graph-fusion.js';
import { humanModelsDir, loadHuman } from '../../src/detectors/face/human-runtime.js';

type Node = { name: string; op: string; input?: string[]; attr?: Record<string, unknown> };

const b64 = (text: string) => Buffer.from(text).toString('base64');
const FLOAT = { type: 'DT_FLOAT' };
const convAttr = {
  T: FLOAT,
  strides: { list: { i: ['1', '1', '1', '1'] } },
  dilations: { list: { i: ['1', '1', '1', '1'] } },
  padding: { s: b64('SAME') },
  data_format: { s: b64('NHWC') },
};
const constNode = (name: string): Node => ({ name, op: 'Const', attr: { dtype: FLOAT, value: { tensor: { dtype: 'DT_FLOAT' } } } });
const binary = (name: string, op: string, a: string, b: string): Node => ({ name, op, input: [a, b], attr: { T: FLOAT } });

/** Keras-style ReLU6 chain (Relu → Minimum(clip) → Maximum(0)) named after `prefix`. */
function clippedRelu(prefix: string, input: string): Node[] {
  return [
    { name: `${prefix}/relu`, op: 'Relu', input: [input], attr: { T: FLOAT } },
    binary(`${prefix}/min`, 'Minimum', `${prefix}/relu`, `${prefix}/clip`),
    binary(`${prefix}/max`, 'Maximum', `${prefix}/min`, `${prefix}/zero`),
    constNode(`${prefix}/clip`),
    constNode(`${prefix}/zero`),
  ];
}

/**
 * conv → bias → ReLU6, depthwise → scale → bias → ReLU6, a bare ReLU6, then a clip at
 * `lastClip` (5 is not ReLU6 and must survive untouched).
 */
async function tinyGraph(lastClip: number): Promise<tf.io.ModelArtifacts> {
  const nodes: Node[] = [
    { name: 'input', op: 'Placeholder', attr: { dtype: FLOAT, shape: { shape: { dim: [{ size: '1' }, { size: '8' }, { size: '8' }, { size: '3' }] } } } },
    { name: 'conv', op: 'Conv2D', input: ['input', 'conv/kernel'], attr: convAttr },
    constNode('conv/kernel'),
    binary('conv/add', 'Add', 'conv/bias', 'conv'), // constant first: operand order must not matter
    constNode('conv/bias'),
    ...clippedRelu('a', 'conv/add'),
    { name: 'dw', op: 'DepthwiseConv2dNative', input: ['a/max', 'dw/kernel'], attr: convAttr },
    constNode('dw/kernel'),
    binary('dw/mul', 'Mul', 'dw', 'dw/scale'),
    constNode('dw/scale'),
    binary('dw/add', 'AddV2', 'dw/mul', 'dw/bias'),
    constNode('dw/bias'),
    ...clippedRelu('b', 'dw/add'),
    { name: 'scaled', op: 'Mul', input: ['b/max', 'scaled/factor'], attr: { T: FLOAT } },
    constNode('scaled/factor'),
    ...clippedRelu('c', 'scaled'),
    ...clippedRelu('d', 'c/max'),
  ];
  const random = (shape: number[], seed: number) => tf.randomNormal(shape, 0, 1, 'float32', seed);
  const values: tf.NamedTensorMap = {
    'conv/kernel': random([3, 3, 3, 4], 1),
    'conv/bias': random([4], 2),
    'dw/kernel': random([3, 3, 4, 1], 3),
    'dw/scale': random([4], 4),
    'dw/bias': random([4], 5),
    'scaled/factor': tf.scalar(4),
    'a/clip': tf.scalar(6),
    'b/clip': tf.scalar(6),
    'c/clip': tf.scalar(6),
    'd/clip': tf.scalar(lastClip),
    'a/zero': tf.scalar(0),
    'b/zero': tf.scalar(0),
    'c/zero': tf.scalar(0),
    'd/zero': tf.scalar(0),
  };
  const { data, specs } = await tf.io.encodeWeights(values);
  tf.dispose(Object.values(values));
  return { format: 'graph-model', modelTopology: { node: nodes, versions: { producer: 1 } }, weightSpecs: specs, weightData: data };
}

const opsOf = (artifacts: tf.io.ModelArtifacts) => (artifacts.modelTopology as { node: Node[] }).node.map((node) => node.op);

async function maxDifference(a: GraphModel, b: GraphModel, input: tf.Tensor, output?: string): Promise<number> {
  const left = [a.execute(input, output)].flat();
  const right = [b.execute(input, output)].flat();
  let worst = 0;
  for (const [index, tensor] of left.entries()) {
    const difference = tf.max(tf.abs(tf.sub(tensor, right[index]!)));
    worst = Math.max(worst, (await difference.data())[0]!);
    difference.dispose();
  }
  tf.dispose([...left, ...right]);
  return worst;
}

before(async () => {
  await loadHuman(); // the wasm backend the face models run on
});

test('ReLU6 chains fuse into their convolutions and compute the same output; a clip at 5 is left alone', async () => {
  const original = await tinyGraph(5);
  const { artifacts, fused } = await fuseRelu6Chains(original);
  assert.equal(fused, 3);
  const ops = opsOf(artifacts);
  assert.deepEqual(
    ops.filter((op) => op !== 'Const'),
    ['Placeholder', '_FusedConv2D', 'FusedDepthwiseConv2dNative', 'Mul', 'Relu6', 'Relu', 'Minimum', 'Maximum'],
  );
  const input = tf.randomUniform([1, 8, 8, 3], -3, 3, 'float32', 7);
  const [before, after] = [await loadGraphModel(tf.io.fromMemory(original)), await loadGraphModel(tf.io.fromMemory(artifacts))];
  for (const output of ['a/max', 'b/max', 'c/max', 'd/max']) {
    assert.ok((await maxDifference(before, after, input, output)) < 1e-5, output);
  }
  // The test graph exercises both ends of the clip, so an off-by-one clip would show.
  const clipped = (await (before.execute(input, 'c/max') as tf.Tensor).data()) as Float32Array;
  assert.ok(clipped.some((value) => value === 0) && clipped.some((value) => value === 6));
  input.dispose();
});

test('a graph without the pattern comes back as it was', async () => {
  const plain = await tinyGraph(5);
  const nodes = (plain.modelTopology as { node: Node[] }).node;
  const withoutMaximum = { ...plain, modelTopology: { node: nodes.filter((node) => node.op !== 'Maximum') } };
  const { artifacts, fused } = await fuseRelu6Chains(withoutMaximum);
  assert.equal(fused, 0);
  assert.equal(artifacts, withoutMaximum);
});

test("Human's faceres model: every ReLU6 fused, descriptor, age and gender outputs unchanged", async () => {
  const dir = humanModelsDir();
  const json = JSON.parse(await readFile(join(dir, 'faceres.json'), 'utf8')) as tf.io.ModelJSON;
  const bin = await readFile(join(dir, 'faceres.bin'));
  const original = await tf.io.getModelArtifactsForJSON(json, async (manifest) => [
    manifest.flatMap((group) => group.weights),
    bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength),
  ]);
  const { artifacts, fused } = await fuseRelu6Chains(original);
  assert.equal(fused, 27);
  assert.ok(!opsOf(artifacts).some((op) => op === 'Minimum' || op === 'Maximum' || op === 'Relu'));
  const face = tf.randomUniform([1, 224, 224, 3], 0, 255, 'float32', 11);
  const difference = await maxDifference(await loadGraphModel(tf.io.fromMemory(original)), await loadGraphModel(tf.io.fromMemory(artifacts)), face);
  assert.ok(difference < 1e-4, `largest output difference ${difference}`);
  face.dispose();
});
