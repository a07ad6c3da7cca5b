/**
 * The learned AI-image patch model shipped in server/models: it loads through the model-pack
 * loader with its sha256, reproduces the outputs training/ai-image/export.py recorded on
 * generated patches, and enters ai-image-detection as a signal; inputs it was not built for
 * (smaller than a patch, alpha, 16-bit, grey, CMYK, EXIF-rotated) reach it only through the one
 * decoder, or not at all with a reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { BUILT_IN_MODELS_DIR, loadModel, runModel } from '../../src/detectors/model-pack.js';
import { AI_IMAGE_MODEL, selectPatches, trimmedMean } from '../../src/detectors/image/ai-image-model.js';
import detector from '../../src/detectors/image/ai-image.js';
import { detectorInput, random, tempDir, texturedRgb } from './helpers.js';

const signal = new AbortController().signal;

/** Patch logits recorded by training/ai-image/export.py on the two generated patches below. */
const RECORDED_LOGITS = [0.274459, 0.149387];

function generatedPatches(): Float32Array {
  const plane = 64 * 64;
  const data = new Float32Array(2 * 3 * plane);
  for (let y = 0; y < 64; y++) {
    for (let x = 0; x < 64; x++) {
      data[y * 64 + x] = x / 63;
      data[plane + y * 64 + x] = y / 63;
      data[2 * plane + y * 64 + x] = ((7 * x + 13 * y) % 64) / 63;
      for (let c = 0; c < 3; c++) data[3 * plane + c * plane + y * 64 + x] = ((x * x + 3 * y * y + 5 * x * y + 17 * c) % 251) / 250;
    }
  }
  return data;
}

test('the patch model loads from server/models, matches its sha256 and reproduces its recorded outputs', async () => {
  const { model, problems } = await loadModel(AI_IMAGE_MODEL);
  assert.ok(model, `the model did not load: ${JSON.stringify(problems)}`);
  assert.equal(model.origin, 'built-in');
  assert.equal(model.descriptor.input.kind, 'tensor');
  const bytes = await readFile(join(BUILT_IN_MODELS_DIR, model.descriptor.model));
  assert.equal(createHash('sha256').update(bytes).digest('hex'), model.descriptor.sha256);
  assert.ok(bytes.length < 30 * 1024 * 1024);
  const logits = await runModel(model, generatedPatches(), [2, 3, 64, 64]);
  assert.equal(logits.length, 2);
  for (const [i, expected] of RECORDED_LOGITS.entries()) assert.ok(Math.abs(logits[i]! - expected) < 1e-3, `patch ${i}: ${logits[i]} vs recorded ${expected}`);
  assert.ok(model.descriptor.calibration && model.descriptor.thresholds, 'calibration and thresholds come with the model');
});

test('patches are the most textured grid tiles, cut at native resolution; the trimmed mean drops the extremes', () => {
  const width = 200, height = 140;
  const data = Buffer.alloc(width * height * 3, 128);
  const rand = random(3);
  // Only the tile at grid (1, 2) is textured.
  for (let y = 64; y < 128; y++) for (let x = 128; x < 192; x++) for (let c = 0; c < 3; c++) data[(y * width + x) * 3 + c] = Math.floor(rand() * 256);
  const { tensor, count, tiles } = selectPatches({ data, width, height, channels: 3 }, 1);
  assert.equal(tiles, 3 * 2);
  assert.equal(count, 1);
  assert.equal(tensor[0], Math.fround(data[(64 * width + 128) * 3]! / 255));
  assert.equal(trimmedMean([-100, 1, 2, 3, 4, 5, 6, 100]), 3.5);
});

async function analyze(path: string) {
  await detector.load();
  const { result } = await detector.analyze(detectorInput(path, 'ai-image-detection', await tempDir()), signal);
  return result as Record<string, any>;
}

const modelSignal = (result: Record<string, any>) => result.analysisDetails.signals.find((s: any) => s.id === `model:${AI_IMAGE_MODEL}`);

/** A smooth render: gradients and soft shapes, no sensor noise (what a generator's upsampler leaves). */
function smoothRender(width: number, height: number): Buffer {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const d = Math.hypot(x - width * 0.4, y - height * 0.5) / width;
      const p = (y * width + x) * 3;
      data[p] = Math.round(200 - 150 * d + 20 * Math.sin(x / 40));
      data[p + 1] = Math.round(120 + 60 * Math.cos(y / 50) * (1 - d));
      data[p + 2] = Math.round(90 + 100 * d);
    }
  }
  return data;
}

test('a smooth synthetic render and a camera-like noisy photo both carry the model signal, decided by its calibrated thresholds', async () => {
  const dir = await tempDir();
  const render = join(dir, 'render.png');
  await sharp(smoothRender(512, 384), { raw: { width: 512, height: 384, channels: 3 } }).png().toFile(render);
  const photo = join(dir, 'photo.jpg');
  await sharp(texturedRgb(640, 480, 7), { raw: { width: 640, height: 480, channels: 3 } }).jpeg({ quality: 92 }).toFile(photo);
  for (const path of [render, photo]) {
    const result = await analyze(path);
    const s = modelSignal(result);
    assert.ok(s, 'the model signal is reported');
    assert.equal(typeof s.score, 'number');
    assert.equal(s.evidence.patches, 32);
    const learned = result.analysisDetails.learnedModel;
    assert.ok(learned, 'the result names the learned model');
    // Weighed only where its validation split supported a threshold; otherwise reported.
    assert.equal(s.weight > 0, learned.decides);
    assert.match(result.analysisDetails.basis, /learned patch model/);
  }
});

test('an image smaller than one patch has no model signal, with the reason', async () => {
  const dir = await tempDir();
  const path = join(dir, 'tiny.png');
  await sharp(texturedRgb(48, 48), { raw: { width: 48, height: 48, channels: 3 } }).png().toFile(path);
  const result = await analyze(path);
  const s = modelSignal(result);
  assert.equal(s.score, null);
  assert.equal(s.weight, 0);
  assert.match(s.evidence.note, /smaller than one 64x64 patch/);
  assert.equal(result.analysisDetails.learnedModel, null);
});

test('alpha, 16-bit PNG, grey, CMYK JPEG and EXIF-rotated images reach the model as checked 8-bit patches', async () => {
  const dir = await tempDir();
  const rgb = texturedRgb(160, 128, 5);
  const raw = { raw: { width: 160, height: 128, channels: 3 as const } };
  const files: Record<string, Promise<unknown>> = {
    'alpha.png': sharp(rgb, raw).ensureAlpha(0.5).png().toFile(join(dir, 'alpha.png')),
    'deep.png': sharp(rgb, raw).toColourspace('rgb16').png().toFile(join(dir, 'deep.png')),
    'grey.png': sharp(rgb, raw).greyscale().png().toFile(join(dir, 'grey.png')),
    'cmyk.jpg': sharp(rgb, raw).toColourspace('cmyk').jpeg().toFile(join(dir, 'cmyk.jpg')),
    'rotated.jpg': sharp(rgb, raw).jpeg().withMetadata({ orientation: 6 }).toFile(join(dir, 'rotated.jpg')),
  };
  await Promise.all(Object.values(files));
  for (const name of Object.keys(files)) {
    const result = await analyze(join(dir, name));
    const s = modelSignal(result);
    assert.equal(typeof s.score, 'number', `${name}: ${JSON.stringify(s.evidence)}`);
    assert.ok(s.score >= 0 && s.score <= 1, name);
    assert.equal(s.evidence.patches, 2 * 2, name);
  }
});
