import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import detector from '../../src/detectors/face/face-liveness.js';
import { analyseFaces } from '../../src/detectors/face/face-analysis.js';
import { decodeImage, type DecodedImage } from '../../src/detectors/face/image-input.js';
import { blurCue, moireCue, specularCue, type Box } from '../../src/detectors/face/liveness-cues.js';
import { assessLiveness } from '../../src/detectors/face/liveness.js';
import { loadLivenessModel } from '../../src/detectors/face/liveness-model.js';
import { MediaError } from '../../src/detectors/types.js';
import { heldUpAttack, printAttack, readRaw, screenReplay, webcamCapture } from '../../src/eval/presentation-attacks.js';
import { seededRandom } from '../../src/detectors/signal/seeded-random.js';
import { FIVE_FACES, ONE_FACE, fileOf, inputOf, noAbort, scratchDir, writeScratch } from './helpers.js';

type Signal = { id: string; score: number | null; weight: number; evidence: unknown };
type FaceResult = { box: number[]; score: number; confidence: number; verdict: string; isSpoof: boolean };
type Result = {
  score: number;
  confidence: number;
  verdict: string;
  isSpoof: boolean;
  analysisDetails: { signals: Signal[]; faces: FaceResult[]; faceCount: number; note?: string };
};

let dir: string;
let clean: DecodedImage;
let faceBox: Box;
const assess = async (path: string, parameters: Record<string, unknown> = {}) =>
  (await detector.analyze(inputOf('face-liveness-detection', [fileOf(path)], parameters), noAbort())).result as unknown as Result;

before(async () => {
  dir = await scratchDir();
  await detector.load();
  clean = await decodeImage(ONE_FACE);
  faceBox = (await analyseFaces(clean))[0]!.boxAnalysisPixels;
});

/** The clean photo with pixels of the face box changed by `edit(x, y, rgb)`. */
function editFace(edit: (x: number, y: number, pixel: Uint8Array) => void): DecodedImage {
  const data = new Uint8Array(clean.data);
  const [bx, by, bw, bh] = faceBox.map(Math.round) as Box;
  for (let y = by; y < by + bh; y++)
    for (let x = bx; x < bx + bw; x++) edit(x - bx, y - by, data.subarray((y * clean.width + x) * 3, (y * clean.width + x) * 3 + 3));
  return { ...clean, data };
}

/** ONE_FACE cropped around its face and enlarged to 480x480: a face large enough for the trained model (as in liveness-model.test.ts). */
const portrait = () => sharp(ONE_FACE).extract({ left: 0, top: 96, width: 230, height: 230 }).resize(480, 480).jpeg({ quality: 92 }).toBuffer();

const clamp = (value: number) => Math.max(0, Math.min(255, Math.round(value)));

test('a live face: a verdict with its flag, a bounded confidence and every signal explained', async () => {
  const result = await assess(ONE_FACE);
  assert.equal(result.isSpoof, result.verdict === 'manipulated');
  assert.ok(result.score >= 0 && result.score <= 1);
  assert.ok(result.confidence <= 0.7, 'weak models never claim more than 0.7');
  const ids = result.analysisDetails.signals.map((signal) => signal.id);
  for (const id of ['antispoof-model', 'liveness-model', 'model:face-liveness-pad', 'model:face-liveness-context', 'moire-spectrum', 'specular-reflection', 'blur', 'face-size', 'head-pose']) {
    assert.ok(ids.includes(id), `signal ${id}`);
  }
  assert.equal(result.analysisDetails.faceCount, 1);
  assert.notEqual(result.verdict, 'manipulated', `a plain portrait photo scored ${result.score}`);
});

