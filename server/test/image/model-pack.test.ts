import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadModelPacks, outputProbability, preprocess, runModelPacks, type ModelPackProblem } from '../../src/detectors/image/model-pack.js';
import detector from '../../src/detectors/image/ai-image.js';
import { channelMeanLinearModel } from './onnx-builder.js';
import { detectorInput, tempDir, texturedRgb, writePng } from './helpers.js';

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
  const input = { width: 4, height: 4, layout: 'NCHW' as const, scale: 1 / 255, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5], resize: 'fill' as const };
  const nchw = await preprocess(solid(255, 0, 51), input);
  assert.equal(nchw.length, 48);
  assert.ok(Math.abs(nchw[0]! - 1) < 1e-6); // red plane first: (1 - 0.5) / 0.5
  assert.ok(Math.abs(nchw[16]! + 1) < 1e-6); // green plane: (0 - 0.5) / 0.5
  assert.ok(Math.abs(nchw[32]! - (0.2 - 0.5) / 0.5) < 1e-6);
  const nhwc = await preprocess(solid(255, 0, 51), { ...input, layout: 'NHWC' });
  assert.deepEqual([nhwc[0], nhwc[1]].map((v) => Math.round(v! * 1000) / 1000), [1, -1]);
  assert.ok(Math.abs(outputProbability([0, 2], { kind: 'softmax', positiveIndex: 1 }) - 1 / (1 + Math.exp(-2))) < 1e-9);
});

test('a model pack built in the test is loaded and run by onnxruntime, in the right direction', async () => {
  const dir = await packDir();
  const packs = await loadModelPacks(dir, 'ai-image-detection');
  assert.equal(packs.length, 1);
  const [red] = await runModelPacks(packs, solid(230, 40, 30));
  const [blue] = await runModelPacks(packs, solid(30, 40, 230));
  // mean red 0.8, blue -0.76 after normalisation → logit 6 * 1.569 ≈ 9.4
  assert.ok(red!.probability > 0.99, `red ${red!.probability}`);
  assert.ok(blue!.probability < 0.01, `blue ${blue!.probability}`);
  assert.equal(red!.signal.id, 'model-pack:redness');
  assert.equal((await loadModelPacks(dir, 'image-forgery-detection')).length, 0);
});

test('malformed packs are reported and skipped, never fatal', async () => {
  const dir = await packDir();
  await writeFile(join(dir, 'broken.json'), '{ "name": "broken", "taskTypes": ["ai-image-detection"], "model": "../../etc/passwd.onnx", "input": {"width": 8, "height": 8} }');
  await writeFile(join(dir, 'missing.json'), JSON.stringify({ name: 'missing', taskTypes: ['ai-image-detection'], model: 'nope.onnx', input: { width: 8, height: 8 } }));
  const problems: ModelPackProblem[] = [];
  const packs = await loadModelPacks(dir, 'ai-image-detection', problems);
  assert.equal(packs.length, 1);
  assert.deepEqual(problems.map((p) => p.file).sort(), ['broken.json', 'missing.json']);
  assert.match(problems.find((p) => p.file === 'broken.json')!.problem, /inside MODELS_DIR/);
});

test('the detector fuses a model pack into the score when provenance is silent', async () => {
  const dir = await packDir({ weight: 2 });
  const size = 160;
  const tint = (r: number, b: number) => {
    const data = texturedRgb(size, size, 5);
    for (let i = 0; i < size * size; i++) { data[i * 3] = Math.min(255, data[i * 3]! + r); data[i * 3 + 2] = Math.min(255, data[i * 3 + 2]! + b); }
    return data;
  };
  const red = await writePng(dir, 'red.png', tint(60, 0), size, size);
  const blue = await writePng(dir, 'blue.png', tint(0, 60), size, size);
  await detector.load();
  const run = async (path: string) => (await detector.analyze(detectorInput(path, 'ai-image-detection', dir, dir), new AbortController().signal)).result as Record<string, any>;
  const redResult = await run(red);
  const blueResult = await run(blue);
  assert.ok(redResult.analysisDetails.signals.some((s: any) => s.id === 'model-pack:redness'));
  assert.match(redResult.analysisDetails.basis, /model packs/);
  assert.ok(redResult.score > blueResult.score + 0.5, `red ${redResult.score} blue ${blueResult.score}`);
  assert.equal(redResult.verdict, 'manipulated');
  assert.equal(blueResult.verdict, 'authentic');
});
