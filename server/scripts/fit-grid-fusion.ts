/**
 * Fits the image-level weights of the grid-misalignment map (its peak and area) and its heatmap
 * weight, and writes them into src/detectors/image/forgery-fusion.json.
 *
 *   node --import tsx scripts/fit-grid-fusion.ts <set> [<set> ...] [--check <set>] [--dry-run]
 *
 * The sets are made by `scripts/splice-tuning-set.py` (untouched PNGs and PNG splices, both after
 * a JPEG life). The map runs only on such PNGs, which `scripts/fit-forgery.ts`'s JPEG set never
 * holds, so the two weights are fitted on their own with everything else frozen: each image's
 * fused log-odds without the map is a fixed offset (bias included), and L2-regularised logistic
 * regression fits only the two weights. JPEG files and PNGs without a JPEG past score exactly as
 * before. The heatmap weight follows fit-forgery's rule: full when at least one in five of the
 * map's hot pixels (≥ 0.5) on the splices is truly spliced. `--check` sets are only measured.
 * Evaluation sets (CASIA, NoSo, ML72) are kept out.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { analyzeImageForgery } from '../src/detectors/image/forgery.js';
import { readLabels } from '../src/eval/main.js';
import { auc } from '../src/eval/metrics.js';
import { fitLogistic } from './logistic.js';
import { countHotPixels } from './fit-forgery.js';
import fusion from '../src/detectors/image/forgery-fusion.json' with { type: 'json' };

const ID = 'grid-alignment';
const L2 = 1;

interface Row { file: string; label: 0 | 1; offset: number; x: [number, number] }

const logit = (p: number) => Math.log(Math.max(1e-9, p) / Math.max(1e-9, 1 - p));
const current = (fusion.weights as Record<string, { peak: number; area: number } | undefined>)[ID] ?? { peak: 0, area: 0 };

async function measure(folder: string, precision: { tp: number; fp: number }): Promise<Row[]> {
  const rows: Row[] = [];
  for (const { file, label } of await readLabels(folder)) {
    const analysis = await analyzeImageForgery(join(folder, file), new AbortController().signal);
    const evidence = analysis.signals.find((s) => s.id === ID)?.evidence as { peak?: number; area?: number } | undefined;
    const x: [number, number] = [evidence?.peak ?? 0, evidence?.area ?? 0];
    // The fused log-odds without this map's current contribution: the frozen part of the model.
    rows.push({ file: `${folder}/${file}`, label, offset: logit(analysis.classicScore) - current.peak * x[0] - current.area * x[1], x });
    const map = analysis.maps.byMethod[ID];
    if (label === 1 && map) {
      const mask = await sharp(join(folder, 'masks', file.replace(/\.\w+$/, '_gt.png'))).greyscale().raw().toBuffer();
      countHotPixels(precision, map, analysis.maps, mask, analysis.width, analysis.height);
    }
    process.stdout.write('.');
  }
  return rows;
}

const scoreOf = (row: Row, w: readonly number[]) => 1 / (1 + Math.exp(-(row.offset + w[0]! * row.x[0] + w[1]! * row.x[1])));
const aucOf = (rows: Row[], scores: number[]) => auc(rows.map((r, i) => ({ score: scores[i]!, label: r.label })))?.toFixed(3);
const fit = (rows: Row[]) => fitLogistic(rows.map((r) => ({ x: r.x, label: r.label, offset: r.offset })), 2, L2, 30, { intercept: false }).w;

function report(name: string, rows: Row[], w: readonly number[]) {
  const before = rows.map((r) => scoreOf(r, [0, 0])), after = rows.map((r) => scoreOf(r, w));
  const called = (scores: number[], label: 0 | 1) => scores.filter((s, i) => rows[i]!.label === label && s >= 0.5).length;
  const n0 = rows.filter((r) => r.label === 0).length, n1 = rows.length - n0;
  console.log(`${name}: AUC ${aucOf(rows, before)} -> ${aucOf(rows, after)}; untouched called forged ${called(before, 0)}/${n0} -> ${called(after, 0)}/${n0}; splices called forged ${called(before, 1)}/${n1} -> ${called(after, 1)}/${n1}`);
}

async function main() {
  const args = process.argv.slice(2);
  const checkAt = args.indexOf('--check');
  const checkSets = checkAt >= 0 ? args.slice(checkAt + 1).filter((a) => !a.startsWith('--')) : [];
  const fitSets = (checkAt >= 0 ? args.slice(0, checkAt) : args).filter((a) => !a.startsWith('--'));
  const precision = { tp: 0, fp: 0 };
  const rows = (await Promise.all(fitSets.map((s) => measure(resolve(s), precision)))).flat();
  console.log();
  const cv = rows.map(() => 0);
  for (let fold = 0; fold < 5; fold++) {
    const w = fit(rows.filter((_, i) => i % 5 !== fold));
    rows.forEach((r, i) => { if (i % 5 === fold) cv[i] = scoreOf(r, w); });
  }
  const w = fit(rows);
  console.log(`fit sets: ${rows.length} images; 5-fold cross-validated AUC ${aucOf(rows, cv)} (without the map ${aucOf(rows, rows.map((r) => scoreOf(r, [0, 0])))})`);
  report('fit sets, in-sample', rows, w);
  for (const set of checkSets) report(`check ${set}`, await measure(resolve(set), { tp: 0, fp: 0 }), w);
  const pixelPrecision = precision.tp + precision.fp ? Math.round((precision.tp / (precision.tp + precision.fp)) * 1000) / 1000 : 0;
  const reliability = w[0]! + w[1]! > 0 ? Math.round(Math.min(1, pixelPrecision / 0.2) * 1000) / 1000 : 0;
  const weights = { peak: Math.round(w[0]! * 1000) / 1000, area: Math.round(w[1]! * 1000) / 1000 };
  console.log(`weights ${JSON.stringify(weights)}; pixel precision at 0.5 ${pixelPrecision}; heatmap weight ${reliability}`);
  if (args.includes('--dry-run')) return;
  const target = join(import.meta.dirname, '../src/detectors/image/forgery-fusion.json');
  const output = JSON.parse(await readFile(target, 'utf8'));
  output.weights[ID] = weights;
  output.reliability[ID] = reliability;
  output.pixelPrecision[ID] = pixelPrecision;
  output.gridAlignmentFit = { note: 'Fitted by scripts/fit-grid-fusion.ts on PNG splices made by scripts/splice-tuning-set.py, the other weights frozen.', images: rows.length, crossValidatedAuc: Number(aucOf(rows, cv)) };
  await writeFile(target, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`wrote ${target}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
