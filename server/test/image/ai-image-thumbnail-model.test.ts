/**
 * The learned thumbnail model (server/models/ai-image-thumbnail.onnx): it loads through the
 * model-pack loader with its sha256, reproduces the logits training/ai-image-thumbnail/export.py
 * recorded on generated images, is refused when its weights are altered, runs only on the
 * thumbnails it was built for (decides only at 32×32) and enters ai-image-detection as
 * `model:ai-image-thumbnail`. Every input here is generated: nothing is read from shared data.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { BUILT_IN_MODELS_DIR, loadModel, runModel } from '../../src/detectors/model-pack.js';
import { THUMBNAIL_MODEL, runThumbnailModel, thumbnailGate, thumbnailTensor } from '../../src/detectors/image/ai-image-thumbnail-model.js';
import detector, { analyzeAiImage } from '../../src/detectors/image/ai-image.js';
import { detectorInput, loadBuiltInModel, naturalRgb, random, tempDir } from './helpers.js';

const signal = new AbortController().signal;

/** Logits recorded by training/ai-image-thumbnail/export.py on the two generated images below. */
const RECORDED_LOGITS = [4.223105, 7.365259];

function generatedImages(): Float32Array {
  const plane = 32 * 32;
  const data = new Float32Array(2 * 3 * plane);
  for (let y = 0; y < 32; y++) {
    for (let x = 0; x < 32; x++) {
      data[y * 32 + x] = x / 31;
      data[plane + y * 32 + x] = y / 31;
      data[2 * plane + y * 32 + x] = ((7 * x + 13 * y) % 32) / 31;
      for (let c = 0; c < 3; c++) data[3 * plane + c * plane + y * 32 + x] = ((x * x + 3 * y * y + 5 * x * y + 17 * c) % 29) / 28;
    }
  }
  return data;
}

test('the thumbnail model loads from server/models, matches its sha256 and reproduces its recorded logits', async () => {
  const model = await loadBuiltInModel(THUMBNAIL_MODEL);
  const logits = await runModel(model, generatedImages(), [2, 3, 32, 32]);
  assert.equal(logits.length, 2);
  for (const [i, expected] of RECORDED_LOGITS.entries()) assert.ok(Math.abs(logits[i]! - expected) < 1e-3, `image ${i}: ${logits[i]} vs recorded ${expected}`);
  const recorded = (model.descriptor.training as { recordedOutputs: { logits: number[] } }).recordedOutputs.logits;
  assert.deepEqual(recorded, RECORDED_LOGITS, 'the descriptor records the same logits');
  assert.ok(model.descriptor.calibration && model.descriptor.thresholds, 'calibration and thresholds come with the model');
  assert.ok(model.descriptor.thresholds.authentic > 0 && model.descriptor.thresholds.manipulated < 1, 'out-of-fold scores supported both thresholds');
});

test('altered weights are refused by their sha256', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-altered-thumbnail-'));
  await copyFile(join(BUILT_IN_MODELS_DIR, `${THUMBNAIL_MODEL}.json`), join(dir, `${THUMBNAIL_MODEL}.json`));
  const bytes = await readFile(join(BUILT_IN_MODELS_DIR, `${THUMBNAIL_MODEL}.onnx`));
  bytes[bytes.length - 100]! ^= 0xff;
  await writeFile(join(dir, `${THUMBNAIL_MODEL}.onnx`), bytes);
  const { model, problems } = await loadModel(THUMBNAIL_MODEL, null, dir);
  assert.equal(model, null);
  assert.match(JSON.stringify(problems), /sha256/);
});

test('the gate: 32x32 as it is, 24-48 px thumbnails resized, everything else not scored', async () => {
  const gate = { minSide: 24, maxSide: 48 };
  assert.equal(thumbnailGate(32, 32, gate), 'native');
  assert.equal(thumbnailGate(40, 36, gate), 'resized');
  assert.equal(thumbnailGate(48, 24, gate), 'resized');
  assert.equal(thumbnailGate(64, 64, gate), null);
  assert.equal(thumbnailGate(32, 20, gate), null);
  assert.equal(thumbnailGate(1536, 1024, gate), null);
  // A 32x32 raster is taken as it is; grey is replicated and alpha dropped.
  const rand = random(9);
  const grey = Buffer.from(Array.from({ length: 32 * 32 }, () => Math.floor(rand() * 256)));
  const tensor = await thumbnailTensor({ data: grey, width: 32, height: 32, channels: 1 });
  for (const i of [0, 333, 1023]) for (let c = 0; c < 3; c++) assert.equal(tensor[c * 1024 + i], Math.fround(grey[i]! / 255));
  const rgba = Buffer.alloc(32 * 32 * 4, 200);
  const fromAlpha = await thumbnailTensor({ data: rgba, width: 32, height: 32, channels: 4 });
  assert.equal(fromAlpha.length, 3 * 1024);
  // An unchecked raster (wrong byte count) is refused, never fed.
  await assert.rejects(thumbnailTensor({ data: Buffer.alloc(10), width: 32, height: 32, channels: 3 }), /unsupported raster/);
  const refused = await runThumbnailModel({ data: Buffer.alloc(10), width: 32, height: 32, channels: 3 });
  assert.equal(refused.probability, null);
  assert.match(JSON.stringify(refused.signal.evidence), /unsupported raster/);
});

