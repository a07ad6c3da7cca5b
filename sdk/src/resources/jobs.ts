/** The job API (SPEC.md §4.1–4.7): create, upload, finalize, retrieve, list, cancel, delete, waitFor. */
import type { Mediaproof, RequestOptions } from '../client.js';
import { sleep } from '../internal.js';
import { MediaproofError, WaitTimeoutError } from '../errors.js';
import { Page, PagePromise } from '../pagination.js';
import { resolveFile, type Uploadable } from '../uploadable.js';
import {
  TERMINAL_STATUSES,
  type CancelledJob, type CreatedInputSlot, type CreatedJob, type FinalizedJob, type InputDeclaration, type Job,
  type JobListParams, type JobListResponse, type JobStatus, type JobSummary, type TaskTypeSlug,
} from '../types.js';

export interface JobCreateParams {
  /** Task type: id (1–11) or slug (`ai-image-detection`, …). */
  taskType: number | TaskTypeSlug | (string & {});
  inputs: InputDeclaration[];
  parameters?: Record<string, unknown>;
}

export interface UploadOptions extends RequestOptions {
  /** Overrides the content type found from the name or bytes (must equal the declared one). */
  contentType?: string;
  /** Called as bytes leave (Node), or once at the start and end (browsers). */
  onProgress?: (progress: { sentBytes: number; totalBytes: number }) => void;
}

export interface WaitForOptions {
  signal?: AbortSignal;
  /** First delay between polls, ms (default 250); it grows by 1.5× up to maxIntervalMs. */
  intervalMs?: number;
  /** Longest delay between polls, ms (default 5 000). */
  maxIntervalMs?: number;
  /** Give up after this many ms with WaitTimeoutError (default: no limit). */
  timeoutMs?: number;
  /** Called on every poll with the job as it is. */
  onPoll?: (job: Job) => void;
}

const KNOWN_STATUSES = new Set<string>(['waiting_for_finalize', 'queued', 'processing', 'completed', 'failed', 'cancelled']);

export class Jobs {
  constructor(private readonly client: Mediaproof) {}

  /** Declares a job and its files; answers with one pre-signed upload URL per input. No credits are taken. */
  async create(params: JobCreateParams, options?: RequestOptions): Promise<CreatedJob> {
    const taskTypeId = typeof params.taskType === 'number' || /^\d+$/.test(params.taskType)
      ? Number(params.taskType)
      : (await this.client.taskTypes.retrieve(params.taskType, options)).id;
    return this.client.request<CreatedJob>({
      ...options,
      method: 'POST',
      path: '/api/v1/jobs',
      query: { taskTypeId },
      body: { inputs: params.inputs, ...(params.parameters ? { parameters: params.parameters } : {}) },
    });
  }

  /**
   * PUTs one file to its pre-signed URL (an input slot of `create`'s answer, or the URL).
   * `data` is a path (Node), bytes or a Blob; its size must equal the declared sizeBytes.
   */
  async upload(target: CreatedInputSlot | string, data: Uploadable, options: UploadOptions = {}): Promise<void> {
    const url = typeof target === 'string' ? target : target.uploadUrl;
    const file = await resolveFile(data, { contentType: options.contentType ?? (typeof target === 'string' ? undefined : target.contentType) });
    if (typeof target !== 'string' && file.sizeBytes !== target.sizeBytes) {
      throw new MediaproofError(`The file is ${file.sizeBytes} bytes but slot "${target.slotName}" declared ${target.sizeBytes}`, { code: 'UPLOAD_SIZE_MISMATCH' });
    }
    const report = (sentBytes: number) => options.onProgress?.({ sentBytes, totalBytes: file.sizeBytes });
    report(0);
    await this.client.request<unknown>({
      ...options,
      method: 'PUT',
      path: url,
      auth: 'none',
      headers: { ...options.headers, 'content-type': file.contentType, 'content-length': String(file.sizeBytes) },
      rawBody: () => file.open(report),
    });
    report(file.sizeBytes);
  }

  /** Queues an uploaded job for processing; its credits are reserved now. */
  finalize(jobId: string, options?: RequestOptions): Promise<FinalizedJob> {
    return this.client.request({ ...options, method: 'POST', path: `/api/v1/jobs/${encodeURIComponent(jobId)}/finalize`, jobId });
  }

  retrieve(jobId: string, options?: RequestOptions): Promise<Job> {
    return this.client.request({ ...options, method: 'GET', path: `/api/v1/jobs/${encodeURIComponent(jobId)}`, jobId });
  }

  /** One page of the tenant's jobs; `for await (const job of client.jobs.list())` walks all of them. */
  list(params: JobListParams = {}, options?: RequestOptions): PagePromise<JobSummary> {
    const fetchPage = async (page: number): Promise<Page<JobSummary>> => {
      const response = await this.client.request<JobListResponse>({
        ...options,
        method: 'GET',
        path: '/api/v1/jobs',
        query: { page, limit: params.limit, status: params.status, taskTypeId: params.taskTypeId },
      });
      return new Page(response.data, response.pagination, fetchPage);
    };
    return new PagePromise(() => fetchPage(params.page ?? 1));
  }

  /** Cancels a job that has not started processing (JobNotCancellableError otherwise). */
  cancel(jobId: string, options?: RequestOptions): Promise<CancelledJob> {
    return this.client.request({ ...options, method: 'POST', path: `/api/v1/jobs/${encodeURIComponent(jobId)}/cancel`, jobId });
  }

  /** Deletes a job and its media; needs the jobs:delete permission (JobProcessingError while processing). */
  async delete(jobId: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ ...options, method: 'DELETE', path: `/api/v1/jobs/${encodeURIComponent(jobId)}`, jobId });
  }

  /**
   * Polls until the job is completed, failed or cancelled and returns it (it does not throw
   * on failed). Backs off from intervalMs to maxIntervalMs; a status this SDK does not know
   * is treated as "not yet" and slept on at the longest interval, never spun on.
   */
  async waitFor(jobId: string, options: WaitForOptions = {}): Promise<Job> {
    const maxInterval = options.maxIntervalMs ?? 5_000;
    let interval = Math.min(options.intervalMs ?? 250, maxInterval);
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (;;) {
      const job = await this.retrieve(jobId, { signal: options.signal });
      options.onPoll?.(job);
      if (TERMINAL_STATUSES.includes(job.status)) return job;
      if (job.status === 'waiting_for_finalize') {
        throw new MediaproofError(`Job ${jobId} is waiting for finalize: it will never finish on its own`, { code: 'JOB_NOT_FINALIZED', jobId });
      }
      const delay = KNOWN_STATUSES.has(job.status as JobStatus) ? interval : maxInterval;
      if (Date.now() + delay > deadline) {
        throw new WaitTimeoutError(`Job ${jobId} still ${job.status} after ${options.timeoutMs} ms`, jobId, job.status);
      }
      await sleep(delay, options.signal);
      interval = Math.min(interval * 1.5, maxInterval);
    }
  }
}
