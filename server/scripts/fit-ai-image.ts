/**
 * Fits the logistic fusion of ai-image-detection's statistical signals and writes
 * src/detectors/image/ai-image-fusion.json.
 *
 *   node --import tsx scripts/fit-ai-image.ts [--data ../../shared/data/ai-image] [--dry-run]
 *
 * Every sub-folder with labels.csv is used (1 = AI-generated); images under 32x32 pixels are
 * skipped (they carry no pixel statistics; the generator-metadata samples are decided by
 * provenance). Folders are weighted equally so a large folder does not drown a small one.
 * Features are standardised; the model is L2-regularised logistic regression fitted by
 * Newton's method. 5-fold cross-validated AUC per folder is printed so the in-sample figures
 * of `npm run eval` can be read against out-of-sample ones. Features constant in the data
 * get a documented prior weight instead of a fitted one.
 */
import { readdir, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { computeStatisticalSignals, FEATURE_NAMES, type Features } from '../src/detectors/image/ai-image-statistics.js';
import { readMetadata } from '../src/detectors/image/generator-metadata.js';
import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { readLabels } from '../src/eval/main.js';
import { auc } from '../src/eval/metrics.js';
import { fitLogistic } from './logistic.js';

const L2 = 0.05;
/** Prior logit weights per unit of feature, for features with no variance in the training data. */
const PRIORS: Record<string, number> = {
  cameraExif: -1.0, // complete camera EXIF: generators do not write it (but it can be copied)
  jpegCustomTable: -0.7, // a camera's or editor's own quantisation table
  png: 0,
  jpegQuality: 0,
};

interface Sample { folder: string; file: string; label: 0 | 1; x: number[]; weight: number }

async function main() {
  const dataIndex = process.argv.indexOf('--data');
  const root = resolve(dataIndex > 0 ? process.argv[dataIndex + 1]! : join(import.meta.dirname, '../../../shared/data/ai-image'));
  const dryRun = process.argv.includes('--dry-run');
  const raw: Array<{ folder: string; file: string; label: 0 | 1; shortSide: number; features: Features }> = [];
  for (const folder of (await readdir(root)).sort()) {
    const dir = join(root, folder);
    if (!(await stat(dir)).isDirectory()) continue;
    const labels = await readLabels(dir).catch(() => []);
    for (const { file, label } of labels) {
      try {
        const image = await loadImage(join(dir, file));
        if (image.width < 32 || image.height < 32) continue;
        const raster = await decodePixels(image, { channels: 3 });
        const metadata = await readMetadata(image.bytes);
        const { features } = await computeStatisticalSignals(image, raster, metadata, new AbortController().signal);
        raw.push({ folder, file, label, shortSide: Math.min(image.width, image.height), features });
      } catch (error) {
        console.warn(`skipped ${folder}/${file}: ${(error as Error).message}`);
      }
    }
    const kept = raw.filter((r) => r.folder === folder);
    if (new Set(kept.map((r) => r.label)).size < 2 || kept.length < 10) {
      // one class or a handful of files: nothing to learn a boundary from
      raw.splice(0, raw.length, ...raw.filter((r) => r.folder !== folder));
      console.log(`${folder}: not used (${kept.length} images with pixel features, needs both classes and >= 10)`);
      continue;
    }
    console.log(`${folder}: ${kept.length} images with features`);
  }
  // Two regimes: thumbnails (short side < 128, e.g. CIFAKE's 32x32) and full-size images.
  // Their statistics relate to the label differently (measured: one pooled model inverts on
  // full-size photos), so each gets its own model.
  const regimes = [
    { name: 'thumbnail', maxShortSide: 127 },
    { name: 'full-size', maxShortSide: 1_000_000 },
  ];
  const regimeOutputs = [];
  for (const regime of regimes) {
    const minShort = regime.name === 'thumbnail' ? 0 : 128;
    const rows = raw.filter((r) => r.shortSide >= minShort && r.shortSide <= regime.maxShortSide);
    if (rows.length < 10 || new Set(rows.map((r) => r.label)).size < 2) {
      console.log(`${regime.name}: no training data; the statistical score stays at 0.5 (inconclusive)`);
      regimeOutputs.push({ ...regime, mean: {}, std: {}, weights: {}, bias: 0, crossValidatedAuc: null, trainedOn: 0 });
      continue;
    }
    const fitted = FEATURE_NAMES.filter((name) => name !== 'cameraExif' && new Set(rows.map((r) => r.features[name])).size > 1);
    const mean: Record<string, number> = {}, std: Record<string, number> = {};
    for (const name of fitted) {
      const values = rows.map((r) => r.features[name]);
      mean[name] = values.reduce((a, b) => a + b, 0) / values.length;
      std[name] = Math.sqrt(values.reduce((a, b) => a + (b - mean[name]!) ** 2, 0) / values.length) || 1;
    }
    const samples: Sample[] = rows.map((r) => ({ folder: r.folder, file: r.file, label: r.label, x: fitted.map((name) => (r.features[name] - mean[name]!) / std[name]!), weight: 1 }));
    const l2 = rows.length < 200 ? 5 : L2; // few samples: shrink hard
    const cvScores = samples.map(() => 0);
    for (let fold = 0; fold < 5; fold++) {
      const model = fitLogistic(samples.filter((_, i) => i % 5 !== fold), fitted.length, l2);
      samples.forEach((s, i) => {
        if (i % 5 === fold) cvScores[i] = 1 / (1 + Math.exp(-(model.b + s.x.reduce((sum, v, k) => sum + v * model.w[k]!, 0))));
      });
    }
    const model = fitLogistic(samples, fitted.length, l2);
    const inSample = samples.map((s) => 1 / (1 + Math.exp(-(model.b + s.x.reduce((sum, v, k) => sum + v * model.w[k]!, 0)))));
    const cvAuc = auc(samples.map((s, i) => ({ score: cvScores[i]!, label: s.label })));
    for (const folder of new Set(samples.map((s) => s.folder))) {
      const idx = samples.map((s, i) => (s.folder === folder ? i : -1)).filter((i) => i >= 0);
      const cv = auc(idx.map((i) => ({ score: cvScores[i]!, label: samples[i]!.label })));
      const fit = auc(idx.map((i) => ({ score: inSample[i]!, label: samples[i]!.label })));
      console.log(`${regime.name} / ${folder}: AUC in-sample ${fit?.toFixed(3) ?? 'n/a'}, 5-fold cross-validated ${cv?.toFixed(3) ?? 'n/a'} (n=${idx.length})`);
    }
    const weights = Object.fromEntries(fitted.map((name, i) => [name, Math.round(model.w[i]! * 10_000) / 10_000]));
    console.log(`${regime.name} weights (per standard deviation):`, weights, 'bias', model.b.toFixed(4));
    regimeOutputs.push({
      ...regime,
      trainedOn: rows.length,
      crossValidatedAuc: cvAuc === null ? null : Math.round(cvAuc * 1000) / 1000,
      mean: Object.fromEntries(Object.entries(mean).map(([k, v]) => [k, Math.round(v * 1e6) / 1e6])),
      std: Object.fromEntries(Object.entries(std).map(([k, v]) => [k, Math.round(v * 1e6) / 1e6])),
      weights,
      bias: Math.round(model.b * 10_000) / 10_000,
    });
  }
  const output = {
    note: 'Fitted by scripts/fit-ai-image.ts on shared/data/ai-image. Priors are fixed, not fitted: those features do not vary in the training data. A regime whose cross-validated AUC is under minUsefulAuc, or fitted on fewer than minTrainingImages images, answers inconclusive (its score is still reported).',
    fittedAt: new Date().toISOString().slice(0, 10),
    regimes: regimeOutputs,
    priors: PRIORS,
    minUsefulAuc: 0.65,
    minTrainingImages: 200,
    inconclusiveMargin: 0.2,
  };
  if (!dryRun) {
    const target = join(import.meta.dirname, '../src/detectors/image/ai-image-fusion.json');
    await writeFile(target, `${JSON.stringify(output, null, 2)}\n`);
    console.log(`wrote ${target}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
