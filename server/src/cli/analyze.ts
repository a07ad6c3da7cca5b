/**
 * `mediaproof analyze FILE… --task SLUG`: uploads each file with the SDK, shows upload and
 * processing progress (bars on a terminal, plain lines otherwise), prints a verdict table
 * and exits 0 authentic / 1 manipulated / 2 inconclusive / 3 error.
 */
import { basename } from 'node:path';
import { stat } from 'node:fs/promises';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { JobFailedError, type AnalyzeProgress, type CompletedJob, type DetectionResult, type Job, type PayloadResult } from '@mediaproof/sdk';
import { clientFromEnvironment } from './credentials.js';
import { EXIT, exitCodeForVerdicts, percent, reportError, signalLines, table, verdictFlag } from './output.js';

interface AnalyzeCommandOptions {
  task: string;
  reference?: string;
  param: Record<string, unknown>;
  json?: boolean;
  quiet?: boolean;
  timeout?: number;
}

interface FileOutcome {
  file: string;
  job?: Job;
  error?: unknown;
}

/** Progress of several files: one bar each on a terminal, a line per step otherwise. */
class ProgressView {
  private readonly multibar: cliProgress.MultiBar | null;
  private readonly bars = new Map<string, cliProgress.SingleBar>();
  private readonly lastLine = new Map<string, string>();

  constructor(private readonly mode: 'bars' | 'lines' | 'none') {
    this.multibar = mode === 'bars'
      ? new cliProgress.MultiBar(
          { format: ' {file} |{bar}| {percentage}% {phase}', hideCursor: true, clearOnComplete: false, stopOnComplete: false, stream: process.stderr, barsize: 24 },
          cliProgress.Presets.shades_classic,
        )
      : null;
  }

  update(file: string, event: AnalyzeProgress): void {
    const name = basename(file);
    let phase: string;
    let fraction = 0;
    switch (event.phase) {
      case 'creating': phase = 'creating job'; break;
      case 'uploading':
        fraction = event.totalBytes ? event.sentBytes / event.totalBytes : 1;
        phase = event.slotName === 'original' ? 'uploading' : `uploading ${event.slotName}`;
        break;
      case 'finalizing': phase = 'finalizing'; fraction = 1; break;
      case 'waiting': phase = event.status; fraction = 1; break;
      case 'done': phase = event.status; fraction = 1; break;
    }
    if (this.multibar) {
      let bar = this.bars.get(file);
      if (!bar) {
        bar = this.multibar.create(100, 0, { file: name, phase });
        this.bars.set(file, bar);
      }
      bar.update(Math.round(fraction * 100), { file: name, phase });
    } else if (this.mode === 'lines') {
      // Plain lines: each phase once, uploads at 0, 25, 50, 75 and 100 %.
      const step = event.phase === 'uploading' ? `${phase} ${Math.floor(fraction * 4) * 25}%` : phase;
      if (this.lastLine.get(file) === step) return;
      this.lastLine.set(file, step);
      process.stderr.write(`${name}: ${step}${'jobId' in event ? ` (job ${event.jobId})` : ''}\n`);
    }
  }

  stop(): void {
    this.multibar?.stop();
  }
}

function parseParam(value: string, previous: Record<string, unknown>): Record<string, unknown> {
  const at = value.indexOf('=');
  if (at < 1) throw new Error(`--param expects key=value, got "${value}"`);
  const raw = value.slice(at + 1);
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // a plain string
  }
  return { ...previous, [value.slice(0, at)]: parsed };
}

