import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import detector from '../../src/detectors/face/face-embedding.js';
import { NOT_SIMILAR_BELOW, VERIFICATION_THRESHOLD } from '../../src/detectors/face/verification.js';
import { MediaError } from '../../src/detectors/types.js';
import { FIVE_FACES, ONE_FACE, dot, fileOf, inputOf, noAbort, scratchDir, writeScratch } from './helpers.js';

type Face = { box: number[]; embedding: number[]; dimensions: number; model: string; landmarks: Record<string, number[]> };
type Result = { faces: Face[]; faceCount: number; facesDetected: number; analysisDetails: Record<string, unknown> };

let dir: string;
const embed = async (path: string, parameters: Record<string, unknown> = {}) =>
  (await detector.analyze(inputOf('face-embedding', [fileOf(path)], parameters), noAbort())).result as unknown as Result;

before(async () => {
  dir = await scratchDir();
  await detector.load();
});

test('one face: a unit-length embedding with its dimensions, model, box and landmarks inside the image', async () => {
  const result = await embed(ONE_FACE);
  assert.equal(result.faceCount, 1);
  const face = result.faces[0]!;
  assert.equal(face.dimensions, 1024);
  assert.equal(face.embedding.length, face.dimensions);
  assert.ok(Math.abs(Math.hypot(...face.embedding) - 1) < 1e-6, 'embedding is L2-normalised');
  assert.match(face.model, /faceres/);
  const [x, y, w, h] = face.box as [number, number, number, number];
  assert.ok(x >= 0 && y >= 0 && w > 60 && h > 60 && x + w <= 800 && y + h <= 564);
  const [eyeX, eyeY] = face.landmarks.leftEye as [number, number];
  assert.ok(eyeX > x && eyeX < x + w && eyeY > y && eyeY < y + h, 'landmarks lie inside the face box');
});

test('the same face re-encoded, resized and relit stays above the verification threshold', async () => {
  const reference = (await embed(ONE_FACE)).faces[0]!.embedding;
  const processed = await sharp(ONE_FACE).resize({ width: 560 }).modulate({ brightness: 0.8 }).jpeg({ quality: 40 }).toBuffer();
  const face = (await embed(await writeScratch(dir, 'processed.jpg', processed))).faces[0]!;
  assert.ok(dot(reference, face.embedding) >= VERIFICATION_THRESHOLD, `similarity ${dot(reference, face.embedding)}`);
});

test('five people: largest first; the man of the one-face photo matches himself and none of the four women', async () => {
  const result = await embed(FIVE_FACES);
  assert.equal(result.faceCount, 5);
  const areas = result.faces.map((face) => face.box[2]! * face.box[3]!);
  assert.deepEqual(
    areas,
    [...areas].sort((a, b) => b - a),
  );
  const man = (await embed(ONE_FACE)).faces[0]!.embedding;
  const similarities = result.faces.map((face) => dot(man, face.embedding)).sort((a, b) => b - a);
  // The same man photographed on another occasion, then four different women.
  assert.ok(similarities[0]! >= VERIFICATION_THRESHOLD, `same man: ${similarities[0]}`);
  for (const similarity of similarities.slice(1)) assert.ok(similarity < NOT_SIMILAR_BELOW, `a woman scored ${similarity}: not clearly someone else`);
});

test('isSingleFace keeps the largest face; multipleFaces=reject fails with a clear error', async () => {
  const all = await embed(FIVE_FACES);
  const single = await embed(FIVE_FACES, { isSingleFace: true });
  assert.equal(single.faceCount, 1);
  assert.equal(single.facesDetected, 5);
  assert.deepEqual(single.faces[0]!.box, all.faces[0]!.box);
  await assert.rejects(
    embed(FIVE_FACES, { isSingleFace: true, multipleFaces: 'reject' }),
    (error: Error) => error instanceof MediaError && /found 5/.test(error.message),
  );
  await assert.rejects(embed(ONE_FACE, { isSingleFace: 'yes' }), MediaError);
});

test('an image without a face gives no faces and says so', async () => {
  const gradient = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#6a8caf' } })
    .composite([
      { input: Buffer.from('<svg width="640" height="480"><rect x="100" y="100" width="300" height="200" fill="#d0a070"/></svg>') },
    ])
    .png()
    .toBuffer();
  const result = await embed(await writeScratch(dir, 'no-face.png', gradient));
  assert.equal(result.faceCount, 0);
  assert.deepEqual(result.faces, []);
  assert.match(String(result.analysisDetails.note), /no face/);
});

test('an undecodable file fails with a MediaError', async () => {
  const path = await writeScratch(dir, 'broken.jpg', Buffer.from('this is not a jpeg at all'));
  await assert.rejects(embed(path), MediaError);
  const truncated = (await sharp(ONE_FACE).jpeg().toBuffer()).subarray(0, 2000);
  await assert.rejects(embed(await writeScratch(dir, 'truncated.jpg', truncated)), MediaError);
});

test('detectSmallFaces finds the small faces of a crowded image once each', async () => {
  const crowd = join(dirname(ONE_FACE), 'samples.jpg');
  const plain = await embed(crowd);
  const searched = await embed(crowd, { detectSmallFaces: true });
  assert.ok(searched.faceCount > plain.faceCount, `${plain.faceCount} -> ${searched.faceCount}`);
  const boxes = searched.faces.map((face) => face.box as [number, number, number, number]);
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i]!, boxes[j]!];
      const width = Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0]);
      const height = Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1]);
      const overlap = width > 0 && height > 0 ? (width * height) / Math.min(a[2] * a[3], b[2] * b[3]) : 0;
      assert.ok(overlap < 0.5, `faces ${i} and ${j} are the same face`);
    }
  }
});