test('the operating point: a printed, screen-replayed or held-up re-capture of the face is never called live', async () => {
  const raw = await readRaw(ONE_FACE);
  const random = seededRandom(3);
  // A room behind the held-up medium: a smooth grey gradient (no second face).
  const room = { width: 480, height: 480, data: Buffer.alloc(480 * 480 * 3) };
  for (let i = 0; i < room.data.length; i++) room.data[i] = 60 + Math.floor((i / 3 / 480 / 480) * 120);
  const heldUp = (face: typeof raw, next: () => number) => heldUpAttack(face, room, next);
  for (const [name, attack] of [['print', printAttack], ['replay', screenReplay], ['held-up', heldUp]] as const) {
    const result = await assess(await writeScratch(dir, `${name}.jpg`, await attack(raw, random)));
    assert.equal(result.analysisDetails.faceCount, 1, `${name}: the face is found`);
    assert.notEqual(result.verdict, 'authentic', `${name} scored ${result.score}`);
  }
});

test('the same attacks photographed by a cheap webcam (small, noisy, sharpened, JPEG) are not called live either', async () => {
  const raw = await readRaw(ONE_FACE);
  const random = seededRandom(5);
  for (const [name, attack] of [['print', printAttack], ['replay', screenReplay]] as const) {
    const frame = await webcamCapture(await attack(raw, random), random);
    const { format, width = 0 } = await sharp(frame).metadata();
    assert.equal(format, 'jpeg');
    assert.ok(width >= 200 && width <= 300, `${name}: a webcam-sized face image, ${width} px`);
    // Found or not (a small, noisy replay can hide the face from the detector), never live.
    const result = await assess(await writeScratch(dir, `webcam-${name}.jpg`, frame));
    assert.notEqual(result.verdict, 'authentic', `webcam ${name} scored ${result.score}`);
  }
});

test('the trained presentation-attack model is one cited signal of the result, with the weight its descriptor gives it', async () => {
  const { model } = await loadLivenessModel(null);
  assert.ok(model, 'the face-liveness-pad model is shipped in server/models');
  const result = await assess(await writeScratch(dir, 'portrait.jpg', await portrait()));
  const signal = result.analysisDetails.signals.find((s) => s.id === 'model:face-liveness-pad') as Signal & { evidence: { citation: string; logit: number } };
  assert.ok(signal, 'the model signal is present');
  assert.equal(typeof signal.score, 'number', `the model scored the face: ${JSON.stringify(signal.evidence)}`);
  assert.equal(signal.weight, model.descriptor.weight);
  // Shipped with weight 0 (simulated attacks only): the result says why it has no say.
  if (model.descriptor.weight === 0) assert.match(String((signal.evidence as { note?: string }).note), /reported with weight 0: trained on simulated attacks only/);
  assert.match(signal.evidence.citation, /Atoum/);
  assert.equal(typeof signal.evidence.logit, 'number');
  // The context model beside it: scored on the scene around the face, with the crop it saw.
  const context = result.analysisDetails.signals.find((s) => s.id === 'model:face-liveness-context') as Signal & { evidence: { citation: string; crop: { side: number } } };
  assert.ok(context, 'the context model signal is present');
  assert.equal(typeof context.score, 'number', `the context model scored the face: ${JSON.stringify(context.evidence)}`);
  assert.match(context.evidence.citation, /Anti-Spoofing/);
  assert.ok(context.evidence.crop.side > 0);
  if (context.weight === 0) assert.match(String((context.evidence as { note?: string }).note), /reported with weight 0/);
});

test('several faces: one assessment per face, the largest first', async () => {
  const result = await assess(FIVE_FACES);
  assert.equal(result.analysisDetails.faces.length, 5);
  for (const face of result.analysisDetails.faces) {
    assert.equal(face.box.length, 4);
    assert.ok(['authentic', 'manipulated', 'inconclusive'].includes(face.verdict));
    assert.equal(face.isSpoof, face.verdict === 'manipulated');
  }
  assert.equal(result.score, result.analysisDetails.faces[0]!.score);
});