async function analyzeFiles(files: string[], options: AnalyzeCommandOptions): Promise<number> {
  const client = clientFromEnvironment();
  const taskType = await client.taskTypes.retrieve(options.task);
  for (const file of [...files, ...(options.reference ? [options.reference] : [])]) {
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) throw new Error(`${file}: no such file`);
  }
  const interactive = Boolean(process.stderr.isTTY && process.stdout.isTTY);
  const view = new ProgressView(options.json || options.quiet ? 'none' : interactive ? 'bars' : 'lines');
  const outcomes: FileOutcome[] = [];
  // Ctrl-C aborts the running analysis; the SDK cancels a job that has not started.
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    for (const file of files) {
      if (controller.signal.aborted) break;
      try {
        const job = await client.analyze(file, {
          taskType: taskType.id,
          slots: options.reference ? { reference: options.reference } : undefined,
          parameters: Object.keys(options.param).length ? options.param : undefined,
          signal: controller.signal,
          timeoutMs: options.timeout ? options.timeout * 1000 : undefined,
          onProgress: (event) => view.update(file, event),
        });
        outcomes.push({ file, job });
      } catch (error) {
        outcomes.push({ file, job: error instanceof JobFailedError ? (error.job as Job) : undefined, error });
      }
    }
  } finally {
    process.removeListener('SIGINT', onSigint);
    view.stop();
  }

  const verdicts = outcomes.map((o) => (o.error ? null : (o.job as CompletedJob).result.verdict));
  const exitCode = exitCodeForVerdicts(verdicts);
  if (options.json) {
    console.log(JSON.stringify({
      taskType: taskType.slug,
      exitCode,
      results: outcomes.map(({ file, job, error }) => ({
        file,
        jobId: job?.jobId ?? (error as { jobId?: string } | undefined)?.jobId,
        status: job?.status ?? 'error',
        verdict: job?.result?.verdict,
        score: job?.result?.score,
        confidence: job?.result?.confidence,
        result: job?.result,
        ...(error ? { error: { code: (error as { code?: string }).code ?? 'ERROR', message: (error as Error).message } } : {}),
      })),
    }));
    return exitCode;
  }
  const verdictTable = table(['File', 'Verdict', 'Score', 'Confidence', 'Flag', 'Job']);
  for (const { file, job, error } of outcomes) {
    const result = job?.result as DetectionResult | PayloadResult | undefined;
    verdictTable.push([
      basename(file),
      error ? (job?.status ?? 'error') : (result?.verdict ?? job?.status ?? ''),
      percent(result?.score),
      percent(result?.confidence),
      verdictFlag(result),
      job?.jobId ?? (error as { jobId?: string } | undefined)?.jobId ?? '–',
    ]);
  }
  console.log(`${taskType.slug}: ${taskType.purpose}`);
  console.log(verdictTable.toString());
  for (const { file, job, error } of outcomes) {
    if (error) reportError(error, false);
    else if (files.length === 1) for (const line of signalLines(job?.result)) console.log(`  ${line}`);
    void file;
  }
  return exitCode;
}

export function registerAnalyzeCommand(program: Command): Command {
  return program
    .command('analyze')
    .description('analyse files with a task type and print the verdicts (exit 0 authentic, 1 manipulated, 2 inconclusive, 3 error, 4 no credentials)')
    .argument('<files...>', 'files to analyse (each becomes one job)')
    .requiredOption('-t, --task <slug>', 'task type slug or id, e.g. ai-image-detection (see `mediaproof task-types`)')
    .option('-r, --reference <file>', 'a reference face image (slot "reference": face-intelligence, ekyc-deepfake)')
    .option('-p, --param <key=value>', 'a task parameter (JSON values allowed); repeatable', parseParam, {})
    .option('--timeout <seconds>', 'stop waiting for a result after this long', (v) => {
      const n = Number(v);
      if (!(n > 0)) throw new Error('--timeout must be a positive number of seconds');
      return n;
    })
    .option('-q, --quiet', 'no progress output')
    .option('--json', 'print one JSON object: {taskType, exitCode, results: [{file, jobId, status, verdict, score, confidence, result, error?}]}')
    .action(async (files: string[], options: AnalyzeCommandOptions) => {
      try {
        process.exitCode = await analyzeFiles(files, options);
      } catch (error) {
        process.exitCode = reportError(error, options.json);
      }
    });
}

export { EXIT };
