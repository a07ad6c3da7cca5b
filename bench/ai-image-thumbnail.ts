/**
 * Inference speed of ai-image-detection on a 32x32 JPEG with and without the learned models, in
 * one process (onnxruntime one thread), for the model card.
 *
 *   taskset -c 0 node --import tsx bench/ai-image-thumbnail.ts [--runs 200]
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { analyzeAiImage } from '../server/src/detectors/image/ai-image.js';
import { initC2pa } from '../server/src/detectors/image/c2pa.js';
import { runThumbnailModel } from '../server/src/detectors/image/ai-image-thumbnail-model.js';
import { numberOption } from './measure.js';

const runs = numberOption('runs', 200);
const pixels = Buffer.alloc(32 * 32 * 3);
for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 2654435761) >>> 24;
const path = join(await mkdtemp(join(tmpdir(), 'thumb-speed-')), 'thumb.jpg');
await writeFile(path, await sharp(pixels, { raw: { width: 32, height: 32, channels: 3 } }).jpeg({ quality: 75 }).toBuffer());
initC2pa();
const signal = new AbortController().signal;
await runThumbnailModel({ data: pixels, width: 32, height: 32, channels: 3 }); // load the session once
const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
const time = async (learnedModel: boolean) => {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await analyzeAiImage(path, null, signal, { learnedModel });
    ms.push(performance.now() - t0);
  }
  return median(ms);
};
await time(true);
const without = await time(false), withModel = await time(true);
const model: number[] = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  await runThumbnailModel({ data: pixels, width: 32, height: 32, channels: 3 });
  model.push(performance.now() - t0);
}
console.log(`32x32 JPEG, median of ${runs}: detector without the learned models ${without.toFixed(2)} ms, with them ${withModel.toFixed(2)} ms; the thumbnail model alone ${median(model).toFixed(2)} ms`);