test('no face: inconclusive with zero confidence, and the result says why', async () => {
  const blank = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#88aa66' } })
    .jpeg()
    .toBuffer();
  const result = await assess(await writeScratch(dir, 'blank.jpg', blank));
  assert.equal(result.verdict, 'inconclusive');
  assert.equal(result.confidence, 0);
  assert.equal(result.isSpoof, false);
  assert.match(result.analysisDetails.note!, /no face/);
});

test('an undecodable upload fails with a MediaError', async () => {
  await assert.rejects(assess(await writeScratch(dir, 'junk.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]))), MediaError);
});

test('moiré cue: a fine screen-like grating on the face stands out of its spectrum', () => {
  const grating = editFace((x, y, pixel) => {
    const wave = 14 * Math.sin(2 * Math.PI * (0.29 * x + 0.13 * y));
    for (let c = 0; c < 3; c++) pixel[c] = clamp(pixel[c]! + wave);
  });
  const before = moireCue(clean, faceBox).score!;
  const after = moireCue(grating, faceBox).score!;
  assert.ok(before < 0.3, `clean face ${before}`);
  assert.ok(after > 0.9, `grating ${after}`);
});

test('specular cue: a glossy glare patch on the face is flagged, the clean face is not', () => {
  const [, , w, h] = faceBox;
  const glare = editFace((x, y, pixel) => {
    if (Math.hypot((x - w * 0.45) / (w * 0.2), (y - h * 0.4) / (h * 0.16)) < 1) pixel.fill(250);
  });
  assert.ok(specularCue(clean, faceBox).score! < 0.2);
  assert.ok(specularCue(glare, faceBox).score! > 0.9);
});

test('blur cue and fused score rise for a blurred, glared, moiré-covered re-capture', async () => {
  const face = (await analyseFaces(clean))[0]!;
  const blurredBytes = await sharp(Buffer.from(clean.data), { raw: { width: clean.width, height: clean.height, channels: 3 } })
    .blur(3)
    .raw()
    .toBuffer();
  const blurred: DecodedImage = { ...clean, data: new Uint8Array(blurredBytes) };
  const sharpScore = (await blurCue(clean, faceBox)).score!;
  const blurScore = (await blurCue(blurred, faceBox)).score!;
  assert.ok(blurScore > 0.5 && blurScore > sharpScore + 0.3, `sharp ${sharpScore}, blurred ${blurScore}`);

  const [, , w, h] = faceBox;
  const attacked = editFace((x, y, pixel) => {
    const wave = 14 * Math.sin(2 * Math.PI * (0.29 * x + 0.13 * y));
    const inGlare = Math.hypot((x - w * 0.45) / (w * 0.2), (y - h * 0.4) / (h * 0.16)) < 1;
    for (let c = 0; c < 3; c++) pixel[c] = inGlare ? 250 : clamp(pixel[c]! + wave);
  });
  const cleanScore = (await assessLiveness(clean, face)).score;
  const attackedScore = (await assessLiveness(attacked, face)).score;
  const attackedSignals = (await assessLiveness(attacked, face)).signals.map((s) => `${s.id}=${s.score}`).join(' ');
  assert.ok(attackedScore > cleanScore + 0.1, `clean ${cleanScore}, attacked ${attackedScore}: ${attackedSignals}`);
});

test("learned model outputs are read as Human documents them (1 = real / live): a realer face scores less spoof", async () => {
  const face = (await analyseFaces(clean))[0]!;
  const real = await assessLiveness(clean, { ...face, realness: 0.9, liveness: 0.95 });
  const fake = await assessLiveness(clean, { ...face, realness: 0.1, liveness: 0.05 });
  const signal = (assessment: typeof real, id: string) => assessment.signals.find((s) => s.id === id)!.score;
  assert.equal(signal(real, 'antispoof-model'), 0.1);
  assert.equal(signal(real, 'liveness-model'), 0.05);
  assert.equal(signal(fake, 'antispoof-model'), 0.9);
  assert.ok(fake.score > real.score + 0.4, `real ${real.score}, fake ${fake.score}`);
});
