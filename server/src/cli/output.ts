/** Shared output of the end-user commands: exit codes, error reporting and tables. */
import Table from 'cli-table3';
import { JobFailedError, MediaproofError, type DetectionResult, type Job, type PayloadResult, type Verdict } from '@mediaproof/sdk';
import { CliConfigError } from './credentials.js';

/** Exit codes of `mediaproof analyze` (and the error codes of every client command). */
export const EXIT = {
  authentic: 0,
  manipulated: 1,
  inconclusive: 2,
  /** The service refused a call, a job failed, or the service could not be reached. */
  error: 3,
  /** No credentials or an unreadable config file. */
  config: 4,
  /** Bad arguments. */
  usage: 64,
} as const;

/** `null` for a file whose analysis failed; `undefined` for a completed job without a verdict (face-embedding, audio-splitter…), which counts as success. */
export function exitCodeForVerdicts(verdicts: Array<Verdict | null | undefined>): number {
  if (verdicts.some((v) => v === null)) return EXIT.error;
  if (verdicts.includes('manipulated')) return EXIT.manipulated;
  if (verdicts.includes('inconclusive')) return EXIT.inconclusive;
  return EXIT.authentic;
}

/** Prints an error (JSON on stdout with --json, text on stderr otherwise) and returns its exit code. */
export function reportError(error: unknown, json: boolean | undefined): number {
  const exitCode = error instanceof CliConfigError ? EXIT.config : EXIT.error;
  const details = error instanceof MediaproofError
    ? { code: error.code, statusCode: error.statusCode, message: error.message, jobId: error.jobId, requestId: error.requestId }
    : { code: error instanceof CliConfigError ? 'CONFIG_ERROR' : 'ERROR', message: error instanceof Error ? error.message : String(error) };
  if (json) console.log(JSON.stringify({ error: details }));
  else {
    const where = details.jobId ? ` (job ${details.jobId})` : '';
    console.error(`mediaproof: ${details.code ? `${details.code}: ` : ''}${details.message}${where}`);
    if (error instanceof JobFailedError && error.job.errorMessage && !details.message.includes(error.job.errorMessage)) console.error(`  ${error.job.errorMessage}`);
  }
  return exitCode;
}

export const percent = (value: unknown) => (typeof value === 'number' ? `${(value * 100).toFixed(1)}%` : '–');

const FLAGS = ['isAiGenerated', 'isDeepFake', 'isForged', 'isSpoof'] as const;

export function verdictFlag(result: DetectionResult | PayloadResult | undefined): string {
  if (!result) return '';
  const flag = FLAGS.find((name) => typeof result[name] === 'boolean');
  return flag ? `${flag}=${String(result[flag])}` : '';
}

export function table(head: string[]): Table.Table {
  return new Table({ head, style: { head: process.stdout.isTTY ? ['bold'] : [], border: process.stdout.isTTY ? ['grey'] : [] } });
}

/** The strongest signals of a result, as lines for a human. */
export function signalLines(result: DetectionResult | PayloadResult | undefined, count = 3): string[] {
  const signals = result?.analysisDetails?.signals ?? [];
  return [...signals]
    .filter((s) => typeof s.score === 'number')
    .sort((a, b) => (b.weight ?? 0) * (b.score ?? 0) - (a.weight ?? 0) * (a.score ?? 0))
    .slice(0, count)
    .map((s) => `${s.label ?? s.id}: ${percent(s.score)}`);
}

export function jobRows(job: Job): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['Job', job.jobId],
    ['Task type', `${job.taskTypeSlug} (${job.taskTypeId})`],
    ['Status', job.status],
    ['Created', job.createdAt],
    ['Updated', job.updatedAt],
  ];
  if (job.completedAt) rows.push(['Completed', job.completedAt]);
  rows.push(['Cost', String(job.cost)]);
  for (const input of job.inputs) rows.push([`Input ${input.slotName}`, `${input.fileName} (${input.contentType}, ${input.sizeBytes} bytes)`]);
  if (job.result) {
    rows.push(['Verdict', String(job.result.verdict ?? '–')]);
    rows.push(['Score', percent(job.result.score)]);
    rows.push(['Confidence', percent(job.result.confidence)]);
    const flag = verdictFlag(job.result);
    if (flag) rows.push(['Flag', flag]);
    const signals = signalLines(job.result);
    if (signals.length) rows.push(['Top signals', signals.join('\n')]);
  }
  if (job.errorMessage) rows.push(['Error', job.errorMessage]);
  for (const artifact of job.artifacts ?? []) rows.push([`Artifact ${artifact.kind}`, artifact.downloadUrl]);
  return rows;
}
