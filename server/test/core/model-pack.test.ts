import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { imageTensor, loadModel, loadModels, loadOperatorPacks, outputProbability, runImageModel, validateDescriptor } from '../../src/detectors/model-pack.js';
import detector from '../../src/detectors/image/ai-image.js';
import type { VerdictResult } from '../../src/detectors/result.js';
import { channelMeanLinearModel } from '../onnx-builder.js';
import { detectorInput, tempDir, texturedRgb, writePng } from '../image/helpers.js';

/** Logit = 6 * (normalised mean red - normalised mean blue): red images read as "AI". */
async function packDir(extra: Record<string, unknown> = {}) {
  const dir = await tempDir();
  await writeFile(join(dir, 'redness.onnx'), channelMeanLinearModel(16, [6, 0, -6], 0));
  await writeFile(
    join(dir, 'redness.json'),
    JSON.stringify({
      name: 'redness',
      version: '1',
      taskTypes: ['ai-image-detection'],
      model: 'redness.onnx',
      input: { width: 16, height: 16, layout: 'NCHW', scale: 1 / 255, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] },
      output: { kind: 'logit', positiveIndex: 0 },
      weight: 1,
      ...extra,
    }),
  );
  return dir;
}

const solid = (r: number, g: number, b: number, size = 40) => {
  const data = Buffer.alloc(size * size * 3);
  for (let i = 0; i < size * size; i++) data.set([r, g, b], i * 3);
  return { data, width: size, height: size, channels: 3 };
};

test('pre-processing resizes, scales, normalises and lays out channels as the descriptor says', async () => {
  const input = { kind: 'image' as const, width: 4, height: 4, layout: 'NCHW' as const, scale: 1 / 255, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5], resize: 'fill' as const };
  const nchw = await imageTensor(solid(255, 0, 51), input);
  assert.equal(nchw.length, 48);
  assert.ok(Math.abs(nchw[0]! - 1) < 1e-6); // red plane first: (1 - 0.5) / 0.5
  assert.ok(Math.abs(nchw[16]! + 1) < 1e-6); // green plane: (0 - 0.5) / 0.5
  assert.ok(Math.abs(nchw[32]! - (0.2 - 0.5) / 0.5) < 1e-6);
  const nhwc = await imageTensor(solid(255, 0, 51), { ...input, layout: 'NHWC' });
  assert.deepEqual([nhwc[0], nhwc[1]].map((v) => Math.round(v! * 1000) / 1000), [1, -1]);
  assert.ok(Math.abs(outputProbability([0, 2], { output: { kind: 'softmax', positiveIndex: 1 } }) - 1 / (1 + Math.exp(-2))) < 1e-9);
  // Platt calibration acts on the positive logit: sigmoid(a·z + b).
  assert.ok(Math.abs(outputProbability([1.5], { output: { kind: 'logit', positiveIndex: 0 }, calibration: { method: 'platt', a: 2, b: -1 } }) - 1 / (1 + Math.exp(-2))) < 1e-9);
});