/** The parts of the detector's result these tests read. */
interface Analysis {
  score: number;
  verdict: string;
  analysisDetails: {
    basis: string;
    signals: Array<{ id: string; score: number | null; weight: number; evidence: { logit: number; input: string; reason?: string; note?: string } }>;
    thumbnailModel: { decides: boolean; thresholds: { authentic: number; manipulated: number } } | null;
    statisticalModel: { trusted: boolean };
  };
}

async function analyze(path: string): Promise<Analysis> {
  await detector.load();
  const { result } = await detector.analyze(detectorInput(path, 'ai-image-detection', await tempDir()), signal);
  return result as unknown as Analysis;
}

const thumbnailSignal = (result: Analysis) => result.analysisDetails.signals.find((s) => s.id === `model:${THUMBNAIL_MODEL}`)!;

test('a generated 32x32 JPEG carries the model signal, weighed as validated with the pixel statistics', async () => {
  const dir = await tempDir();
  const path = join(dir, 'thumb.jpg');
  await sharp(naturalRgb(32, 32, 4), { raw: { width: 32, height: 32, channels: 3 } }).jpeg({ quality: 75 }).toFile(path);
  const result = await analyze(path);
  const s = thumbnailSignal(result);
  assert.ok(s, 'the model signal is reported');
  assert.equal(typeof s.score, 'number');
  assert.ok(s.score! >= 0 && s.score! <= 1);
  assert.equal(s.evidence.input, '32x32 as decoded');
  const thumb = result.analysisDetails.thumbnailModel;
  assert.ok(thumb, 'the result names the thumbnail model');
  // Weighed exactly when the statistics it was validated with are trusted on this image.
  assert.equal(thumb.decides, result.analysisDetails.statisticalModel.trusted);
  assert.equal(s.weight > 0, thumb.decides);
  if (thumb.decides) {
    assert.match(result.analysisDetails.basis, /learned thumbnail model and pixel statistics/);
    const { authentic, manipulated } = thumb.thresholds;
    const expected = result.score >= manipulated ? 'manipulated' : result.score <= authentic ? 'authentic' : 'inconclusive';
    assert.equal(result.verdict, expected);
  } else {
    assert.match(result.analysisDetails.basis, /thumbnail model reported, not weighed/);
  }
});

test('on 32x32 images the fused score is weight x calibrated model log-odds + the statistics\' log-odds, as validated', async () => {
  const dir = await tempDir();
  const { model } = await loadModel(THUMBNAIL_MODEL);
  const { a, b } = model!.descriptor.calibration!;
  let weighed = 0;
  for (let seed = 1; seed <= 6; seed++) {
    const path = join(dir, `t${seed}.jpg`);
    await sharp(naturalRgb(32, 32, seed), { raw: { width: 32, height: 32, channels: 3 } }).jpeg({ quality: 75 }).toFile(path);
    const result = await analyze(path);
    const s = thumbnailSignal(result);
    assert.equal(typeof s.score, 'number');
    if (!result.analysisDetails.thumbnailModel?.decides) continue;
    weighed++;
    assert.equal(s.weight, model!.descriptor.weight);
    // Without the learned models the same image gets the statistics' own score.
    const alone = (await analyzeAiImage(path, null, signal, { learnedModel: false })) as unknown as Analysis;
    const statistics = Math.log(alone.score / (1 - alone.score));
    const expected = 1 / (1 + Math.exp(-(model!.descriptor.weight * (a * s.evidence.logit + b) + statistics)));
    assert.ok(Math.abs(result.score - expected) < 2e-3, `seed ${seed}: ${result.score} vs ${expected}`);
    assert.equal(alone.analysisDetails.thumbnailModel, null);
  }
  assert.ok(weighed > 0, 'at least one generated thumbnail lies inside the statistics\' fitted range');
});

test('a 40x40 thumbnail is scored after resizing but not weighed; larger images have no thumbnail signal', async () => {
  const dir = await tempDir();
  const small = join(dir, 'forty.png');
  await sharp(naturalRgb(40, 40, 2), { raw: { width: 40, height: 40, channels: 3 } }).png().toFile(small);
  const s = thumbnailSignal(await analyze(small));
  assert.equal(typeof s.score, 'number');
  assert.equal(s.weight, 0);
  assert.match(s.evidence.input, /40x40 resized to 32x32/);
  assert.match(String(s.evidence.reason), /validated on 32x32 images only/);

  const large = join(dir, 'large.jpg');
  await sharp(naturalRgb(160, 120, 3), { raw: { width: 160, height: 120, channels: 3 } }).jpeg({ quality: 90 }).toFile(large);
  const result = await analyze(large);
  const absent = thumbnailSignal(result);
  assert.equal(absent.score, null);
  assert.equal(absent.weight, 0);
  assert.match(String(absent.evidence.note), /runs only on thumbnails/);
  assert.equal(result.analysisDetails.thumbnailModel, null);
});
