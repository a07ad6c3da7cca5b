/**
 * Fits (or checks) the rule of the missing-camera-noise method of image-forgery-detection.
 *
 *   node --import tsx scripts/fit-missing-noise.ts <set made by camera-forgery-set.py> [--untouched DIR]... [--budget 0.025] [--write] [--json FILE]
 *
 * Runs only that method over the set's files (labels.csv; the forgery kind is read from the file
 * name, fNN with NN mod 3 = 0 splice, 1 copy-move, 2 removal, as camera-forgery-set.py makes them)
 * and prints its peak smoothness's AUC against the untouched files (originals and re-saved copies),
 * per kind and overall, and how many files each candidate threshold calls forged.
 * The method detects filled regions, so its Platt scaling is fitted on the removals against the
 * untouched files; with --write it is stored in forgery-fusion.json (`missingNoise`), with
 * the set it was fitted on. Only the fitting half of the camera models may be written from:
 * the check half measures. `--untouched DIR` adds a folder of untouched photos (labels.csv, all 0),
 * e.g. the fitting half of modern phone models, to the untouched side of every figure and of the fit;
 * `--untouched A,B` pools folders into one source of the false-alarm budget (sets too small for one of their own).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { decodePixels, loadImage } from '../src/detectors/image/image-input.js';
import { CLASSIC_DECISIVE, COMPRESSION_MAX_PIXELS, lumaAndBlocking } from '../src/detectors/image/forgery.js';
import { fillProbability, missingCameraNoise, type MissingNoiseRule } from '../src/detectors/image/forgery/missing-noise.js';
import { readLabels } from '../src/eval/main.js';
import { auc } from '../src/eval/metrics.js';
import { fitLogistic } from './logistic.js';

const FUSION = new URL('../src/detectors/image/forgery-fusion.json', import.meta.url);
const KINDS = ['splice', 'copy-move', 'removal'] as const;
/** At most this share of each source's untouched fitting files may reach the decisive level (`--budget` overrides: stop 69 found 2.5 % in-sample came to 4.3 % on new photos). */
const budgetIndex = process.argv.indexOf('--budget');
const FALSE_ALARM_BUDGET = budgetIndex > 0 ? Number(process.argv[budgetIndex + 1]) : 0.025;
if (!(FALSE_ALARM_BUDGET >= 0 && FALSE_ALARM_BUDGET < 1)) throw new Error(`--budget takes a share from 0 to under 1, e.g. 0.01; got ${process.argv[budgetIndex + 1]}`);

function kindOf(file: string): string {
  const match = /^f(\d+)\./.exec(file);
  return match ? KINDS[Number(match[1]) % 3]! : 'untouched';
}

