/**
 * analyze(): the common case in one call. Declares the job, uploads every file with
 * progress, finalizes it and waits for the result, then returns the completed job with
 * the result typed for its task type.
 */
import type { Mediaproof } from './client.js';
import { APIUserAbortError, JobFailedError } from './errors.js';
import { fitContentType, resolveFile, type ResolvedFile, type Uploadable } from './uploadable.js';
import type { CompletedJob, Job, JobStatus, ResultFor, TaskTypeSlug } from './types.js';

export type AnalyzeInput = Uploadable;

export type AnalyzeProgress =
  | { phase: 'creating' }
  | { phase: 'uploading'; jobId: string; slotName: string; fileName: string; sentBytes: number; totalBytes: number }
  | { phase: 'finalizing'; jobId: string }
  | { phase: 'waiting'; jobId: string; status: JobStatus }
  | { phase: 'done'; jobId: string; status: JobStatus };

export interface AnalyzeOptions {
  /** Task type: slug (`ai-image-detection`) or id. */
  taskType: TaskTypeSlug | number | (string & {});
  /** Further files by slot name, e.g. `{ reference: './id-photo.jpg' }`. */
  slots?: Record<string, Uploadable>;
  /** Task-specific options passed as the job's `parameters`. */
  parameters?: Record<string, unknown>;
  /** Name and content type of the main file, when they cannot be found from the input. */
  fileName?: string;
  contentType?: string;
  onProgress?: (progress: AnalyzeProgress) => void;
  /** Aborts uploads and polling; a created job is then cancelled on a best-effort basis. */
  signal?: AbortSignal;
  /** Give up waiting for the result after this many ms (default: the task type's timeout plus a minute). */
  timeoutMs?: number;
  /** Poll interval bounds for waitFor, ms. */
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
}

export async function analyze<T extends TaskTypeSlug | number | (string & {})>(
  client: Mediaproof,
  input: AnalyzeInput,
  options: AnalyzeOptions & { taskType: T },
): Promise<CompletedJob<ResultFor<T>>> {
  const { signal, onProgress } = options;
  const taskType = await client.taskTypes.retrieve(options.taskType, { signal });
  const files: Array<[string, ResolvedFile]> = [['original', await resolveFile(input, { fileName: options.fileName, contentType: options.contentType })]];
  for (const [slotName, data] of Object.entries(options.slots ?? {})) files.push([slotName, await resolveFile(data)]);
  // A type the SDK found (not one the caller named) is fitted to what the slot takes.
  for (const entry of files) {
    const [slotName, file] = entry;
    const accepted = taskType.slots.find((slot) => slot.name === slotName)?.mimeTypes;
    if (accepted && !(slotName === 'original' && options.contentType)) entry[1] = { ...file, contentType: fitContentType(file.contentType, accepted) };
  }

  onProgress?.({ phase: 'creating' });
  const created = await client.jobs.create(
    {
      taskType: taskType.id,
      inputs: files.map(([slotName, file]) => ({ slotName, fileName: file.fileName, sizeBytes: file.sizeBytes, contentType: file.contentType })),
      parameters: options.parameters,
    },
    { signal },
  );
  const jobId = created.jobId;
  try {
    for (const slot of created.inputs) {
      const file = files.find(([name]) => name === slot.slotName)![1];
      const report = (sentBytes: number) =>
        onProgress?.({ phase: 'uploading', jobId, slotName: slot.slotName, fileName: file.fileName, sentBytes, totalBytes: file.sizeBytes });
      await client.request({
        method: 'PUT',
        path: slot.uploadUrl,
        auth: 'none',
        signal,
        jobId,
        headers: { 'content-type': slot.contentType, 'content-length': String(file.sizeBytes) },
        rawBody: () => {
          report(0);
          return file.open(report);
        },
      });
      report(file.sizeBytes);
    }
    onProgress?.({ phase: 'finalizing', jobId });
    await client.jobs.finalize(jobId, { signal });
    let last: JobStatus | undefined;
    const job: Job = await client.jobs.waitFor(jobId, {
      signal,
      intervalMs: options.pollIntervalMs,
      maxIntervalMs: options.maxPollIntervalMs,
      timeoutMs: options.timeoutMs ?? (taskType.timeoutSeconds + 60) * 1000,
      onPoll: (polled) => {
        if (polled.status !== last && !['completed', 'failed', 'cancelled'].includes(polled.status)) {
          onProgress?.({ phase: 'waiting', jobId, status: polled.status });
        }
        last = polled.status;
      },
    });
    onProgress?.({ phase: 'done', jobId, status: job.status });
    if (job.status !== 'completed' || !job.result) {
      const reason = job.errorMessage ?? (job.status === 'cancelled' ? 'the job was cancelled' : 'no reason given');
      throw new JobFailedError(`Job ${jobId} (${taskType.slug}) ended ${job.status}: ${reason}`, job);
    }
    return job as CompletedJob<ResultFor<T>>;
  } catch (error) {
    // An aborted analysis should not leave a job behind that still costs credits.
    // (Cancel works before processing starts; a job already processing runs to its end.)
    if (error instanceof APIUserAbortError) await client.jobs.cancel(jobId).catch(() => undefined);
    throw error;
  }
}
