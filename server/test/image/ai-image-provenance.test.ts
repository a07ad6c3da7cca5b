import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import detector from '../../src/detectors/image/ai-image.js';
import type { C2paEvidence } from '../../src/detectors/image/c2pa.js';
import type { CameraEvidence, GeneratorEvidence } from '../../src/detectors/image/generator-metadata.js';
import type { VerdictResult } from '../../src/detectors/result.js';
import { MediaError, type Signal } from '../../src/detectors/types.js';
import { c2paSigningSkipReason, makeTestSigner, signWithC2pa } from '../c2pa-signing.js';
import { detectorInput, embedStealthPngInfo, oversizedPngHeader, tempDir, texturedRgb, withPngText, writeJpeg, writePng } from './helpers.js';

const signal = new AbortController().signal;
const A1111_PARAMETERS = 'a photo of a duck\nNegative prompt: monochrome\nSteps: 15, Sampler: UniPC, CFG scale: 5, Seed: 2352842, Size: 512x400, Model: realisticVision';

/** ai-image-detection's result, with the fields these tests read beyond the envelope. */
type Result = VerdictResult & { generator: string | null; analysisDetails: { basis: string } };

/** The signal `id` of a result, its evidence typed as far as a test reads it. */
const signalOf = <E = unknown>(result: Result, id: string) => result.analysisDetails.signals.find((s) => s.id === id) as Signal & { evidence: E };

async function analyze(path: string) {
  await detector.load();
  const dir = await tempDir();
  const { result } = await detector.analyze(detectorInput(path, 'ai-image-detection', dir), signal);
  return result as Result;
}

test('AUTOMATIC1111 parameters in a PNG text chunk are AI evidence that names the generator', async () => {
  const dir = await tempDir();
  const png = await sharp(texturedRgb(64, 64), { raw: { width: 64, height: 64, channels: 3 } }).png().toBuffer();
  const path = join(dir, 'a1111.png');
  await writeFile(path, withPngText(png, { parameters: A1111_PARAMETERS }));
  const result = await analyze(path);
  assert.equal(result.verdict, 'manipulated');
  assert.equal(result.isAiGenerated, true);
  assert.ok(result.score >= 0.95);
  assert.match(result.generator!, /AUTOMATIC1111/);
  const signal = signalOf<{ found: GeneratorEvidence[] }>(result, 'generator-metadata');
  assert.equal(signal.evidence.found[0]!.field, 'png:parameters');
});

test('ComfyUI prompt graph is recognised', async () => {
  const dir = await tempDir();
  const png = await sharp(texturedRgb(32, 32), { raw: { width: 32, height: 32, channels: 3 } }).png().toBuffer();
  const path = join(dir, 'comfy.png');
  await writeFile(path, withPngText(png, { prompt: JSON.stringify({ 3: { inputs: { seed: 1, steps: 20 }, class_type: 'KSampler' } }) }));
  const result = await analyze(path);
  assert.equal(result.isAiGenerated, true);
  assert.equal(result.generator, 'ComfyUI');
});

test('an unrelated PNG text chunk is not mistaken for generator metadata', async () => {
  const dir = await tempDir();
  const png = await sharp(texturedRgb(32, 32), { raw: { width: 32, height: 32, channels: 3 } }).png().toBuffer();
  const path = join(dir, 'plain.png');
  await writeFile(path, withPngText(png, { Comment: 'holiday 2019, steps to the beach', parameters: 'exposure +1' }));
  const result = await analyze(path);
  assert.equal(result.generator, null);
  assert.equal(signalOf(result, 'generator-metadata').score, null);
  assert.match(result.analysisDetails.basis, /pixel statistics/);
});

