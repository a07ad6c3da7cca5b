/**
 * The context model shipped in server/models (face-liveness-context): it loads through the
 * model-pack loader with its sha256, reproduces the logits recorded at export on generated
 * crops, cuts its crop as the descriptor says (shifted into the image, never padded), scores a
 * held-up print of a face above the face itself, and an absent model leaves the assessment
 * answering as before, saying why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { runModel } from '../../src/detectors/model-pack.js';
import { contextCrop, contextGeometryOf, contextSquare, LIVENESS_CONTEXT_MODEL, loadLivenessContextModel, scoreContext } from '../../src/detectors/face/liveness-context.js';
import { assessLiveness, decideSpoof, EACH_MODEL_WITH_CONTEXT, FUSED_WITH_CONTEXT, FUSED_WITH_MODEL, onSharedScale } from '../../src/detectors/face/liveness.js';
import { round4 } from '../../src/detectors/result.js';
import { LIVENESS_MODEL, loadLivenessModel } from '../../src/detectors/face/liveness-model.js';
import { analyseFaces } from '../../src/detectors/face/face-analysis.js';
import { decodeImage } from '../../src/detectors/face/image-input.js';
import { heldUpAttack, readRaw } from '../../src/eval/presentation-attacks.js';
import { seededRandom } from '../../src/detectors/signal/seeded-random.js';
import { ONE_FACE, operatorPack } from './helpers.js';
import { assertShippedWeights } from '../model-files.js';

/** Logits on grey, noise and frame below, recorded by training/liveness-context/export.py (PyTorch). */
const RECORDED = { grey: -0.04228, noise: 1.86854, frame: 18.0531 };

/** [3, 1, 112, 112]: flat 128/255; an LCG's top bytes; a ramp with a dark square frame, as export.py made them. */
function probes(): Float32Array {
  const side = 112, plane = side * side;
  const out = new Float32Array(3 * plane).fill(128 / 255, 0, plane);
  let x = 12345;
  for (let i = 0; i < plane; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[plane + i] = (x >>> 24) / 255;
  }
  for (let r = 0; r < side; r++) {
    for (let c = 0; c < side; c++) {
      const outer = r >= 16 && r < 96 && c >= 16 && c < 96, inner = r >= 24 && r < 88 && c >= 24 && c < 88;
      out[2 * plane + r * side + c] = outer && !inner ? 0.08 : (c + r) / 222;
    }
  }
  return out;
}

/**
 * The webcam picture inside ONE_FACE (a screenshot of Human's face-ID demo), cut strictly inside
 * its frame and enlarged to 480x480: a live face in its room. (The screenshot itself shows the
 * picture framed by the demo's page, which the context model rightly takes for a medium.)
 */
async function webcamFace(): Promise<Buffer> {
  return sharp(ONE_FACE).extract({ left: 28, top: 150, width: 120, height: 126 }).resize(480, 480, { fit: 'fill' }).jpeg({ quality: 92 }).toBuffer();
}

test('the context model loads from server/models, matches its sha256 and reproduces its recorded logits', async () => {
  const { model, problems } = await loadLivenessContextModel(null);
  assert.ok(model, `the model did not load: ${JSON.stringify(problems)}`);
  assert.equal(model.origin, 'built-in');
  assert.equal(model.descriptor.name, LIVENESS_CONTEXT_MODEL);
  assert.deepEqual(model.descriptor.taskTypes, ['face-liveness-detection']);
  await assertShippedWeights(model);
  const [grey, noise, frame] = await runModel(model, probes(), [3, 1, 112, 112]);
  for (const [name, value] of Object.entries({ grey, noise, frame })) {
    const recorded = RECORDED[name as keyof typeof RECORDED];
    assert.ok(Math.abs(value! - recorded) < 1e-3, `${name} logit ${value} vs recorded ${recorded}`);
  }
});

