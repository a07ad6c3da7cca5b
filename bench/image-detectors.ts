/**
 * Throughput of ai-image-detection and image-forgery-detection on 1 MP and 12 MP JPEGs (and a
 * 12 MP PNG saved after a JPEG life, where the grid-misalignment map runs), one
 * core (sharp/libvips limited to one thread, as in a worker thread on a one-core budget), with
 * sharp's own decode of the same file as the baseline, and the peak RSS of the process. CPU
 * time is reported beside wall time: on a shared machine it is the steadier figure.
 *
 *   node --import tsx bench/image-detectors.ts [--runs 3]
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { analyzeAiImage } from '../server/src/detectors/image/ai-image.js';
import { initC2pa } from '../server/src/detectors/image/c2pa.js';
import { analyzeImageForgery } from '../server/src/detectors/image/forgery.js';
import { numberOption, peakRssMiB, stringOption } from './measure.js';

const RUNS = numberOption('runs', 3);
sharp.concurrency(1);

async function photoLike(width: number, height: number): Promise<Buffer> {
  // Gaussian noise blurred at two scales: texture without periodic structure, like a photo's.
  const coarse = await sharp({ create: { width: Math.ceil(width / 8), height: Math.ceil(height / 8), channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 60 } } })
    .resize(width, height, { kernel: 'cubic' })
    .raw()
    .toBuffer();
  const fine = await sharp({ create: { width, height, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 6 } } }).raw().toBuffer();
  for (let i = 0; i < coarse.length; i++) coarse[i] = Math.max(0, Math.min(255, coarse[i]! + fine[i]! - 128));
  return sharp(coarse, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
}

/** Mean wall time and mean CPU time (user + system, all threads of the process) per run. */
async function time(fn: () => Promise<unknown>, runs: number): Promise<{ wall: number; cpu: number }> {
  await fn(); // warm-up
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < runs; i++) await fn();
  const cpu = process.cpuUsage(cpuStart);
  return { wall: (performance.now() - start) / runs, cpu: (cpu.user + cpu.system) / 1000 / runs };
}

/** In a child process (`--analyse <file>`, `--decode-only`): one analysis, then its CPU seconds and peak RSS as JSON. */
async function analyseOnce(path: string, decodeOnly: boolean) {
  const cpuStart = process.cpuUsage();
  if (decodeOnly) await sharp(path, { limitInputPixels: false }).raw().toBuffer();
  else await analyzeImageForgery(path, new AbortController().signal, { learnedModels: { modelsDir: null }, cameraNoise: true });
  const cpu = process.cpuUsage(cpuStart);
  console.log(JSON.stringify({ cpuSeconds: (cpu.user + cpu.system) / 1e6, peakRssMiB: peakRssMiB() }));
}

async function workerMemory(megapixels: number) {
  const width = Math.round(Math.sqrt((megapixels * 1e6 * 4) / 3)), height = Math.round((width * 3) / 4);
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-bench-image-'));
  const jpeg = await photoLike(width, height);
  const files = [['JPEG q90', join(dir, 'photo.jpg'), jpeg], ['PNG of that JPEG', join(dir, 'photo.png'), await sharp(jpeg, { limitInputPixels: false }).png({ compressionLevel: 1 }).toBuffer()]] as const;
  console.log(`image-forgery-detection with the localiser, ${width}x${height} (${megapixels} MP), each in a fresh process (node ${process.version})`);
  for (const [label, path, bytes] of files) {
    await writeFile(path, bytes);
    const child = (...extra: string[]) => JSON.parse(execFileSync(process.execPath, [...process.execArgv, process.argv[1]!, '--analyse', path, ...extra], { encoding: 'utf8' }).trim().split('\n').pop()!) as { cpuSeconds: number; peakRssMiB: number };
    const decode = child('--decode-only'), forgery = child();
    console.log(`${label} (${(bytes.length / 2 ** 20).toFixed(0)} MiB file):`);
    console.log(`  sharp decode (baseline)    cpu ${decode.cpuSeconds.toFixed(2)} s  peak RSS ${decode.peakRssMiB} MiB`);
    console.log(`  image-forgery (detector)   cpu ${forgery.cpuSeconds.toFixed(2)} s  peak RSS ${forgery.peakRssMiB} MiB`);
  }
  await rm(dir, { recursive: true, force: true });
}

async function main() {
  const analyse = stringOption('analyse', '');
  if (analyse) return analyseOnce(analyse, process.argv.includes('--decode-only'));
  const megapixels = numberOption('megapixels', 0);
  if (megapixels) return workerMemory(megapixels);
  initC2pa();
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-bench-image-'));
  const signal = new AbortController().signal;
  console.log(`image detectors, one core, ${RUNS} runs each after a warm-up (node ${process.version})`);
  for (const [label, width, height, format] of [['1 MP', 1152, 864, 'jpeg'], ['12 MP', 4000, 3000, 'jpeg'], ['12 MP', 4000, 3000, 'png']] as const) {
    const path = join(dir, `${label.replace(' ', '')}.${format === 'jpeg' ? 'jpg' : 'png'}`);
    const jpeg = await photoLike(width, height);
    await writeFile(path, format === 'jpeg' ? jpeg : await sharp(jpeg).png({ compressionLevel: 1 }).toBuffer());
    const decode = await time(() => sharp(path).raw().toBuffer(), RUNS);
    const ai = await time(() => analyzeAiImage(path, null, signal), RUNS);
    const forgery = await time(() => analyzeImageForgery(path, signal), RUNS);
    const forgeryLearned = await time(() => analyzeImageForgery(path, signal, { learnedModels: { modelsDir: null } }), RUNS);
    // As the detector runs it: with the localiser and the missing-noise method (full-size JPEGs only).
    const forgeryDetector = await time(() => analyzeImageForgery(path, signal, { learnedModels: { modelsDir: null }, cameraNoise: true }), RUNS);
    const line = (name: string, t: { wall: number; cpu: number }) =>
      `  ${name.padEnd(26)} wall ${t.wall.toFixed(0).padStart(6)} ms  cpu ${t.cpu.toFixed(0).padStart(6)} ms  ${(1000 / t.cpu).toFixed(2)} images/s per core (by CPU time)  ${(t.cpu / decode.cpu).toFixed(1)}x decode`;
    console.log(`${label} (${width}x${height} ${format === 'jpeg' ? 'JPEG q90' : 'PNG of a JPEG q90'}):`);
    console.log(line('sharp decode (baseline)', decode));
    console.log(line('ai-image-detection', ai));
    console.log(line('image-forgery, model-free', forgery));
    console.log(line('image-forgery + localiser', forgeryLearned));
    console.log(line('  + missing noise (detector)', forgeryDetector));
  }
  console.log(`peak RSS ${peakRssMiB()} MiB`);
  await rm(dir, { recursive: true, force: true });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
