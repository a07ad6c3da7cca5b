/**
 * The learned AI-image model (v2, 256×256 views) shipped in server/models: it loads through the
 * model-pack loader with its sha256, reproduces the outputs training/ai-image/export.py recorded
 * on generated views, and enters ai-image-detection as a signal; inputs it was not built for
 * (short side under 128 px, alpha, 16-bit, grey, CMYK, EXIF-rotated) reach it only through the
 * one decoder, or not at all with a reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import sharp from 'sharp';
import { runModel } from '../../src/detectors/model-pack.js';
import { AI_IMAGE_MODEL, meanLogit, selectViews, viewBoxes } from '../../src/detectors/image/ai-image-model.js';
import detector from '../../src/detectors/image/ai-image.js';
import type { VerdictResult } from '../../src/detectors/result.js';
import type { Signal } from '../../src/detectors/types.js';
import { detectorInput, loadBuiltInModel, random, tempDir, texturedRgb } from './helpers.js';

const signal = new AbortController().signal;

/** ai-image-detection's result, with the details these tests read. */
type Result = VerdictResult & { analysisDetails: { basis: string; learnedModel: { decides: boolean } | null } };
/** The model signal's evidence: `views` when it ran, `reason` when it is reported but not weighed, `note` when it did not run. */
type ModelEvidence = { views?: number; reason?: string; note?: string };

/** View logits recorded by training/ai-image/export.py on the two generated views below. */
const RECORDED_LOGITS = [6.061346, -0.016326];

function generatedViews(): Float32Array {
  const plane = 256 * 256;
  const data = new Float32Array(2 * 3 * plane);
  for (let y = 0; y < 256; y++) {
    for (let x = 0; x < 256; x++) {
      data[y * 256 + x] = x / 255;
      data[plane + y * 256 + x] = y / 255;
      data[2 * plane + y * 256 + x] = ((7 * x + 13 * y) % 256) / 255;
      for (let c = 0; c < 3; c++) data[3 * plane + c * plane + y * 256 + x] = ((x * x + 3 * y * y + 5 * x * y + 17 * c) % 251) / 250;
    }
  }
  return data;
}

test('the image model loads from server/models, matches its sha256 and reproduces its recorded outputs', async () => {
  const model = await loadBuiltInModel(AI_IMAGE_MODEL);
  const logits = await runModel(model, generatedViews(), [2, 3, 256, 256]);
  assert.equal(logits.length, 2);
  for (const [i, expected] of RECORDED_LOGITS.entries()) assert.ok(Math.abs(logits[i]! - expected) < 1e-3, `view ${i}: ${logits[i]} vs recorded ${expected}`);
  assert.ok(model.descriptor.calibration && model.descriptor.thresholds, 'calibration and thresholds come with the model');
});

test('views are evenly spaced squares along the long side, cut from the raster as the training code does', async () => {
  assert.deepEqual(viewBoxes(256, 256), [{ left: 0, top: 0, side: 256 }]);
  assert.deepEqual(viewBoxes(1536, 1024), [{ left: 0, top: 0, side: 1024 }, { left: 512, top: 0, side: 1024 }]);
  assert.deepEqual(viewBoxes(1000, 3000), [0, 1000, 2000].map((top) => ({ left: 0, top, side: 1000 })));
  assert.equal(viewBoxes(9000, 1000).length, 3);
  // A 256-pixel square is taken as it is (no resampling); grey is replicated to three channels.
  const rand = random(3);
  const data = Buffer.alloc(256 * 256);
  for (let i = 0; i < data.length; i++) data[i] = Math.floor(rand() * 256);
  const { tensor, count } = await selectViews({ data, width: 256, height: 256, channels: 1 });
  assert.equal(count, 1);
  for (const i of [0, 777, 65535]) for (let c = 0; c < 3; c++) assert.equal(tensor[c * 65536 + i], Math.fround(data[i]! / 255));
  assert.equal(meanLogit([1, 2, 6]), 3);
});

async function analyze(path: string) {
  await detector.load();
  const { result } = await detector.analyze(detectorInput(path, 'ai-image-detection', await tempDir()), signal);
  return result as Result;
}

const modelSignal = (result: Result) => result.analysisDetails.signals.find((s) => s.id === `model:${AI_IMAGE_MODEL}`) as Signal & { evidence: ModelEvidence };

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
    assert.equal(s.evidence.views, 2);
    const learned = result.analysisDetails.learnedModel;
    assert.ok(learned, 'the result names the learned model');
    // Weighed only where its validation split supported a threshold; otherwise reported.
    assert.equal(s.weight > 0, learned.decides);
    assert.match(result.analysisDetails.basis, /learned image model/);
  }
});

test('on an image larger than the validated domain (short side over 512 px) the score is reported, not weighed', async () => {
  const dir = await tempDir();
  const path = join(dir, 'large.jpg');
  await sharp(texturedRgb(1200, 900, 11), { raw: { width: 1200, height: 900, channels: 3 } }).jpeg({ quality: 92 }).toFile(path);
  const result = await analyze(path);
  const s = modelSignal(result);
  assert.equal(typeof s.score, 'number');
  assert.equal(s.evidence.views, 2);
  assert.equal(s.weight, 0);
  assert.match(s.evidence.reason!, /over the 512 px its thresholds were validated for/);
  assert.equal(result.analysisDetails.learnedModel!.decides, false);
});

test('an image whose short side is under 128 px has no model signal, with the reason', async () => {
  const dir = await tempDir();
  const path = join(dir, 'tiny.png');
  await sharp(texturedRgb(400, 100), { raw: { width: 400, height: 100, channels: 3 } }).png().toFile(path);
  const result = await analyze(path);
  const s = modelSignal(result);
  assert.equal(s.score, null);
  assert.equal(s.weight, 0);
  assert.match(s.evidence.note!, /side under 128 px/);
  assert.equal(result.analysisDetails.learnedModel, null);
});

test('alpha, 16-bit PNG, grey, CMYK JPEG and EXIF-rotated images reach the model as checked 8-bit views', async () => {
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
    assert.ok(s.score! >= 0 && s.score! <= 1, name);
    assert.equal(s.evidence.views, 2, name);
  }
});
