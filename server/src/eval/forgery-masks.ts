/**
 * `node --import tsx src/eval/forgery-masks.ts <folder> [--json]`: image-forgery-detection on
 * a folder with labels.csv and, for tampered files, ground-truth masks in `masks/<name>_gt.png`
 * (CASIA style; any `<name>*.png` in masks/ is accepted). Reports the image-level metrics of
 * `npm run eval` plus pixel-level F1 and IoU of the fused heatmap and of each single method's
 * map (threshold 0.5, and the best threshold per image as an upper bound, the "oracle" figure
 * common in the literature); a method that could not run on an image counts as F1 0 there. TIFF files (outside the service's JPEG/PNG formats) are converted
 * losslessly to PNG first.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import sharp from 'sharp';
import { analyzeImageForgery, METHOD_IDS } from '../detectors/image/forgery.js';
import { readLabels } from './main.js';
import { atThreshold, auc, expectedCalibrationError, type Scored } from './metrics.js';

interface PixelScore { f1: number; iou: number }

function pixelScores(map: Float32Array, cols: number, cell: number, mask: Uint8Array, width: number, height: number, threshold: number): PixelScore {
  let tp = 0, fp = 0, fn = 0;
  for (let y = 0; y < height; y++) {
    const row = Math.floor(y / cell) * cols;
    for (let x = 0; x < width; x++) {
      const predicted = map[row + Math.floor(x / cell)]! >= threshold;
      const truth = mask[y * width + x]! > 127;
      if (predicted && truth) tp++;
      else if (predicted) fp++;
      else if (truth) fn++;
    }
  }
  return { f1: tp ? (2 * tp) / (2 * tp + fp + fn) : 0, iou: tp ? tp / (tp + fp + fn) : 0 };
}

const bestOver = (f: (t: number) => PixelScore) => [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8].map(f).reduce((a, b) => (b.f1 > a.f1 ? b : a));

async function main() {
  const folder = resolve(process.argv[2] ?? '.');
  const json = process.argv.includes('--json');
  const labels = await readLabels(folder);
  const maskFiles = await readdir(join(folder, 'masks')).catch(() => [] as string[]);
  const work = await mkdtemp(join(tmpdir(), 'mediaproof-forgery-eval-'));
  const samples: Scored[] = [];
  const rows: Array<Record<string, unknown>> = [];
  const pixel: Record<string, { f1: number[]; iou: number[]; bestF1: number[]; bestIou: number[] }> = {};
  const add = (key: string, at: PixelScore, best: PixelScore) => {
    pixel[key] ??= { f1: [], iou: [], bestF1: [], bestIou: [] };
    pixel[key].f1.push(at.f1); pixel[key].iou.push(at.iou); pixel[key].bestF1.push(best.f1); pixel[key].bestIou.push(best.iou);
  };
  const started = performance.now();
  for (const { file, label } of labels) {
    let path = join(folder, file);
    if (/\.tiff?$/i.test(file)) {
      path = join(work, `${file}.png`);
      await writeFile(path, await sharp(join(folder, file)).png().toBuffer());
    }
    const t0 = performance.now();
    try {
      const analysis = await analyzeImageForgery(path, new AbortController().signal, { learnedModels: { modelsDir: process.env.MODELS_DIR ?? null }, cameraNoise: true });
      samples.push({ score: analysis.score, label });
      const stem = file.slice(0, -extname(file).length);
      // Only tampered files have masks (an untouched `01.png` must not take `01_mod_gt.png`).
      const maskFile = label === 1 ? maskFiles.find((m) => m.startsWith(stem)) : undefined;
      const row: Record<string, unknown> = { file, label, score: Math.round(analysis.score * 1000) / 1000, regions: analysis.regions.length, methods: analysis.methodsRun.join(','), ms: Math.round(performance.now() - t0) };
      if (maskFile) {
        const { data: mask } = await sharp(join(folder, 'masks', maskFile)).greyscale().resize(analysis.width, analysis.height, { fit: 'fill', kernel: 'nearest' }).raw().toBuffer({ resolveWithObject: true });
        const { cols, cell, fused, byMethod } = analysis.maps;
        const at = (map: Float32Array) => (t: number) => pixelScores(map, cols, cell, mask, analysis.width, analysis.height, t);
        const fusedAt = at(fused);
        add('fused', fusedAt(0.5), bestOver(fusedAt));
        row.pixelF1 = Math.round(fusedAt(0.5).f1 * 1000) / 1000;
        // A method that could not run on an image localised nothing there: it counts as F1 0,
        // so every row averages over the same images and the fused map is compared fairly.
        for (const id of [...METHOD_IDS, 'missing-noise' as const, 'learned' as const]) {
          const map = byMethod[id];
          if (map) add(id, at(map)(0.5), bestOver(at(map)));
          else add(id, { f1: 0, iou: 0 }, { f1: 0, iou: 0 });
        }
      }
      rows.push(row);
    } catch (error) {
      rows.push({ file, label, error: (error as Error).message });
    }
  }
  await rm(work, { recursive: true, force: true });
  const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
  const pixelSummary = Object.fromEntries(Object.entries(pixel).map(([key, v]) => [key, { images: v.f1.length, f1: mean(v.f1), iou: mean(v.iou), oracleF1: mean(v.bestF1), oracleIou: mean(v.bestIou) }]));
  const report = { data: folder, files: labels.length, scored: samples.length, auc: auc(samples), ...atThreshold(samples, 0.5), ece: expectedCalibrationError(samples), msPerFile: Math.round((performance.now() - started) / labels.length), pixel: pixelSummary, rows };
  if (json) return console.log(JSON.stringify(report, null, 2));
  for (const row of rows) console.log(JSON.stringify(row));
  console.log(`\nimage-forgery-detection on ${folder}: files ${report.files}, scored ${report.scored}`);
  console.log(`AUC ${report.auc === null ? 'n/a (one class only)' : report.auc.toFixed(3)}  accuracy@0.5 ${(report.accuracy * 100).toFixed(1)}%  recall ${report.recall === null ? 'n/a' : (report.recall * 100).toFixed(1) + '%'}  ECE ${report.ece.toFixed(3)}  ${report.msPerFile} ms/file`);
  console.log('pixel-level (mean over images with masks): map, F1@0.5, IoU@0.5, oracle F1, oracle IoU');
  for (const [key, v] of Object.entries(pixelSummary)) console.log(`  ${key.padEnd(12)} n=${v.images}  F1 ${v.f1.toFixed(3)}  IoU ${v.iou.toFixed(3)}  oracleF1 ${v.oracleF1.toFixed(3)}  oracleIoU ${v.oracleIou.toFixed(3)}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
