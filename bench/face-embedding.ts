/**
 * `node --import tsx bench/face-embedding.ts [--seconds 20]`
 *
 * Face detection + embedding throughput on one core (this thread, the tfjs wasm backend
 * single-threaded), on 1-megapixel images made from the sample photos shipped in
 * @vladmandic/human: a one-face portrait and a five-face row. Prints model load time,
 * images and faces per second for the embedding path (face-embedding) and for the full
 * analysis path (face-intelligence: + emotion, anti-spoof, liveness), and RSS.
 *
 * Two rates: per wall-clock second, and per CPU-second of this process (libvips limited to
 * one thread). On a machine shared with other work the CPU-second figure is the one that
 * says what one dedicated core delivers.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import * as tf from '@tensorflow/tfjs-core';
import { analyseFaces } from '../server/src/detectors/face/face-analysis.js';
import { loadHuman, type FaceModules } from '../server/src/detectors/face/human-runtime.js';
import { decodeImage } from '../server/src/detectors/face/image-input.js';
import { assessLiveness } from '../server/src/detectors/face/liveness.js';
import { numberOption } from './measure.js';

const require = createRequire(import.meta.url);
const assets = join(dirname(require.resolve('@vladmandic/human')), '..', 'assets');
const seconds = numberOption('seconds', 20);
const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** The sample scaled to one megapixel and re-encoded as JPEG, like a typical upload. */
async function oneMegapixel(file: string): Promise<Buffer> {
  const { width, height } = await sharp(join(assets, file)).metadata();
  const factor = Math.sqrt(1_000_000 / (width! * height!));
  return sharp(join(assets, file))
    .resize(Math.round(width! * factor), Math.round(height! * factor))
    .jpeg({ quality: 90 })
    .toBuffer();
}

async function measure(label: string, images: Buffer[], modules: FaceModules, withLiveness: boolean) {
  let count = 0;
  let faces = 0;
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  while (performance.now() - started < (seconds * 1000) / 2) {
    // Decoding is part of the cost a job pays, so it is inside the timed loop.
    const image = await decodeImage(images[count % images.length]!);
    const found = await analyseFaces(image, modules);
    if (withLiveness) for (const face of found) await assessLiveness(image, face);
    faces += found.length;
    count++;
  }
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  console.log(
    `${label.padEnd(46)} wall: ${(count / elapsed).toFixed(2)} images/s ${(faces / elapsed).toFixed(2)} faces/s | ` +
      `per CPU-second: ${(count / cpuSeconds).toFixed(2)} images ${(faces / cpuSeconds).toFixed(2)} faces ` +
      `(${count} images, ${((1000 * cpuSeconds) / count).toFixed(0)} ms CPU/image)`,
  );
}

sharp.concurrency(1);
const rssBefore = process.memoryUsage().rss;
const loadStart = performance.now();
await loadHuman();
const loadMs = performance.now() - loadStart;
console.log(
  `backend ${tf.getBackend()}, simd ${tf.env().getBool('WASM_HAS_SIMD_SUPPORT')}, multithread ${tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT')}`,
);
console.log(`model load ${loadMs.toFixed(0)} ms, RSS ${mib(rssBefore)} -> ${mib(process.memoryUsage().rss)} MiB`);

const portrait = await oneMegapixel('screenshot-faceid.jpg');
const group = await oneMegapixel('screenshot-facedetect.jpg');
// Warm-up: the first inference of each model compiles its kernels.
await analyseFaces(await decodeImage(group));

await measure('embedding, 1 MP portrait (1 face)', [portrait], { emotion: false, spoof: false }, false);
await measure('embedding, 1 MP group (5 faces)', [group], { emotion: false, spoof: false }, false);
await measure('full analysis + liveness cues, 1 MP portrait', [portrait], { emotion: true, spoof: true }, true);
await measure('full analysis + liveness cues, 1 MP group', [group], { emotion: true, spoof: true }, true);
console.log(`RSS after ${mib(process.memoryUsage().rss)} MiB, heap ${mib(process.memoryUsage().heapUsed)} MiB`);