test('descriptors: older packs without "kind" are read as image or waveform; bad fields are named', () => {
  assert.equal(validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { width: 8, height: 8 } }).input.kind, 'image');
  assert.equal(validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { sampleRate: 16000, seconds: 2 } }).input.kind, 'waveform');
  assert.deepEqual(validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { kind: 'tensor', shape: [1, 3, 8, 8], patch: 8 } }).input, { kind: 'tensor', shape: [1, 3, 8, 8], patch: 8 });
  assert.throws(() => validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', sha256: 'nothex', input: { width: 8, height: 8 } }), /sha256/);
  assert.throws(() => validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { width: 8, height: 8 }, thresholds: { authentic: 0.9, manipulated: 0.1 } }), /thresholds/);
  assert.throws(() => validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { sampleRate: 16000, seconds: 4 }, codecThresholds: [{ codec: 'opus', maxKbpsPerChannel: 34, authentic: 0.9, manipulated: 0.1 }] }), /codecThresholds/);
  assert.throws(() => validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { sampleRate: 16000, seconds: 4 }, codecThresholds: { codec: 'opus', maxKbpsPerChannel: 34, authentic: 0.1, manipulated: 0.9 } }), /codecThresholds/);
  const speech = { name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { sampleRate: 16000, seconds: 4 } };
  assert.deepEqual(validateDescriptor({ ...speech, narrowbandThresholds: { sampleRates: [8000], authentic: 0.4, manipulated: 0.9 } }).narrowbandThresholds, { sampleRates: [8000], authentic: 0.4, manipulated: 0.9 });
  assert.throws(() => validateDescriptor({ ...speech, narrowbandThresholds: { sampleRates: [], authentic: 0.4, manipulated: 0.9 } }), /narrowbandThresholds/);
  assert.throws(() => validateDescriptor({ ...speech, narrowbandThresholds: { sampleRates: [8000.5], authentic: 0.4, manipulated: 0.9 } }), /narrowbandThresholds/);
  assert.throws(() => validateDescriptor({ ...speech, narrowbandThresholds: { sampleRates: [8000], authentic: 0.9, manipulated: 0.4 } }), /narrowbandThresholds/);
  assert.throws(() => validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { kind: 'tensor', shape: [1, 0] } }), /shape/);
  // A face model names the crop it was trained on; a pack without one keeps the service's default crop.
  assert.equal((validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { width: 8, height: 8, faceCropShare: 0.9 } }).input as { faceCropShare?: number }).faceCropShare, 0.9);
  assert.equal('faceCropShare' in validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { width: 8, height: 8 } }).input, false);
  assert.throws(() => validateDescriptor({ name: 'a', taskTypes: ['x'], model: 'a.onnx', input: { width: 8, height: 8, faceCropShare: 'wide' } }), /faceCropShare/);
});

test('built-in models are loaded only when their sha256 matches; an operator pack of the same name replaces one', async () => {
  const builtIn = await tempDir();
  const bytes = channelMeanLinearModel(16, [6, 0, -6], 0);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const descriptor = (name: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ name, version: '1', taskTypes: ['ai-image-detection'], model: `${name}.onnx`, input: { width: 16, height: 16 }, output: { kind: 'logit' }, ...extra });
  await writeFile(join(builtIn, 'good.onnx'), bytes);
  await writeFile(join(builtIn, 'good.json'), descriptor('good', { sha256 }));
  const altered = Buffer.from(bytes);
  altered[altered.length - 1] = altered[altered.length - 1]! ^ 1;
  await writeFile(join(builtIn, 'altered.onnx'), altered);
  await writeFile(join(builtIn, 'altered.json'), descriptor('altered', { sha256 }));
  await writeFile(join(builtIn, 'unhashed.onnx'), bytes);
  await writeFile(join(builtIn, 'unhashed.json'), descriptor('unhashed'));

  const loaded = await loadModels('ai-image-detection', null, builtIn);
  assert.deepEqual(loaded.models.map((m) => [m.descriptor.name, m.origin]), [['good', 'built-in']]);
  assert.match(loaded.problems.find((p) => p.file.endsWith('altered.json'))!.problem, /altered or corrupt/);
  assert.match(loaded.problems.find((p) => p.file.endsWith('unhashed.json'))!.problem, /must declare its sha256/);
  assert.equal((await loadModel('altered', null, builtIn)).model, null);
  assert.match((await loadModel('nothing-here', null, builtIn)).problems[0]!.problem, /no such model/);
  // Built-in models are run by their own detectors, not by the generic operator-pack loop.
  assert.equal((await loadOperatorPacks('ai-image-detection', 'image', null, builtIn)).models.length, 0);

  const operator = await tempDir();
  await mkdir(operator, { recursive: true });
  await writeFile(join(operator, 'good.onnx'), channelMeanLinearModel(16, [-6, 0, 6], 0));
  await writeFile(join(operator, 'good.json'), descriptor('good', { version: 'operator' }));
  const { model } = await loadModel('good', operator, builtIn);
  assert.equal(model!.origin, 'operator');
  assert.equal(model!.replacesBuiltIn, true);
  assert.equal(model!.descriptor.version, 'operator');
  assert.ok((await runImageModel(model!, solid(30, 40, 230))) > 0.99, 'the replacement runs in place of the built-in model');
  assert.equal((await loadOperatorPacks('ai-image-detection', 'image', operator, builtIn)).models.length, 0);
});

