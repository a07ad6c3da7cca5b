/** `mediaproof jobs list|get|cancel|delete|wait` and `mediaproof task-types`, through the SDK. */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Job, JobStatus, JobSummary } from '@mediaproof/sdk';
import { clientFromEnvironment } from './credentials.js';
import { jobRows, reportError, table } from './output.js';

const STATUSES: JobStatus[] = ['waiting_for_finalize', 'queued', 'processing', 'completed', 'failed', 'cancelled'];

const positiveInteger = (name: string, max = Number.MAX_SAFE_INTEGER) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`${name} must be an integer from 1 to ${max}`);
  return n;
};

/** Runs a command body, turning errors into the documented exit codes. */
const run = <A extends unknown[]>(body: (...args: A) => Promise<void>) => async (...args: A) => {
  const options = args.find((a): a is { json?: boolean } => typeof a === 'object' && a !== null && !Array.isArray(a) && 'json' in a);
  try {
    await body(...args);
  } catch (error) {
    process.exitCode = reportError(error, options?.json);
  }
};

const jsonOption = () => new Option('--json', 'print one JSON object').default(false);

function printJob(job: Job): void {
  const detail = table(['Field', 'Value']);
  for (const row of jobRows(job)) detail.push(row);
  console.log(detail.toString());
}

export function registerJobCommands(program: Command): void {
  const jobs = program.command('jobs').description('list, inspect, cancel and delete jobs of the job API (MEDIAPROOF_URL, MEDIAPROOF_API_KEY)');

  jobs
    .command('list')
    .description('list your jobs, newest first')
    .addOption(new Option('--status <status>', 'only jobs in this status').choices(STATUSES))
    .option('--limit <n>', 'jobs per page (at most 100)', positiveInteger('--limit', 100), 20)
    .option('--page <n>', 'page number', positiveInteger('--page'), 1)
    .option('--all', 'every page, not just one')
    .addOption(jsonOption())
    .action(run(async (options: { status?: JobStatus; limit: number; page: number; all?: boolean; json: boolean }) => {
      const client = clientFromEnvironment();
      const listing = client.jobs.list({ status: options.status, limit: options.limit, page: options.page });
      const page = await listing;
      let rows: JobSummary[] = page.data;
      if (options.all) {
        rows = [];
        for await (const job of listing) rows.push(job);
      }
      if (options.json) {
        console.log(JSON.stringify({ data: rows, pagination: options.all ? { ...page.pagination, page: 1, pages: page.pagination.pages } : page.pagination }));
        return;
      }
      if (rows.length === 0) {
        console.log(options.status ? `no ${options.status} jobs` : 'no jobs');
        return;
      }
      const list = table(['Job', 'Task', 'Status', 'Created', 'Updated']);
      for (const job of rows) list.push([job.jobId, String(job.taskTypeId), job.status, job.createdAt, job.updatedAt]);
      console.log(list.toString());
      if (!options.all) console.log(`page ${page.pagination.page} of ${page.pagination.pages} (${page.pagination.total} jobs)${page.hasNextPage() ? `; next: --page ${page.pagination.page + 1}` : ''}`);
    }));

  jobs
    .command('get')
    .description('show one job: status, inputs, verdict, signals, artifacts')
    .argument('<jobId>')
    .addOption(jsonOption())
    .action(run(async (jobId: string, options: { json: boolean }) => {
      const job = await clientFromEnvironment().jobs.retrieve(jobId);
      if (options.json) console.log(JSON.stringify(job));
      else printJob(job);
    }));

  jobs
    .command('wait')
    .description('wait until a job is completed, failed or cancelled, then show it')
    .argument('<jobId>')
    .option('--timeout <seconds>', 'give up after this long', positiveInteger('--timeout'))
    .addOption(jsonOption())
    .action(run(async (jobId: string, options: { json: boolean; timeout?: number }) => {
      const job = await clientFromEnvironment().jobs.waitFor(jobId, { timeoutMs: options.timeout ? options.timeout * 1000 : undefined });
      if (options.json) console.log(JSON.stringify(job));
      else printJob(job);
      if (job.status !== 'completed') process.exitCode = 3;
    }));

  jobs
    .command('cancel')
    .description('cancel a job that has not started processing')
    .argument('<jobId>')
    .addOption(jsonOption())
    .action(run(async (jobId: string, options: { json: boolean }) => {
      const cancelled = await clientFromEnvironment().jobs.cancel(jobId);
      console.log(options.json ? JSON.stringify(cancelled) : `${cancelled.jobId}: ${cancelled.status} (${cancelled.message})`);
    }));

  jobs
    .command('delete')
    .description('delete a job and its media (needs the jobs:delete permission)')
    .argument('<jobId>')
    .addOption(jsonOption())
    .action(run(async (jobId: string, options: { json: boolean }) => {
      await clientFromEnvironment().jobs.delete(jobId);
      console.log(options.json ? JSON.stringify({ jobId, deleted: true }) : `${jobId}: deleted`);
    }));

  program
    .command('task-types')
    .description('list the task types of the service and whether each has a detector')
    .addOption(jsonOption())
    .action(run(async (options: { json: boolean }) => {
      const types = await clientFromEnvironment().taskTypes.list();
      if (options.json) {
        console.log(JSON.stringify({ data: types }));
        return;
      }
      const list = table(['Id', 'Slug', 'Formats', 'Slots', 'Available', 'Price']);
      for (const t of types) {
        list.push([String(t.id), t.slug, t.formats.join(', '), t.slots.map((s) => (s.required ? s.name : `[${s.name}]`)).join(' '), t.available ? 'yes' : 'no', `${t.price.base} + ${t.price.perMiB}/MiB`]);
      }
      console.log(list.toString());
    }));
}
