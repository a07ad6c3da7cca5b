/**
 * Evaluation of ai-audio-detection over several labelled folders pooled together (e.g. the
 * real/cloned speech set plus LibriSpeech as extra bona-fide speech), because one folder alone
 * has too few files for a stable AUC or EER. Per-folder figures are printed too.
 *
 * node --import tsx src/eval/audio-detection.ts --data ../../shared/data/audio/speech \
 *   --data ../../shared/data/audio/librispeech [--json]
 */
import { stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { Command } from 'commander';
import detector from '../detectors/audio/ai-audio.js';
import { readLabels } from './main.js';
import { atThreshold, auc, equalErrorRate, expectedCalibrationError, type Scored } from './metrics.js';

const MIME: Record<string, string> = { '.mp3': 'audio/mpeg', '.wav': 'audio/wav', '.m4a': 'audio/mp4', '.flac': 'audio/flac' };

interface Row extends Scored {
  folder: string;
  file: string;
  verdict: string;
  seconds: number;
  ms: number;
}

function summarise(rows: Row[]) {
  const inconclusive = rows.filter((r) => r.verdict === 'inconclusive');
  const decided = rows.filter((r) => r.verdict !== 'inconclusive');
  return {
    files: rows.length,
    positives: rows.filter((r) => r.label === 1).length,
    auc: auc(rows),
    eer: equalErrorRate(rows),
    ...atThreshold(rows, 0.5),
    ece: expectedCalibrationError(rows),
    inconclusive: inconclusive.length,
    // Accuracy over the answers the detector was willing to give.
    decidedAccuracy: decided.length ? decided.filter((r) => (r.score >= 0.5 ? 1 : 0) === r.label).length / decided.length : null,
  };
}

async function main() {
  const options = new Command()
    .requiredOption('--data <folder...>', 'folders holding labels.csv')
    .option('--json', 'print one JSON object')
    .parse()
    .opts<{ data: string[]; json?: boolean }>();
  await detector.load();
  const rows: Row[] = [];
  for (const folder of options.data.map((d) => resolve(d))) {
    for (const { file, label } of await readLabels(folder)) {
      const path = join(folder, file);
      const t0 = performance.now();
      const output = await detector.analyze(
        {
          jobId: `eval-${file}`,
          taskTypeSlug: 'ai-audio-detection',
          files: [{ slotName: 'original', contentType: MIME[extname(file).toLowerCase()] ?? 'application/octet-stream', fileName: file, sizeBytes: (await stat(path)).size, path }],
          parameters: {},
          workDir: folder,
          modelsDir: process.env.MODELS_DIR ?? null,
        },
        new AbortController().signal,
      );
      const result = output.result as { score: number; verdict: string; analysisDetails: { audio: { durationSeconds: number } } };
      rows.push({ folder, file, label, score: result.score, verdict: result.verdict, seconds: result.analysisDetails.audio.durationSeconds, ms: performance.now() - t0 });
      if (!options.json) console.log(`${label} ${result.score.toFixed(4)} ${result.verdict.padEnd(12)} ${file}`);
    }
  }
  const folders = [...new Set(rows.map((r) => r.folder))];
  const report = {
    pooled: summarise(rows),
    perFolder: Object.fromEntries(folders.map((f) => [f, summarise(rows.filter((r) => r.folder === f))])),
    realTimeFactor: rows.reduce((s, r) => s + r.seconds, 0) / (rows.reduce((s, r) => s + r.ms, 0) / 1000),
  };
  if (options.json) {
    console.log(JSON.stringify({ ...report, rows }, null, 2));
    return;
  }
  const line = (name: string, s: ReturnType<typeof summarise>) =>
    console.log(
      `${name}: files ${s.files} (${s.positives} synthetic), AUC ${s.auc === null ? 'n/a' : s.auc.toFixed(3)}, EER ${s.eer ? (s.eer.eer * 100).toFixed(1) + '%' : 'n/a'}, ` +
        `accuracy@0.5 ${(s.accuracy * 100).toFixed(1)}%, FPR ${s.falsePositiveRate === null ? 'n/a' : (s.falsePositiveRate * 100).toFixed(1) + '%'}, ` +
        `inconclusive ${s.inconclusive}, accuracy of decided ${s.decidedAccuracy === null ? 'n/a' : (s.decidedAccuracy * 100).toFixed(1) + '%'}, ECE ${s.ece.toFixed(3)}`,
    );
  console.log('');
  for (const folder of folders) line(folder, report.perFolder[folder]!);
  line('pooled', report.pooled);
  console.log(`speed: ${report.realTimeFactor.toFixed(1)}x real time (whole analysis, one thread)`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
