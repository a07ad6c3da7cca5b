/**
 * The self-blended-images face-forgery model shipped in server/models: it loads through the
 * model-pack loader with its sha256, reproduces the outputs recorded at export on generated
 * inputs and on a real face crop, scores a face blended onto a jittered copy of itself above
 * the untouched face, and an absent or altered model leaves the assessment reporting why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { BUILT_IN_MODELS_DIR, type ImageInput, runModel } from '../../src/detectors/model-pack.js';
import {
  assessFaceForgery,
  cropShareOf,
  faceCrop,
  loadFaceForgeryModel,
  scoreFaceCrop,
  scoreFaceCrops,
  trimmedMean,
} from '../../src/detectors/face/face-forgery.js';
import { analyseFaces } from '../../src/detectors/face/face-analysis.js';
import { decodeImage } from '../../src/detectors/face/image-input.js';
import { ONE_FACE } from './helpers.js';
import { assertShippedWeights } from '../model-files.js';

/** Logits on the checkerboard below, recorded with onnxruntime when the weights were shipped. */
const RECORDED_CHECKER_LOGIT = 14.3477;
/** Calibrated probabilities of the ONE_FACE crop and of its self-blend, recorded with onnxruntime when the weights were shipped. */
const RECORDED_FACE = { clean: 0.6933, blended: 1.0 };

/** R = x/127, G = y/127, B = ((7x + 13y) mod 128)/127 at the model's input side, as export.py recorded. */
function ramp(side: number): Float32Array {
  const plane = side * side;
  const out = new Float32Array(3 * plane);
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      out[y * side + x] = x / 127;
      out[plane + y * side + x] = y / 127;
      out[2 * plane + y * side + x] = ((7 * x + 13 * y) % 128) / 127;
    }
  }
  return out;
}

/** 8-pixel checkerboard of 0.2 / 0.8 with a brighter disc about the centre, all channels equal. */
function checker(side: number): Float32Array {
  const plane = side * side;
  const out = new Float32Array(3 * plane);
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const v = (Math.floor(x / 8) + Math.floor(y / 8)) % 2 ? 0.8 : 0.2;
      const disc = Math.hypot(x - side / 2, y - side / 2 - 6) < 36 ? 0.15 : 0;
      for (let c = 0; c < 3; c++) out[c * plane + y * side + x] = Math.min(1, v + disc);
    }
  }
  return out;
}

test('the face-forgery model loads from server/models, matches its sha256 and reproduces its recorded outputs', async () => {
  const { model, problems } = await loadFaceForgeryModel(null);
  assert.ok(model, `the model did not load: ${JSON.stringify(problems)}`);
  assert.equal(model.origin, 'built-in');
  assert.deepEqual(model.descriptor.taskTypes, ['faceswap-detection', 'ekyc-deepfake']);
  await assertShippedWeights(model);
  // Logit on the ramp below, recorded by the export script (PyTorch) in the descriptor beside the weights it belongs to.
  const recordedRampLogit = model.descriptor.training?.rampLogit;
  assert.equal(typeof recordedRampLogit, 'number', 'the descriptor records the ramp logit');
  const side = (model.descriptor.input as ImageInput).width;
  const [logit] = await runModel(model, ramp(side), [1, 3, side, side]);
  assert.ok(Math.abs(logit! - (recordedRampLogit as number)) < 1e-3, `ramp logit ${logit} vs recorded ${recordedRampLogit}`);
  // Batched as the video detectors run it: the same logits per item.
  const both = new Float32Array(2 * 3 * side * side);
  both.set(checker(side), 0);
  both.set(ramp(side), 3 * side * side);
  const [checkerLogit, rampAgain] = await runModel(model, both, [2, 3, side, side]);
  assert.ok(Math.abs(checkerLogit! - RECORDED_CHECKER_LOGIT) < 1e-3, `checker logit ${checkerLogit} vs recorded ${RECORDED_CHECKER_LOGIT}`);
  assert.ok(Math.abs(rampAgain! - logit!) < 1e-4);
});

/** The crop blended onto a colour-shifted, blurred copy of itself inside a soft face ellipse. */
async function selfBlend(crop: { data: Buffer; width: number; height: number; channels: number }) {
  const { width: w, height: h } = crop;
  const blurred = await sharp(crop.data, { raw: { width: w, height: h, channels: 3 } }).blur(1.2).raw().toBuffer();
  const out = Buffer.alloc(crop.data.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const dx = (x - w / 2) / (0.32 * w), dy = (y - h * 0.53) / (0.4 * h);
      const m = Math.min(1, Math.max(0, (1 - Math.hypot(dx, dy)) * 4));
      for (let c = 0; c < 3; c++) {
        const i = (y * w + x) * 3 + c;
        const source = Math.min(255, blurred[i]! * [1.08, 0.96, 0.92][c]! + 6);
        out[i] = Math.round(m * source + (1 - m) * crop.data[i]!);
      }
    }
  }
  return { ...crop, data: out };
}