async function main() {
  const dir = resolve(process.argv[2] ?? '');
  const fusion = JSON.parse(await readFile(FUSION, 'utf8'));
  const rule: MissingNoiseRule = fusion.missingNoise?.rule ?? { a: 1, b: 0, minPixels: 1_000_000 };
  const rows: Array<{ file: string; source: string; label: 0 | 1; kind: string; peak: number; medianResidual?: number; skipped?: string; ms: number }> = [];
  // Each --untouched argument is one source; folders joined by commas count as one (small sets pooled).
  const sources = [[dir], ...process.argv.flatMap((arg, i) => (arg === '--untouched' ? [process.argv[i + 1]!.split(',').map((f) => resolve(f))] : []))];
  const folders = sources.flat();
  const files = (await Promise.all(sources.flatMap((source) => source.map(async (folder) => (await readLabels(folder)).map((row) => ({ ...row, folder, source: source.join(',') })))))).flat();
  for (const { file, label, folder, source } of files) {
    const started = performance.now();
    const image = await loadImage(join(folder, file));
    const kind = folder === dir ? kindOf(file) : 'untouched';
    const name = folder === dir ? file : `${basename(folder)}/${file}`;
    // As the detector runs it: not on images over the full-resolution limit (so not decoded either).
    if (image.width * image.height > COMPRESSION_MAX_PIXELS) {
      rows.push({ file: name, source, label, kind, peak: 0, skipped: `over ${COMPRESSION_MAX_PIXELS} pixels`, ms: Math.round(performance.now() - started) });
      continue;
    }
    const rgb = await decodePixels(image, { channels: 3 });
    const { luma } = lumaAndBlocking(rgb.data, rgb.width, rgb.height);
    const method = missingCameraNoise(luma, rgb.data, rgb.width, rgb.height, rule);
    rows.push({ file: name, source, label, kind, peak: method.peak, medianResidual: method.evidence.medianResidual as number | undefined, ...(method.skipped && { skipped: method.skipped }), ms: Math.round(performance.now() - started) });
  }
  const untouched = rows.filter((r) => r.label === 0);
  const against = (positives: typeof rows) => auc([...untouched, ...positives].map((r) => ({ score: r.peak, label: r.label })));
  const report: Record<string, unknown> = { set: folders.join(' + '), files: rows.length, skipped: rows.filter((r) => r.skipped).length, msPerFile: Math.round(rows.reduce((s, r) => s + r.ms, 0) / rows.length) };
  report.auc = { all: against(rows.filter((r) => r.label === 1)), ...Object.fromEntries(KINDS.map((k) => [k, against(rows.filter((r) => r.kind === k))])) };
  const sortedUntouched = untouched.map((r) => r.peak).sort((a, b) => a - b);
  report.untouchedPeak = [0.5, 0.9, 0.95, 0.98, 1].map((q) => [q, Math.round(sortedUntouched[Math.min(sortedUntouched.length - 1, Math.floor(q * sortedUntouched.length))]! * 100) / 100]);
  report.byThreshold = [6, 7, 8, 9, 10, 11, 12, 14].map((t) => ({
    threshold: t,
    untouchedCalledForged: untouched.filter((r) => r.peak >= t).length,
    ...Object.fromEntries(KINDS.map((k) => [k, rows.filter((r) => r.kind === k && r.peak >= t).length])),
  }));
  const fitted = rows.filter((r) => r.label === 0 || r.kind === 'removal');
  const platt = fitLogistic(fitted.map((r) => ({ x: [r.peak], label: r.label, weight: r.label ? untouched.length / (fitted.length - untouched.length) : 1 })), 1, 1e-3);
  report.platt = { a: platt.w[0], b: platt.b, fittedOn: `${folders.map((f) => basename(f)).join(' + ')}: ${fitted.length - untouched.length} removals, ${untouched.length} untouched (class-balanced)` };
  // The decisive level: the lowest peak that at most FALSE_ALARM_BUDGET of each source's untouched files reach
  // (the camera set, each --untouched folder), so one kind of camera cannot hide behind another's numbers.
  const level = Math.max(...sources.map((source) => {
    const peaks = rows.filter((r) => r.label === 0 && r.source === source.join(',')).map((r) => r.peak).sort((a, b) => b - a);
    const allowed = Math.floor(FALSE_ALARM_BUDGET * peaks.length);
    return peaks[allowed] ?? 0; // the (allowed + 1)-th highest must stay below: the level sits just above it
  })) + 0.01;
  report.decisive = {
    peak: Math.round(level * 100) / 100,
    probability: Math.max(CLASSIC_DECISIVE, Math.ceil(fillProbability(level, { a: platt.w[0]!, b: platt.b, minPixels: rule.minPixels }) * 1e4) / 1e4),
    untouchedReaching: untouched.filter((r) => r.peak >= level).length,
    ...Object.fromEntries(KINDS.map((k) => [k, rows.filter((r) => r.kind === k && r.peak >= level).length])),
  };
  report.highestUntouched = untouched.sort((a, b) => b.peak - a.peak).slice(0, 5).map((r) => [r.file, Math.round(r.peak * 100) / 100]);
  console.log(JSON.stringify(report, null, 1));
  const jsonIndex = process.argv.indexOf('--json');
  if (jsonIndex > 0) await writeFile(process.argv[jsonIndex + 1]!, JSON.stringify({ report, rows }, null, 1));
  if (process.argv.includes('--write')) {
    fusion.missingNoise = {
      ...fusion.missingNoise, // whether it decides is set by the check, not by the fit
      note: `Fitted by scripts/fit-missing-noise.ts: Platt scaling of the peak smoothness, removals against untouched files of a camera-forgery-set.py set (the fitting half of the camera models). The method decides (when decides is true) where its probability reaches decisiveProbability: the level at most ${FALSE_ALARM_BUDGET * 100} % of each source\'s untouched fitting files reach, never under the model-free decisive 0.6.`,
      fittedAt: new Date().toISOString().slice(0, 10),
      fittedOn: (report.platt as { fittedOn: string }).fittedOn,
      rule: { a: Math.round(platt.w[0]! * 1e4) / 1e4, b: Math.round(platt.b * 1e4) / 1e4, minPixels: rule.minPixels },
      decisiveProbability: (report.decisive as { probability: number }).probability,
    };
    await writeFile(FUSION, `${JSON.stringify(fusion, null, 2)}\n`);
  }
}

await main();
