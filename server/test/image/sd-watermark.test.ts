import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { detectWatermark, KNOWN_WATERMARKS } from '../../src/detectors/image/sd-watermark.js';
import detector from '../../src/detectors/image/ai-image.js';
import { detectorInput, embedDwtWatermark, tempDir, texturedRgb, writePng } from './helpers.js';

const W = 256, H = 192;
const sdxl = KNOWN_WATERMARKS.find((mark) => mark.generator === 'Stable Diffusion XL')!;
const sd1 = KNOWN_WATERMARKS.find((mark) => mark.generator === 'Stable Diffusion 1.x')!;

async function rasterOf(buffer: Buffer) {
  const { data, info } = await sharp(buffer).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

test('SDXL 48-bit mark embedded with the library algorithm is decoded with every bit and the generator named', () => {
  const marked = embedDwtWatermark(texturedRgb(W, H, 7), W, H, sdxl.bits);
  const report = detectWatermark({ data: marked, width: W, height: H, channels: 3 });
  assert.equal(report.best?.generator, 'Stable Diffusion XL');
  assert.equal(report.best?.bitsMatched, 48);
  assert.equal(report.best?.decision, 'marked');
});

test('SD 1.x "StableDiffusionV1" mark survives JPEG quality 90 (4:4:4) and is found by the detector', async () => {
  const width = 512, height = 384; // 136 bits need enough 4x4 LL blocks for repeated votes
  const marked = embedDwtWatermark(texturedRgb(width, height, 3), width, height, sd1.bits);
  const jpeg = await sharp(marked, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90, chromaSubsampling: '4:4:4' }).toBuffer();
  const report = detectWatermark(await rasterOf(jpeg));
  assert.equal(report.best?.generator, 'Stable Diffusion 1.x');
  assert.ok(report.best!.bitsMatched >= 130, `bits matched ${report.best!.bitsMatched}`);

  const dir = await tempDir();
  const path = await writePng(dir, 'marked.png', marked, width, height);
  await detector.load();
  const { result } = await detector.analyze(detectorInput(path, 'ai-image-detection', dir), new AbortController().signal);
  assert.equal(result.verdict, 'manipulated');
  assert.equal(result.generator, 'Stable Diffusion 1.x');
});

test('unmarked images are not reported as marked, and resizing removes the mark', async () => {
  for (const seed of [11, 12, 13]) {
    const report = detectWatermark({ data: texturedRgb(W, H, seed), width: W, height: H, channels: 3 });
    assert.notEqual(report.best?.decision, 'marked', `seed ${seed}: ${JSON.stringify(report.best)}`);
  }
  const marked = embedDwtWatermark(texturedRgb(W, H, 7), W, H, sdxl.bits);
  const resized = await sharp(marked, { raw: { width: W, height: H, channels: 3 } }).resize(W - 37).png().toBuffer();
  assert.notEqual(detectWatermark(await rasterOf(resized)).best?.decision, 'marked');
});