test('the context crop is a square of contextScale x the face box, shifted into the image and never padded', async () => {
  const { model } = await loadLivenessContextModel(null);
  assert.ok(model);
  const geometry = contextGeometryOf(model);
  // A box in the middle: the full square; at a corner: shifted inside; larger than the image: shrunk to it.
  const middle = contextSquare(1000, 800, [450, 350, 100, 100], geometry.contextScale);
  assert.deepEqual(middle, { left: 500 - middle.side / 2, top: 400 - middle.side / 2, side: Math.round(100 * geometry.contextScale) });
  assert.deepEqual(contextSquare(1000, 800, [0, 0, 100, 100], geometry.contextScale), { left: 0, top: 0, side: middle.side });
  assert.deepEqual(contextSquare(1000, 800, [100, 100, 600, 600], geometry.contextScale), { left: 0, top: 0, side: 800 });
  // A frame whose left half is black and right half white: the crop of a box at the far left
  // holds both halves (shifted in), as a padded crop would not.
  const image = { data: new Uint8Array(400 * 300 * 3), width: 400, height: 300 };
  for (let i = 0; i < 400 * 300; i++) if (i % 400 >= 200) image.data.fill(255, 3 * i, 3 * i + 3);
  const crop = await contextCrop(image, [0, 100, 150, 150], geometry);
  assert.equal(crop?.pixels.length, geometry.side * geometry.side);
  assert.deepEqual(crop!.square, contextSquare(400, 300, [0, 100, 150, 150], geometry.contextScale));
  assert.ok(crop!.pixels[0]! < 0.05 && crop!.pixels[geometry.side - 1]! > 0.95, 'the shifted crop reaches the white half');
});

test('a held-up print of a face scores higher than the face itself, and both carry the crop they were judged on', async () => {
  const { model } = await loadLivenessContextModel(null);
  assert.ok(model);
  const bytes = await webcamFace();
  const image = await decodeImage(bytes);
  const [face] = await analyseFaces(image);
  assert.ok(face);
  const live = await scoreContext(model, image, face.boxAnalysisPixels);
  assert.ok(live);
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-context-'));
  await writeFile(join(dir, 'portrait.jpg'), bytes);
  const raw = await readRaw(join(dir, 'portrait.jpg'));
  const room = { width: 480, height: 480, data: Buffer.alloc(480 * 480 * 3) };
  for (let i = 0; i < room.data.length; i++) room.data[i] = 60 + Math.floor((i / 3 / 480 / 480) * 120);
  const held = await decodeImage(await heldUpAttack(raw, room, seededRandom(5)));
  const [heldFace] = await analyseFaces(held);
  assert.ok(heldFace, 'the face on the held-up print is found');
  const attack = await scoreContext(model, held, heldFace.boxAnalysisPixels);
  assert.ok(attack && attack.probability > live.probability, `held-up ${attack?.probability} vs live ${live.probability}`);
  assert.equal(attack.crop.side, Math.round(Math.min(contextGeometryOf(model).contextScale * Math.max(heldFace.boxAnalysisPixels[2], heldFace.boxAnalysisPixels[3]), held.width, held.height)));
});

test('without the context model the assessment reports it absent and answers with the patch model alone', async () => {
  const image = await decodeImage(ONE_FACE);
  const [face] = await analyseFaces(image);
  assert.ok(face);
  const empty = await mkdtemp(join(tmpdir(), 'mediaproof-no-context-'));
  const patch = await loadLivenessModel(null);
  const without = await assessLiveness(image, face, { patch, context: await loadLivenessContextModel(null, empty) });
  const signal = without.signals.find((s) => s.id === `model:${LIVENESS_CONTEXT_MODEL}`);
  assert.ok(signal);
  assert.equal(signal.score, null);
  assert.equal(signal.weight, 0);
  assert.match(JSON.stringify(signal.evidence), /not installed or failed to load/);
  const patchOnly = await assessLiveness(image, face, { patch });
  assert.equal(without.score, patchOnly.score);
  assert.deepEqual(without.thresholds, patchOnly.thresholds);
});

