import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import sharp from 'sharp';
import detector from '../../src/detectors/face/face-intelligence.js';
import livenessDetector from '../../src/detectors/face/face-liveness.js';
import { runFfmpeg } from '../../src/detectors/media/ffmpeg.js';
import { MediaError } from '../../src/detectors/types.js';
import { FIVE_FACES, ONE_FACE, fileOf, flickerClip, inputOf, noAbort, operatorPack, scratchDir, stillClip, writeScratch } from './helpers.js';

type Spoof = { isSpoof: boolean; score: number; confidence: number; verdict: string };
type Face = {
  box: number[];
  age: number | null;
  gender: string | null;
  emotion: { emotion: string } | null;
  liveness: number | null;
  spoof: Spoof | null;
  framesSeen?: number;
};
type Verification = { isSimilar: boolean | null; similarity: number | null; threshold: number; notSimilarBelow: number; reason?: string };
type Participant = { id: number; fake: boolean; verdict: string; identity: { minCosine: number } | null };
type Result = {
  faces: Face[];
  faceCount: number;
  verification?: Verification;
  faceswap?: { verdict: string; isDeepFake: boolean; participants: Participant[] };
  media: { type: string; framesAnalysed?: number; durationSeconds?: number };
  analysisDetails: { notes?: string[] };
};

let dir: string;
let woman: string;
const analyse = async (original: string, reference?: string, parameters: Record<string, unknown> = {}) => {
  const video = original.endsWith('.mp4');
  const files = [fileOf(original, 'original', video ? 'video/mp4' : 'image/jpeg'), ...(reference ? [fileOf(reference, 'reference')] : [])];
  return (await detector.analyze(inputOf('face-intelligence', files, parameters), noAbort())).result as unknown as Result;
};

before(async () => {
  dir = await scratchDir();
  await detector.load();
  // The second woman from the left of the five-face photo, cropped on her own.
  woman = await writeScratch(
    dir,
    'woman.jpg',
    await sharp(FIVE_FACES).extract({ left: 410, top: 290, width: 270, height: 270 }).jpeg().toBuffer(),
  );
});

test('image: every face with age, gender, emotion, liveness and spoof', async () => {
  const result = await analyse(ONE_FACE);
  assert.equal(result.media.type, 'image');
  assert.equal(result.faceCount, 1);
  const face = result.faces[0]!;
  assert.equal(face.gender, 'male');
  assert.ok(face.age !== null && face.age > 18 && face.age < 70, `age ${face.age}`);
  assert.equal(typeof face.emotion?.emotion, 'string');
  assert.ok(face.liveness !== null && face.liveness >= 0 && face.liveness <= 1);
  assert.equal(face.spoof?.isSpoof, face.spoof?.verdict === 'manipulated');
  assert.match(result.analysisDetails.notes!.join(' '), /no reference/);
});

test('image liveness is face-liveness-detection\'s: the same trained models, also when an operator gives them a say', async () => {
  // Operator packs of both presentation-attack models with weight 1 (they replace the built-ins).
  const models = await operatorPack(join(dir, 'weighed-models'), ['face-liveness-pad', 'face-liveness-context'], { weight: 1 });
  const portrait = await writeScratch(dir, 'portrait.jpg', await sharp(ONE_FACE).extract({ left: 28, top: 150, width: 120, height: 126 }).resize(480, 480, { fit: 'fill' }).jpeg().toBuffer());
  for (const modelsDir of [null, models]) {
    const intelligence = (await detector.analyze({ ...inputOf('face-intelligence', [fileOf(portrait)]), modelsDir }, noAbort())).result as unknown as Result;
    const liveness = (await livenessDetector.analyze({ ...inputOf('face-liveness-detection', [fileOf(portrait)]), modelsDir }, noAbort())).result as unknown as { score: number; verdict: string };
    assert.equal(intelligence.faces[0]!.spoof!.score, liveness.score, `models ${modelsDir ?? 'built-in'}`);
    assert.equal(intelligence.faces[0]!.spoof!.verdict, liveness.verdict);
  }
});

test('verification: the same man in another photo is similar, a woman is not', async () => {
  const same = await analyse(ONE_FACE, FIVE_FACES);
  // The reference's largest face is a woman; crop the man out of it to compare like with like.
  const manCrop = await writeScratch(
    dir,
    'man.jpg',
    await sharp(FIVE_FACES).extract({ left: 0, top: 300, width: 190, height: 230 }).jpeg().toBuffer(),
  );
  const match = await analyse(ONE_FACE, manCrop);
  assert.equal(match.verification?.isSimilar, true, `similarity ${match.verification?.similarity}`);
  assert.ok(match.verification!.similarity! >= match.verification!.threshold);
  const other = await analyse(ONE_FACE, woman);
  assert.equal(other.verification?.isSimilar, false, `similarity ${other.verification?.similarity}`);
  assert.equal(same.verification?.isSimilar, false, 'the largest face of the group photo is a woman');
});

test('parameters select the checks: no liveness, single face, no similarity', async () => {
  const result = await analyse(FIVE_FACES, ONE_FACE, { isLivenessCheck: false, isSingleFace: true, isSimilarityCheck: false });
  assert.equal(result.faceCount, 1);
  assert.equal(result.faces[0]!.spoof, null);
  assert.equal(result.faces[0]!.liveness, null);
  assert.equal(result.verification, undefined);
});

test('a reference without a face: undecided, and the result says why', async () => {
  const blank = await writeScratch(
    dir,
    'blank.jpg',
    await sharp({ create: { width: 300, height: 300, channels: 3, background: '#345678' } })
      .jpeg()
      .toBuffer(),
  );
  const result = await analyse(ONE_FACE, blank);
  assert.equal(result.verification?.isSimilar, null, 'no comparison was made, so neither "same" nor "someone else"');
  assert.equal(result.verification?.similarity, null);
  assert.match(result.verification!.reason!, /reference/);
});

test('video: one person tracked across sampled frames and verified against a photo', async () => {
  const clip = await stillClip(dir, ONE_FACE, 'man.mp4', 3);
  const result = await analyse(clip, ONE_FACE, { maxFrames: 5, isFaceswapCheck: true });
  assert.equal(result.media.type, 'video');
  assert.equal(result.media.framesAnalysed, 5);
  assert.equal(result.faceCount, 1);
  assert.equal(result.faces[0]!.framesSeen, 5);
  assert.equal(result.verification?.isSimilar, true);
  assert.equal(result.faceswap?.verdict, 'inconclusive', 'a stable face is not called genuine or fake');
  assert.equal(result.faceswap?.participants[0]!.fake, false);
});

test('video: a face whose identity flickers in place is flagged by the faceswap check', async () => {
  const clip = await flickerClip(dir);
  const result = await analyse(clip, undefined, { maxFrames: 5, isFaceswapCheck: true, isLivenessCheck: false });
  assert.equal(result.faceswap?.verdict, 'manipulated', JSON.stringify(result.faceswap));
  assert.equal(result.faceswap?.isDeepFake, true);
});

test('broken and over-long videos fail with a MediaError', async () => {
  await assert.rejects(analyse(await writeScratch(dir, 'broken.mp4', Buffer.from('not a video'))), MediaError);
  const long = join(dir, 'long.mp4');
  await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'color=c=black:s=32x32:r=1:d=610', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', long]);
  await assert.rejects(analyse(long), (error: Error) => error instanceof MediaError && /610 s/.test(error.message));
});
