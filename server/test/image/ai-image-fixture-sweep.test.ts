/**
 * No false AI verdict on the real images the other detectors' tests use (issue 18): the photos
 * shipped in @vladmandic/human (face tests, face index, media API), the camera-like renders of
 * the forgery and provenance tests, the job tests' gradient JPEG and the document tests' scans.
 * None of them is AI-generated; each may be `inconclusive`, none may be called `manipulated`.
 * The gradient JPEG was called AI (0.95) before the statistics refused to decide outside the
 * feature range they were fitted on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import detector from '../../src/detectors/image/ai-image.js';
import { scannedInvoice } from '../../src/eval/document-cases.js';
import { jpeg } from '../helpers.js';
import { detectorInput, naturalRgb, tempDir, texturedRgb } from './helpers.js';

const require = createRequire(import.meta.url);
const humanAssets = join(dirname(require.resolve('@vladmandic/human')), '..', 'assets');

/** Photographs of people (the face tests' fixtures): not renders. */
const SHIPPED_PHOTOS = ['screenshot-faceid.jpg', 'screenshot-facedetect.jpg', 'screenshot-facematch.jpg', 'samples.jpg'];

async function otherDetectorsFixtures(dir: string): Promise<string[]> {
  const files = SHIPPED_PHOTOS.map((name) => join(humanAssets, name));
  const write = async (name: string, bytes: Buffer) => {
    await writeFile(join(dir, name), bytes);
    files.push(join(dir, name));
  };
  await write('job-gradient.jpg', await jpeg());
  await write('job-gradient-large.jpg', await jpeg(640, 480));
  for (const [width, height, seed] of [[160, 128, 5], [256, 256, 3], [640, 480, 7], [1200, 900, 11]] as const) {
    const raw = { raw: { width, height, channels: 3 as const } };
    await write(`natural-${width}.jpg`, await sharp(naturalRgb(width, height, seed), raw).jpeg({ quality: 90 }).toBuffer());
    await write(`textured-${width}.png`, await sharp(texturedRgb(width, height, seed), raw).png().toBuffer());
    await write(`textured-${width}.jpg`, await sharp(texturedRgb(width, height, seed), raw).jpeg({ quality: 92 }).toBuffer());
  }
  await write('scanned-invoice.png', await scannedInvoice({ seed: 9 }));
  return files;
}

test('ai-image-detection calls none of the other detectors\' real fixtures AI-generated', async () => {
  const dir = await tempDir();
  await detector.load();
  const verdicts: string[] = [];
  for (const path of await otherDetectorsFixtures(dir)) {
    const { result } = await detector.analyze(detectorInput(path, 'ai-image-detection', dir), new AbortController().signal);
    const { verdict, score, isAiGenerated } = result as { verdict: string; score: number; isAiGenerated: boolean };
    verdicts.push(`${path.split('/').pop()}: ${verdict} ${score}`);
    assert.notEqual(verdict, 'manipulated', `${path} was called AI-generated (score ${score})`);
    assert.equal(isAiGenerated, false, path);
  }
  assert.equal(verdicts.length, 19, verdicts.join('\n'));
});

test('an image whose statistics lie far outside the fitted range is reported, not decided', async () => {
  const dir = await tempDir();
  const path = join(dir, 'gradient.jpg');
  await writeFile(path, await jpeg());
  await detector.load();
  const { result } = await detector.analyze(detectorInput(path, 'ai-image-detection', dir), new AbortController().signal);
  const details = (result as { analysisDetails: { statisticalModel: { regime: string; trusted: boolean; outsideFittedRange: string[] }; basis: string } }).analysisDetails;
  assert.equal(details.statisticalModel.regime, 'thumbnail');
  assert.equal(details.statisticalModel.trusted, false);
  assert.ok(details.statisticalModel.outsideFittedRange.includes('residualCorrelation'), JSON.stringify(details.statisticalModel));
  assert.match(details.basis, /outside what the statistical model for thumbnail images was fitted on/);
  assert.equal((result as { verdict: string }).verdict, 'inconclusive');
});