test('a JPEG signed here with a C2PA manifest declaring trainedAlgorithmicMedia is decided by it, naming the agent', async (t) => {
  const skip = await c2paSigningSkipReason();
  if (skip) return t.skip(skip);
  const dir = await tempDir();
  const jpeg = await sharp(texturedRgb(96, 64), { raw: { width: 96, height: 64, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
  const path = join(dir, 'signed.jpg');
  await writeFile(path, await signWithC2pa(jpeg, 'image/jpeg', { sourceType: 'trainedAlgorithmicMedia', softwareAgent: 'Adobe Firefly' }, await makeTestSigner()));
  const result = await analyze(path);
  assert.equal(result.verdict, 'manipulated');
  assert.equal(result.isAiGenerated, true);
  assert.equal(result.generator, 'Adobe Firefly');
  const c2pa = signalOf<Pick<C2paEvidence, 'validationState'>>(result, 'c2pa');
  assert.equal(c2pa.evidence.validationState, 'Valid');
  assert.equal(c2pa.score, 0.99);
});

test('XMP DigitalSourceType trainedAlgorithmicMedia in a JPEG is AI evidence', async () => {
  const dir = await tempDir();
  const xmp = `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/" Iptc4xmpExt:DigitalSourceType="http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia"/></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;
  const path = join(dir, 'xmp.jpg');
  await writeFile(path, await sharp(texturedRgb(64, 64), { raw: { width: 64, height: 64, channels: 3 } }).jpeg().withXmp(xmp).toBuffer());
  const result = await analyze(path);
  assert.equal(result.verdict, 'manipulated');
  const iptc = signalOf<{ digitalSourceTypes: string[] }>(result, 'iptc-source-type');
  assert.match(iptc.evidence.digitalSourceTypes[0]!, /trainedAlgorithmicMedia$/);
});

test('a generator software tag in EXIF names the generator', async () => {
  const dir = await tempDir();
  const path = join(dir, 'software.jpg');
  await writeFile(path, await sharp(texturedRgb(64, 64), { raw: { width: 64, height: 64, channels: 3 } }).jpeg().withExif({ IFD0: { Software: 'Midjourney v6' } }).toBuffer());
  const result = await analyze(path);
  assert.equal(result.isAiGenerated, true);
  assert.equal(result.generator, 'Midjourney');
});

test('stealth PNG info hidden in alpha LSBs is decoded', async () => {
  const dir = await tempDir();
  const rgb = texturedRgb(64, 64);
  const rgba = Buffer.alloc(64 * 64 * 4);
  for (let i = 0; i < 64 * 64; i++) {
    rgba[i * 4] = rgb[i * 3]!;
    rgba[i * 4 + 1] = rgb[i * 3 + 1]!;
    rgba[i * 4 + 2] = rgb[i * 3 + 2]!;
    rgba[i * 4 + 3] = 255;
  }
  const path = await writePng(dir, 'stealth.png', embedStealthPngInfo(rgba, 64, 64, A1111_PARAMETERS), 64, 64, 4);
  const result = await analyze(path);
  assert.equal(result.isAiGenerated, true);
  const stealth = signalOf<{ excerpt: string }>(result, 'stealth-pnginfo');
  assert.match(stealth.evidence.excerpt, /Steps: 15/);
});

test('without provenance or watermark the answer rests on pixel statistics, capped in confidence, and says what is absent', async () => {
  const dir = await tempDir();
  // Larger than the thumbnails the learned model decides on (short side over 512 px): pixel statistics decide.
  const path = await writePng(dir, 'bare.png', texturedRgb(640, 576), 640, 576);
  const result = await analyze(path);
  assert.ok(result.confidence <= 0.75, `confidence ${result.confidence}`);
  assert.equal(result.generator, null);
  assert.match(result.analysisDetails.basis, /pixel statistics only/);
  assert.match(result.analysisDetails.basis, /learned image model reported, not weighed: short side 576 px is over the 512 px/);
  const c2pa = signalOf<{ note: string }>(result, 'c2pa');
  assert.match(c2pa.evidence.note, /no C2PA manifest/);
  const ids = result.analysisDetails.signals.map((s) => s.id);
  for (const id of ['spectral', 'noise-residual', 'jpeg-quantisation', 'invisible-watermark']) assert.ok(ids.includes(id), id);
});

test('a 1x1 image has no pixel statistics: inconclusive at 0.5, saying it is too small, not a confident score', async () => {
  const dir = await tempDir();
  const path = join(dir, 'one-pixel.png');
  await sharp(Buffer.from([200, 30, 90]), { raw: { width: 1, height: 1, channels: 3 } }).png().toFile(path);
  const result = await analyze(path);
  assert.equal(result.verdict, 'inconclusive');
  assert.equal(result.score, 0.5);
  assert.match(result.analysisDetails.basis, /\(1x1\) is too small for pixel statistics/);
  for (const id of ['spectral', 'noise-residual']) assert.equal(signalOf(result, id).score, null, id);
});

test('camera EXIF is reported but never turns an image into AI-generated', async () => {
  const dir = await tempDir();
  const path = join(dir, 'camera.jpg');
  const jpeg = await sharp(texturedRgb(64, 64), { raw: { width: 64, height: 64, channels: 3 } })
    .jpeg()
    .withExif({ IFD0: { Make: 'Canon', Model: 'Canon EOS 80D' }, IFD2: { ExposureTime: '1/200', FNumber: '56/10', ISOSpeedRatings: '200', DateTimeOriginal: '2020:01:01 10:00:00' } })
    .toBuffer();
  await writeFile(path, jpeg);
  const result = await analyze(path);
  assert.equal(result.isAiGenerated, false);
  const camera = signalOf<CameraEvidence>(result, 'camera-exif');
  assert.equal(camera.evidence.make, 'Canon');
});

test('malformed input fails with a MediaError', async () => {
  const dir = await tempDir();
  const notImage = join(dir, 'notes.png');
  await writeFile(notImage, 'this is text, not an image');
  await assert.rejects(analyze(notImage), (error: unknown) => error instanceof MediaError && /not a JPEG or PNG/.test(error.message));

  const full = await readFile(await writeJpeg(dir, 'full.jpg', texturedRgb(256, 256), 256, 256));
  const truncated = join(dir, 'truncated.jpg');
  await writeFile(truncated, full.subarray(0, Math.floor(full.length / 2)));
  await assert.rejects(analyze(truncated), (error: unknown) => error instanceof MediaError);

  const bomb = join(dir, 'bomb.png');
  await writeFile(bomb, oversizedPngHeader(20_000, 20_000));
  await assert.rejects(analyze(bomb), (error: unknown) => error instanceof MediaError && /pixel limit|exceeds/i.test(error.message));
});