test('a model pack built in the test is loaded and run by onnxruntime, in the right direction', async () => {
  const dir = await packDir();
  const { models } = await loadOperatorPacks('ai-image-detection', 'image', dir);
  assert.equal(models.length, 1);
  const red = await runImageModel(models[0]!, solid(230, 40, 30));
  const blue = await runImageModel(models[0]!, solid(30, 40, 230));
  // mean red 0.8, blue -0.76 after normalisation → logit 6 * 1.569 ≈ 9.4
  assert.ok(red > 0.99, `red ${red}`);
  assert.ok(blue < 0.01, `blue ${blue}`);
  // The pack serves only the task types it names (built-in models of other tasks aside).
  assert.equal((await loadModels('image-forgery-detection', dir)).models.filter((m) => m.origin === 'operator').length, 0);
});

test('malformed packs are reported and skipped, never fatal', async () => {
  const dir = await packDir();
  await writeFile(join(dir, 'broken.json'), '{ "name": "broken", "taskTypes": ["ai-image-detection"], "model": "../../etc/passwd.onnx", "input": {"width": 8, "height": 8} }');
  await writeFile(join(dir, 'missing.json'), JSON.stringify({ name: 'missing', taskTypes: ['ai-image-detection'], model: 'nope.onnx', input: { width: 8, height: 8 } }));
  const { models, problems } = await loadModels('ai-image-detection', dir);
  assert.equal(models.filter((m) => m.origin === 'operator').length, 1);
  assert.deepEqual(problems.map((p) => p.file).sort(), ['broken.json', 'missing.json']);
  assert.match(problems.find((p) => p.file === 'broken.json')!.problem, /inside the models directory/);
  assert.match(problems.find((p) => p.file === 'missing.json')!.problem, /nope\.onnx not found/);
});

test('the detector fuses a model pack into the score when provenance is silent', async () => {
  const dir = await packDir({ weight: 2 });
  // Over the 512 px short side up to which the built-in AI-image model decides: the pack and the pixel statistics decide here.
  const size = 560;
  const tint = (r: number, b: number) => {
    const data = texturedRgb(size, size, 5);
    for (let i = 0; i < size * size; i++) { data[i * 3] = Math.min(255, data[i * 3]! + r); data[i * 3 + 2] = Math.min(255, data[i * 3 + 2]! + b); }
    return data;
  };
  const red = await writePng(dir, 'red.png', tint(60, 0), size, size);
  const blue = await writePng(dir, 'blue.png', tint(0, 60), size, size);
  await detector.load();
  const run = async (path: string) => (await detector.analyze(detectorInput(path, 'ai-image-detection', dir, dir), new AbortController().signal)).result as VerdictResult & { analysisDetails: { basis: string } };
  const redResult = await run(red);
  const blueResult = await run(blue);
  assert.ok(redResult.analysisDetails.signals.some((s) => s.id === 'model-pack:redness'));
  assert.match(redResult.analysisDetails.basis, /model packs/);
  assert.ok(redResult.score > blueResult.score + 0.5, `red ${redResult.score} blue ${blueResult.score}`);
  assert.equal(redResult.verdict, 'manipulated');
  assert.equal(blueResult.verdict, 'authentic');
});