test('on the shared scale a face is live only when each model is under its own threshold, and a spoof when either reaches its own', () => {
  const own = { patch: { authenticBelow: 0.01, spoofFrom: 0.3 }, context: { authenticBelow: 0.2, spoofFrom: 0.6 } };
  const verdict = (patch: number, context: number) => decideSpoof(Math.max(onSharedScale(patch, own.patch), onSharedScale(context, own.context)), 1, FUSED_WITH_CONTEXT).verdict;
  assert.equal(verdict(0.005, 0.15), 'authentic');
  assert.equal(verdict(0.02, 0.15), 'inconclusive', 'the patch model over its own threshold, though far under the context one');
  assert.equal(verdict(0.005, 0.25), 'inconclusive');
  assert.equal(verdict(0.3, 0.0), 'manipulated');
  assert.equal(verdict(0.005, 0.6), 'manipulated');
  assert.equal(verdict(0.29, 0.59), 'inconclusive');
  // Monotone, and each model's own thresholds land on the shared ones.
  assert.equal(onSharedScale(0.01, own.patch), 1 / 3);
  assert.equal(onSharedScale(0.3, own.patch), 2 / 3);
  assert.equal(onSharedScale(1, own.patch), 1);
  let previous = -1;
  for (let p = 0; p <= 1; p += 0.001) {
    const scaled = onSharedScale(p, own.context);
    assert.ok(scaled >= previous, `monotone at ${p}`);
    previous = scaled;
  }
});

test('with one threshold pair for both models the rule is the larger probability against it (stop 42 and before)', () => {
  const same = { authenticBelow: 0.0787, spoofFrom: 0.0949 };
  for (let i = 0; i < 2000; i++) {
    const [patch, context] = [((i * 7919) % 1000) / 1000 / (1 + (i % 9)), ((i * 104729) % 1000) / 1000 / (1 + (i % 7))];
    const pair = decideSpoof(Math.max(onSharedScale(patch, same), onSharedScale(context, same)), 1, FUSED_WITH_CONTEXT).verdict;
    assert.equal(pair, decideSpoof(Math.max(patch, context), 1, same).verdict, `${patch} ${context}`);
  }
});

test('when both models have a say, each is judged by its own thresholds and the spoof score is the larger on the shared scale', async () => {
  // An operator pack of each model with weight 1 (a pack of a built-in's name replaces it).
  const dir = await operatorPack(await mkdtemp(join(tmpdir(), 'mediaproof-weighed-')), [LIVENESS_MODEL, LIVENESS_CONTEXT_MODEL], { weight: 1 });
  const [patch, context] = [await loadLivenessModel(dir), await loadLivenessContextModel(dir)];
  assert.ok(patch.model && context.model);
  const image = await decodeImage(await webcamFace());
  const [face] = await analyseFaces(image);
  assert.ok(face);
  const both = await assessLiveness(image, face, { patch, context });
  const score = (id: string) => both.signals.find((s) => s.id === `model:${id}`)!.score!;
  assert.equal(both.score, round4(Math.max(onSharedScale(score(LIVENESS_MODEL), EACH_MODEL_WITH_CONTEXT.patch), onSharedScale(score(LIVENESS_CONTEXT_MODEL), EACH_MODEL_WITH_CONTEXT.context))));
  assert.deepEqual(both.thresholds, FUSED_WITH_CONTEXT);
  for (const own of Object.values(EACH_MODEL_WITH_CONTEXT)) assert.ok(Number.isFinite(own.authenticBelow) && own.authenticBelow < own.spoofFrom);
  // The patch model alone keeps its own rule.
  const patchOnly = await assessLiveness(image, face, { patch });
  assert.deepEqual(patchOnly.thresholds, FUSED_WITH_MODEL);
});
