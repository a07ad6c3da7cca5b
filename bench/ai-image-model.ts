/**
 * `node --import tsx bench/ai-image-model.ts [--megapixels 12] [--runs 3]`
 *
 * ai-image-detection on one generated photo-like JPEG (default 12 MP, 4000×3000), on one
 * core (onnxruntime sessions use one thread): the whole detector with the learned patch
 * model and without it, in the same run, plus the peak resident memory of this process.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { analyzeAiImage } from '../server/src/detectors/image/ai-image.js';
import { initC2pa } from '../server/src/detectors/image/c2pa.js';
import { numberOption, peakRssMiB } from './measure.js';

const megapixels = numberOption('megapixels', 12);
const runs = numberOption('runs', 3);
const width = Math.round(Math.sqrt((megapixels * 1e6 * 4) / 3));
const height = Math.round((width * 3) / 4);

/** Smooth scene plus per-pixel noise, so every tile has texture like a camera photo. */
function scene(): Buffer {
  const data = Buffer.alloc(width * height * 3);
  let state = 12345;
  const rand = () => ((state = (state * 1103515245 + 12345) >>> 0) / 2 ** 32);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const base = 120 + 50 * Math.sin(x / 97) * Math.cos(y / 131) + 25 * Math.sin((x + y) / 13);
      const p = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) data[p + c] = Math.max(0, Math.min(255, Math.round(base + (c - 1) * 12 + (rand() - 0.5) * 16)));
    }
  }
  return data;
}

const dir = await mkdtemp(join(tmpdir(), 'mediaproof-bench-ai-image-'));
const path = join(dir, 'photo.jpg');
await sharp(scene(), { raw: { width, height, channels: 3 }, limitInputPixels: false }).jpeg({ quality: 90 }).toFile(path);
initC2pa();
const signal = new AbortController().signal;
await analyzeAiImage(path, null, signal); // warm-up: loads the model and the C2PA reader

async function time(learnedModel: boolean) {
  const wall: number[] = [];
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    await analyzeAiImage(path, null, signal, { learnedModel });
    wall.push((performance.now() - start) / 1000);
  }
  return wall;
}
const without = await time(false);
const withModel = await time(true);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
console.log(`ai-image-detection on a ${width}x${height} JPEG (${megapixels} MP), ${runs} runs each`);
console.log(`  without the learned model: median ${median(without).toFixed(3)} s (${without.map((s) => s.toFixed(3)).join(', ')})`);
console.log(`  with the learned model:    median ${median(withModel).toFixed(3)} s (${withModel.map((s) => s.toFixed(3)).join(', ')})`);
console.log(`  peak resident memory: ${peakRssMiB()} MiB`);
await rm(dir, { recursive: true, force: true });
