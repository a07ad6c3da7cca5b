/**
 * `npm run eval -- --task <slug> --data <folder with labels.csv> [--threshold 0.5] [--signal <id>] [--json]`
 *
 * Runs the task type's detector in this process over every labelled file of the folder
 * (labels.csv: `file,label` with 1 = positive class) and reports AUC, accuracy / F1 at the
 * threshold, expected calibration error, EER, how many answers were inconclusive, and the
 * verdicts per class (negatives called authentic, positives called manipulated). `--signal`
 * also reports one signal's own score and AUC (e.g. a learned model that carries weight 0).
 */
import { readFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { Command } from 'commander';
import { FORMATS, taskTypeBySlug, type FormatId } from '../detectors/catalogue.js';
import { atThreshold, auc, equalErrorRate, expectedCalibrationError, type Scored } from './metrics.js';

const EXTENSION_FORMAT: Record<string, FormatId> = {
  '.jpg': 'jpeg', '.jpeg': 'jpeg', '.png': 'png', '.pdf': 'pdf', '.mp3': 'mp3', '.wav': 'wav',
  '.m4a': 'm4a', '.flac': 'flac', '.ogg': 'ogg', '.opus': 'ogg', '.weba': 'weba', '.mp4': 'mp4', '.mov': 'mov', '.webm': 'webm',
};

export async function readLabels(dataDir: string): Promise<Array<{ file: string; label: 0 | 1 }>> {
  const text = await readFile(join(dataDir, 'labels.csv'), 'utf8');
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#') && !/^file,/i.test(line))
    .map((line) => {
      const [file, label] = line.split(',');
      return { file: file!.trim(), label: (Number(label) === 1 ? 1 : 0) as 0 | 1 };
    });
}

/** Per class, the share of files answered `authentic` and `manipulated` (errors count as files, not verdicts). */
function verdictShares(rows: Array<{ label: number; verdict: string }>) {
  const of = (label: number) => {
    const files = rows.filter((r) => r.label === label);
    const share = (verdict: string) => (files.length ? files.filter((r) => r.verdict === verdict).length / files.length : null);
    return { files: files.length, authentic: share('authentic'), manipulated: share('manipulated') };
  };
  return { negatives: of(0), positives: of(1) };
}

async function main() {
  const options = new Command()
    .requiredOption('--task <slug>', 'task type slug, e.g. ai-image-detection')
    .requiredOption('--data <folder>', 'folder holding labels.csv and the files it names')
    .option('--threshold <number>', 'decision threshold on score', '0.5')
    .option('--signal <id>', "also report this signal's own score and AUC, e.g. model:face-forgery-sbi")
    .option('--json', 'print one JSON object')
    .parse()
    .opts<{ task: string; data: string; threshold: string; signal?: string; json?: boolean }>();

  const taskType = taskTypeBySlug(options.task);
  if (!taskType) throw new Error(`unknown task type ${options.task}`);
  if (!taskType.detector) throw new Error(`task type ${options.task} has no detector yet`);
  const detector = (await taskType.detector()).default;
  // npm runs workspace scripts inside server/: resolve paths against where the user typed them.
  const dataDir = resolve(process.env.INIT_CWD ?? process.cwd(), options.data);
  const labels = await readLabels(dataDir);

  const loadStart = performance.now();
  await detector.load();
  const loadMs = performance.now() - loadStart;

  const samples: Scored[] = [];
  const signalSamples: Scored[] = [];
  const rows: Array<{ file: string; label: number; score: number | null; verdict: string; ms: number; signalScore?: number | null; error?: string }> = [];
  let inconclusive = 0;
  const workDir = await mkdtemp(join(tmpdir(), 'mediaproof-eval-'));
  const started = performance.now();
  for (const { file, label } of labels) {
    const path = join(dataDir, file);
    const format = EXTENSION_FORMAT[extname(file).toLowerCase()];
    const t0 = performance.now();
    try {
      const { size } = await stat(path);
      const output = await detector.analyze(
        {
          jobId: `eval-${file}`,
          taskTypeSlug: taskType.slug,
          files: [{ slotName: 'original', contentType: format ? FORMATS[format].mimeTypes[0]! : 'application/octet-stream', fileName: file, sizeBytes: size, path }],
          parameters: {},
          workDir,
          modelsDir: process.env.MODELS_DIR ?? null,
        },
        new AbortController().signal,
      );
      const score = Number(output.result.score);
      const verdict = String(output.result.verdict ?? '');
      if (verdict === 'inconclusive') inconclusive++;
      samples.push({ score, label });
      const signals = ((output.result.analysisDetails as { signals?: Array<{ id: string; score: number | null }> } | undefined)?.signals ?? []);
      const signalScore = options.signal ? (signals.find((s) => s.id === options.signal)?.score ?? null) : undefined;
      if (typeof signalScore === 'number') signalSamples.push({ score: signalScore, label });
      rows.push({ file, label, score, verdict, ms: performance.now() - t0, ...(options.signal && { signalScore }) });
    } catch (error) {
      rows.push({ file, label, score: null, verdict: 'error', ms: performance.now() - t0, error: (error as Error).message });
    }
  }
  const totalMs = performance.now() - started;
  await rm(workDir, { recursive: true, force: true });

  const threshold = Number(options.threshold);
  const report = {
    task: taskType.slug,
    data: dataDir,
    files: labels.length,
    scored: samples.length,
    errors: rows.filter((r) => r.verdict === 'error').length,
    inconclusive,
    auc: auc(samples),
    ...atThreshold(samples, threshold),
    ece: expectedCalibrationError(samples),
    eer: equalErrorRate(samples),
    verdictsByClass: verdictShares(rows),
    ...(options.signal && { signal: { id: options.signal, scored: signalSamples.length, auc: auc(signalSamples) } }),
    modelLoadMs: Math.round(loadMs),
    msPerFile: samples.length ? Math.round(totalMs / labels.length) : null,
    rows,
  };
  if (options.json) {
    console.log(JSON.stringify(report, null, 2));
    return;
  }
  for (const row of rows) {
    const signalColumn = row.signalScore === undefined ? '' : `${row.signalScore === null ? '  -   ' : row.signalScore.toFixed(4)} `;
    console.log(`${row.label} ${row.score === null ? '  -   ' : row.score.toFixed(4)} ${signalColumn}${row.verdict.padEnd(12)} ${row.file}${row.error ? `  (${row.error})` : ''}`);
  }
  const pct = (value: number | null) => (value === null ? 'n/a' : `${(value * 100).toFixed(1)}%`);
  console.log(`\n${report.task} on ${report.data}`);
  console.log(`files ${report.files}, scored ${report.scored}, errors ${report.errors}, inconclusive ${report.inconclusive}`);
  console.log(`AUC ${report.auc === null ? 'n/a (one class only)' : report.auc.toFixed(3)}  accuracy@${threshold} ${pct(report.accuracy)}  F1 ${report.f1 === null ? 'n/a' : report.f1.toFixed(3)}  recall ${pct(report.recall)}  FPR ${pct(report.falsePositiveRate)}`);
  const { negatives, positives } = report.verdictsByClass;
  console.log(`negatives: ${negatives.files}, called authentic ${pct(negatives.authentic)}, manipulated ${pct(negatives.manipulated)}; positives: ${positives.files}, called manipulated ${pct(positives.manipulated)}, authentic ${pct(positives.authentic)}`);
  if (report.signal) console.log(`signal ${report.signal.id}: scored ${report.signal.scored}, AUC ${report.signal.auc === null ? 'n/a' : report.signal.auc.toFixed(3)}`);
  console.log(`ECE ${report.ece.toFixed(3)}  EER ${report.eer ? pct(report.eer.eer) : 'n/a'}  model load ${report.modelLoadMs} ms  ${report.msPerFile} ms/file`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