test('a self-blended face crop scores above its untouched original, as recorded', async () => {
  const { model } = await loadFaceForgeryModel(null);
  assert.ok(model);
  const image = await decodeImage(ONE_FACE);
  const [face] = await analyseFaces(image);
  assert.ok(face, 'the sample photo has a face');
  const crop = await faceCrop(image, face.boxAnalysisPixels, cropShareOf(model));
  const clean = await scoreFaceCrop(model, crop);
  const blended = await scoreFaceCrop(model, await selfBlend(crop));
  assert.ok(blended > clean, `blended ${blended} vs clean ${clean}`);
  assert.ok(Math.abs(clean - RECORDED_FACE.clean) < 2e-3, `clean ${clean} vs recorded ${RECORDED_FACE.clean} (blended ${blended})`);
  assert.ok(Math.abs(blended - RECORDED_FACE.blended) < 2e-3, `blended ${blended} vs recorded ${RECORDED_FACE.blended}`);
  const batched = await scoreFaceCrops(model, [crop, await selfBlend(crop)]);
  assert.ok(Math.abs(batched[0]! - clean) < 1e-5 && Math.abs(batched[1]! - blended) < 1e-5, 'batched scores equal single ones');
});

test('the crop follows the share the model was trained with: 0.6 of the face box by default, the descriptor\'s when it names one', async () => {
  const image = { data: new Uint8Array(200 * 200 * 3).fill(90), width: 200, height: 200, channels: 3 };
  assert.equal((await faceCrop(image, [50, 50, 100, 80])).width, 60);
  assert.equal((await faceCrop(image, [50, 50, 100, 80], 0.9)).width, 90);
  const { model } = await loadFaceForgeryModel(null);
  assert.ok(model);
  assert.equal(cropShareOf(model), (model.descriptor.input as ImageInput).faceCropShare ?? 0.6);
  assert.equal(cropShareOf({ ...model, descriptor: { ...model.descriptor, input: { ...model.descriptor.input, faceCropShare: 0.9 } as ImageInput } }), 0.9);
});

test('trimmed mean drops the extremes', () => {
  assert.equal(trimmedMean([0.1, 0.2, 0.3, 0.4, 0.99]), (0.2 + 0.3 + 0.4) / 3);
  assert.equal(trimmedMean([0.3]), 0.3);
  assert.equal(trimmedMean([0.2, 0.4]), 0.30000000000000004);
});

const track = { id: 0, observations: [0, 1, 2].map((frame) => ({ frame, face: { boxAnalysisPixels: [10, 10, 100, 100] as [number, number, number, number] } })) };
const frames = [0, 1, 2].map(() => ({ data: new Uint8Array(160 * 160 * 3).fill(128), width: 160, height: 160 }));

test('without the model, the assessment reports why with weight 0 and never decides', async () => {
  const empty = await mkdtemp(join(tmpdir(), 'mediaproof-no-models-'));
  const assessment = await assessFaceForgery([track], frames, null, undefined, empty);
  assert.equal(assessment.decides, false);
  assert.equal(assessment.signal.score, null);
  assert.equal(assessment.signal.weight, 0);
  assert.match(JSON.stringify(assessment.signal.evidence), /not installed or failed to load/);
  assert.match(JSON.stringify(assessment.signal.evidence), /Shiohara/);
});

test('altered weights are refused by their sha256 and the assessment says so', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-altered-model-'));
  await copyFile(join(BUILT_IN_MODELS_DIR, 'face-forgery-sbi.json'), join(dir, 'face-forgery-sbi.json'));
  const bytes = await readFile(join(BUILT_IN_MODELS_DIR, 'face-forgery-sbi.onnx'));
  bytes[bytes.length - 100]! ^= 0xff;
  await writeFile(join(dir, 'face-forgery-sbi.onnx'), bytes);
  const assessment = await assessFaceForgery([track], frames, null, undefined, dir);
  assert.equal(assessment.signal.score, null);
  assert.match(JSON.stringify(assessment.signal.evidence), /sha256/);
});

test('with the model, every observation is scored and aggregated per participant', async () => {
  const assessment = await assessFaceForgery([track], frames, null);
  const [participant] = assessment.participants;
  assert.equal(participant?.framesScored, 3);
  assert.equal(participant?.frameProbabilities.length, 3);
  assert.equal(typeof assessment.signal.score, 'number');
  const evidence = assessment.signal.evidence as { validationAuc: number; thresholds: unknown; decides: boolean; note?: string };
  const { model } = await loadFaceForgeryModel(null);
  // It decides only with 0.85 validation AUC and a descriptor weight; a weight of 0 says why.
  assert.equal(evidence.decides, evidence.validationAuc >= 0.85 && model!.descriptor.weight > 0);
  const notWeighedBecause = model!.descriptor.training?.notWeighedBecause;
  if (model!.descriptor.weight === 0) assert.ok(String(evidence.note).startsWith('reported with weight 0') && String(evidence.note).includes(String(notWeighedBecause)), String(evidence.note));
  assert.equal(assessment.signal.weight > 0, evidence.decides);
});
