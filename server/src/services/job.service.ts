/**
 * The job lifecycle of SPEC.md §3.2: create (upload URLs, no credits), finalize (uploads
 * verified, credits reserved, job queued), read, list, cancel and delete. Processing itself
 * lives in queue/.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import type { JobArtifactTable, JobInputTable, JobStatus } from '../db/schema.js';
import { FORMATS, TASK_TYPES, formatForMime, taskTypeById, taskTypeByModelCode, type TaskType } from '../detectors/catalogue.js';
import { AppError, jobNotFound } from '../errors.js';
import { isoAt, SYSTEM_SOURCES, type Sources } from '../repositories/clock.js';
import type { JobRow, JobWithFiles } from '../repositories/job.repository.js';
import type { Repositories, RunInTransaction } from '../repositories/index.js';
import { objectKeys, type ObjectStore } from '../repositories/object-store.js';
import { captureCredits, releaseCredits, reserveCredits } from './credit.service.js';
import { artifactRowView, inputView, jobDetail, jobSummary, type ArtifactView } from './job-views.js';
import type { DownloadUrls } from './download-urls.js';
import { GENERIC_MIME_TYPES, SNIFF_BYTES, sniffFormat, sniffMatches } from './media-format.js';
import { jobCost, taskSettings } from './task-settings.js';
import { enqueueWebhook, validateWebhookUrl } from './webhook.service.js';

export interface InputDeclaration {
  contentType: string;
  fileName: string;
  sizeBytes: number;
  slotName: string;
}

export interface CreateJobRequest {
  taskTypeId: unknown;
  inputs: InputDeclaration[];
  parameters?: Record<string, unknown>;
  /** Where to POST the job's terminal status (DESIGN beyond the spec: webhooks). */
  webhookUrl?: string;
}

export interface JobServiceDeps {
  repos: Pick<Repositories, 'jobs' | 'webhooks'>;
  transaction: RunInTransaction;
  store: ObjectStore;
  downloadUrls: DownloadUrls;
  config: Pick<Config, 'taskOverrides' | 'uploadUrlTtlSeconds' | 'webhookAllowPrivate'>;
  /** Called once a job is queued: wakes workers (in-process, or NOTIFY on PostgreSQL), counts credits. */
  onJobQueued: (cost: number) => void;
  /** The clock and id source (the system's unless a test gives its own). */
  sources?: Sources;
}

export const JOB_STATUSES: readonly JobStatus[] = ['waiting_for_finalize', 'queued', 'processing', 'completed', 'failed', 'cancelled'];

/** Task type ids arrive as numbers, or as numeric strings in the body (SPEC.md §4.1). */
export function resolveTaskType(raw: unknown): TaskType {
  if (raw === undefined || raw === null || raw === '') {
    throw new AppError('INVALID_TASK_TYPE', 'taskTypeId is required, as a query parameter or in the body');
  }
  const id = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  // Authenta's SDKs name task types by model code (AC-1 … ED-1): those are read too.
  const taskType = Number.isInteger(id) ? taskTypeById(id) : typeof raw === 'string' ? taskTypeByModelCode(raw.trim()) : undefined;
  if (!taskType) throw new AppError('INVALID_TASK_TYPE', `Task type ${JSON.stringify(raw)} does not exist; valid ids are ${TASK_TYPES.map((t) => t.id).join(', ')}`);
  // Refused before anything is created or charged: the worker could only fail it.
  if (!taskType.detector) throw new AppError('TASK_TYPE_UNAVAILABLE', `Task type ${taskType.id} (${taskType.slug}) has no detector in this version of mediaproof`);
  return taskType;
}

/** Task parameters are small option objects: bounded so a hostile one cannot weigh on every read. */
const MAX_PARAMETERS_DEPTH = 8;
const MAX_PARAMETERS_BYTES = 16 * 1024;

function checkedParameters(parameters: Record<string, unknown> | undefined): string {
  const depthOf = (value: unknown, depth: number): number =>
    value !== null && typeof value === 'object' ? Math.max(depth, ...Object.values(value).map((child) => depthOf(child, depth + 1))) : depth - 1;
  // The request's nesting is already bounded at the edge (app.ts), so this recursion is too.
  if (parameters && depthOf(parameters, 1) > MAX_PARAMETERS_DEPTH) throw new AppError('VALIDATION_ERROR', `parameters may nest at most ${MAX_PARAMETERS_DEPTH} levels deep`);
  const json = JSON.stringify(parameters ?? {});
  if (Buffer.byteLength(json) > MAX_PARAMETERS_BYTES) throw new AppError('VALIDATION_ERROR', `parameters may be at most ${MAX_PARAMETERS_BYTES} bytes of JSON`);
  return json;
}

export class JobService {
  private readonly sources: Sources;

  constructor(private readonly deps: JobServiceDeps) {
    this.sources = deps.sources ?? SYSTEM_SOURCES;
  }

  private now(): string {
    return isoAt(this.sources.clock.now());
  }

  /**
   * Creates a job waiting for its uploads. With `reserveCredits` (the media-record API) the
   * cost is reserved at once, and INSUFFICIENT_BALANCE leaves no job behind.
   */
  async create(tenantId: string, request: CreateJobRequest, options: { reserveCredits?: boolean } = {}) {
    const taskType = resolveTaskType(request.taskTypeId);
    const settings = taskSettings(this.deps.config, taskType);
    this.validateInputs(taskType, request.inputs, settings.maxFileBytes);
    const parameters = checkedParameters(request.parameters);
    const webhookUrl = request.webhookUrl ? validateWebhookUrl(request.webhookUrl, this.deps.config.webhookAllowPrivate) : null;

    const jobId = this.sources.ids();
    const now = this.now();
    const expiresAt = new Date(this.sources.clock.now() + this.deps.config.uploadUrlTtlSeconds * 1000);
    const totalBytes = request.inputs.reduce((sum, input) => sum + input.sizeBytes, 0);
    const cost = jobCost(settings, totalBytes);
    const inputs: JobInputTable[] = request.inputs.map((input, position) => ({
      job_id: jobId,
      slot_name: input.slotName,
      position,
      file_name: input.fileName,
      content_type: input.contentType,
      size_bytes: input.sizeBytes,
      object_key: objectKeys.input(jobId, position),
      upload_nonce: randomBytes(12).toString('base64url'),
      uploaded_at: null,
      uploaded_size: null,
    }));
    const job: JobRow = {
      id: jobId,
      tenant_id: tenantId,
      task_type_id: taskType.id,
      status: 'waiting_for_finalize',
      cost,
      credit_state: 'none',
      parameters,
      result: null,
      error_message: null,
      attempts: 0,
      locked_by: null,
      lease_expires_at: null,
      run_after: null,
      created_at: now,
      updated_at: now,
      queued_at: null,
      started_at: null,
      completed_at: null,
      webhook_url: webhookUrl,
    };
    await this.deps.transaction(async (repos) => {
      await repos.jobs.insert(job, inputs);
      if (options.reserveCredits) await reserveCredits(repos, job);
    });

    const responseInputs = await Promise.all(
      inputs.map(async (input) => ({
        ...inputView(input),
        uploadUrl: await this.deps.store.uploadUrl({
          key: input.object_key,
          jobId,
          slotName: input.slot_name,
          contentType: input.content_type,
          sizeBytes: input.size_bytes,
          nonce: input.upload_nonce,
          expiresAt,
        }),
        uploadUrlExpiresAt: expiresAt.toISOString(),
      })),
    );
    return {
      ...jobSummary(job),
      inputs: responseInputs,
      job: { id: jobId, tenantId, taskTypeId: taskType.id, status: job.status, cost, createdAt: now, updatedAt: now },
    };
  }

  private validateInputs(taskType: TaskType, inputs: InputDeclaration[], maxFileBytes: number): void {
    if (!inputs.length) throw new AppError('VALIDATION_ERROR', 'inputs must declare at least one file');
    const seen = new Set<string>();
    for (const input of inputs) {
      const slot = taskType.slots.find((s) => s.name === input.slotName);
      if (!slot) {
        const names = taskType.slots.map((s) => s.name).join(', ');
        throw new AppError('VALIDATION_ERROR', `Slot "${input.slotName}" is not used by ${taskType.slug}; its slots are: ${names}`);
      }
      if (seen.has(input.slotName)) throw new AppError('VALIDATION_ERROR', `Slot "${input.slotName}" is declared twice`);
      seen.add(input.slotName);
      // A generic declared type is checked against the bytes at finalize instead.
      const generic = GENERIC_MIME_TYPES.includes(input.contentType.toLowerCase());
      const format = formatForMime(input.contentType);
      if (!generic && (!format || !slot.formats.includes(format))) {
        // A browser's MediaRecorder names its blobs so ("audio/webm;codecs=opus"): say which bare type to declare.
        const essence = input.contentType.split(';')[0]!.trim();
        const essenceFormat = essence !== input.contentType ? formatForMime(essence) : undefined;
        if (essenceFormat && slot.formats.includes(essenceFormat)) {
          throw new AppError('UNSUPPORTED_MEDIA_TYPE', `${input.contentType} carries parameters; declare the media type alone, "${essence}", and upload with that Content-Type`);
        }
        const accepted = slot.formats.map((f) => FORMATS[f].label).join(', ');
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', `${input.contentType} is not supported by ${taskType.slug} in slot "${slot.name}"; supported: ${accepted}`);
      }
      if (input.sizeBytes > maxFileBytes) {
        throw new AppError('FILE_TOO_LARGE', `${input.fileName} is ${input.sizeBytes} bytes; ${taskType.slug} accepts at most ${maxFileBytes}`);
      }
    }
    for (const slot of taskType.slots) {
      if (slot.required && !seen.has(slot.name)) throw new AppError('VALIDATION_ERROR', `Slot "${slot.name}" is required for ${taskType.slug}`);
    }
  }

  async finalize(tenantId: string, jobId: string) {
    // SPEC.md §4.3 lists 400, not 404, for a job that does not exist on finalize.
    const job = await this.deps.repos.jobs.find(tenantId, jobId);
    if (!job) throw jobNotFound(jobId, 400);
    const notWaiting = (status: string) =>
      new AppError('JOB_ALREADY_FINALIZED', `Job ${jobId} is ${status}; only a job waiting_for_finalize can be finalized`);
    if (job.status !== 'waiting_for_finalize') throw notWaiting(job.status);
    await this.verifyUploads(job);

    const now = this.now();
    const moved = await this.deps.transaction(async (repos) => {
      if (!(await repos.jobs.transition(jobId, 'finalize', { queued_at: now, updated_at: now }))) return false;
      await reserveCredits(repos, job);
      return true;
    });
    if (!moved) {
      // Another request got there first: say what it did (finalized, cancelled or deleted).
      const current = await this.deps.repos.jobs.find(tenantId, jobId);
      throw current ? notWaiting(current.status) : jobNotFound(jobId, 400);
    }
    this.deps.onJobQueued(job.cost);
    const current = await this.deps.repos.jobs.findById(jobId);
    return {
      jobId,
      id: jobId,
      taskTypeId: job.task_type_id,
      // A fast worker may already have it (SPEC.md §4.3).
      status: current?.status === 'processing' ? ('processing' as const) : ('queued' as const),
      queuedAt: now,
      updatedAt: current?.updated_at ?? now,
      message: 'Job finalized and queued for processing',
    };
  }

  private async verifyUploads(job: JobRow): Promise<void> {
    const inputs = await this.deps.repos.jobs.inputs(job.id);
    const missing: string[] = [];
    for (const input of inputs) {
      // The object store is the truth (with S3 the upload never passes through the API).
      const storedSize = input.uploaded_size ?? (this.deps.store.uploadsBypassApi ? await this.deps.store.size(input.object_key) : null);
      if (storedSize === null) missing.push(`"${input.slot_name}" has not been uploaded`);
      else if (storedSize !== input.size_bytes) missing.push(`"${input.slot_name}" is ${storedSize} bytes, declared ${input.size_bytes}`);
    }
    if (missing.length) throw new AppError('UPLOAD_INCOMPLETE', `Cannot finalize job ${job.id}: ${missing.join('; ')}`);
    const taskType = taskTypeById(job.task_type_id)!;
    for (const input of inputs) {
      const head = await this.deps.store.head(input.object_key, SNIFF_BYTES);
      if (GENERIC_MIME_TYPES.includes(input.content_type.toLowerCase())) {
        // Declared as just bytes (the React Native SDK sends PDFs so): the bytes decide, and the
        // detector is told what they are.
        const slotFormats = taskType.slots.find((slot) => slot.name === input.slot_name)?.formats ?? taskType.formats;
        const sniffed = await sniffFormat(head, slotFormats);
        if (!sniffed.format) {
          const accepted = slotFormats.map((f) => FORMATS[f].label).join(', ');
          throw new AppError('UNSUPPORTED_MEDIA_TYPE', `The file in slot "${input.slot_name}" is ${sniffed.detected}; ${taskType.slug} takes ${accepted}`);
        }
        await this.deps.repos.jobs.setInputContentType(job.id, input.slot_name, FORMATS[sniffed.format].mimeTypes[0]!);
        continue;
      }
      const declared = formatForMime(input.content_type);
      if (!declared) throw new AppError('UNSUPPORTED_MEDIA_TYPE', `The file in slot "${input.slot_name}" was declared with an unusable media type`);
      const sniff = await sniffMatches(head, declared);
      if (!sniff.matches) {
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', `The file in slot "${input.slot_name}" was declared ${input.content_type} but its bytes are ${sniff.detected}`);
      }
    }
  }

  async get(tenantId: string, jobId: string) {
    const found = await this.deps.repos.jobs.findWithFiles(tenantId, jobId);
    if (!found) throw jobNotFound(jobId);
    return jobDetail(found.job, found.inputs, await this.artifactViews(found));
  }

  private async artifactViews({ job, inputs, artifacts }: JobWithFiles): Promise<ArtifactView[]> {
    const expiresAt = this.deps.downloadUrls.expiresAt();
    const views: ArtifactView[] = [];
    for (const input of inputs) {
      if (input.uploaded_size === null && job.status === 'waiting_for_finalize') continue;
      views.push({
        id: `input-${input.position}`,
        kind: 'input',
        slotName: input.slot_name,
        contentType: input.content_type,
        sizeBytes: input.size_bytes,
        downloadUrl: await this.deps.downloadUrls.url(input.object_key, input.content_type, expiresAt),
        createdAt: input.uploaded_at ?? job.created_at,
      });
    }
    for (const row of artifacts) views.push(artifactRowView(row, await this.deps.downloadUrls.url(row.object_key, row.content_type, expiresAt)));
    return views;
  }

  /** The delivery log of a job's webhooks. */
  async webhookDeliveries(tenantId: string, jobId: string) {
    if (!(await this.deps.repos.jobs.find(tenantId, jobId))) throw jobNotFound(jobId);
    const rows = await this.deps.repos.webhooks.forJob(tenantId, jobId);
    return {
      data: rows.map((row) => ({
        id: row.id,
        event: row.event,
        url: row.url,
        status: row.status,
        attempts: row.attempts,
        lastStatusCode: row.last_status_code,
        lastError: row.last_error,
        nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
        createdAt: row.created_at,
        deliveredAt: row.delivered_at,
      })),
    };
  }

  async list(tenantId: string, query: { page?: number; limit?: number; pageSize?: number; status?: JobStatus; taskTypeId?: number }) {
    const page = query.page ?? 1;
    // SPEC.md §4.4: default 10, maximum 100; a larger request is served at the maximum.
    const limit = Math.min(query.limit ?? query.pageSize ?? 10, 100);
    const { rows, total } = await this.deps.repos.jobs.page(tenantId, { status: query.status, taskTypeId: query.taskTypeId, offset: (page - 1) * limit, limit });
    const data = rows.map(jobSummary);
    // The spec's `data` and `pagination` first; Authenta's SDKs read `items`, `total`, `page`, `pageSize`.
    return { data, pagination: { page, limit, total, pages: Math.ceil(total / limit) }, items: data, total, page, pageSize: limit };
  }

  /**
   * Ends a job the worker holds with its result: status, result, artifact rows, the webhook and
   * the credit capture in one transaction. False when the job was taken from this worker.
   */
  async complete(job: JobRow, workerId: string, result: Record<string, unknown>, artifacts: JobArtifactTable[]): Promise<boolean> {
    const now = this.now();
    return this.deps.transaction(async (repos) => {
      if (!(await repos.jobs.finish(job.id, workerId, 'complete', { result: JSON.stringify(result), error_message: null, completed_at: now, updated_at: now }))) return false;
      await enqueueWebhook(repos, job, 'completed', { result }, this.sources);
      await repos.jobs.insertArtifacts(artifacts);
      await captureCredits(repos, job);
      return true;
    });
  }

  /** Ends a job the worker holds as failed: credits released, the webhook queued. False when it was taken from this worker. */
  async fail(job: JobRow, workerId: string, message: string, kind: string): Promise<boolean> {
    const now = this.now();
    return this.deps.transaction(async (repos) => {
      if (!(await repos.jobs.finish(job.id, workerId, 'fail', { error_message: message, completed_at: null, updated_at: now }))) return false;
      await releaseCredits(repos, job, `failed: ${kind}`);
      await enqueueWebhook(repos, job, 'failed', { errorMessage: message }, this.sources);
      return true;
    });
  }

  async cancel(tenantId: string, jobId: string) {
    const now = this.now();
    const outcome = await this.deps.transaction(async (repos) => {
      const job = await repos.jobs.find(tenantId, jobId);
      if (!job) throw jobNotFound(jobId);
      const moved = await repos.jobs.transition(jobId, 'cancel', { updated_at: now });
      if (moved) {
        await releaseCredits(repos, job, 'cancelled');
        await enqueueWebhook(repos, job, 'cancelled', {}, this.sources);
        return job;
      }
      const current = (await repos.jobs.find(tenantId, jobId))!;
      if (current.status === 'processing' || current.status === 'completed') {
        throw new AppError('JOB_NOT_CANCELLABLE', `Job ${jobId} is ${current.status} and can no longer be cancelled`, 409);
      }
      throw new AppError('JOB_NOT_CANCELLABLE', `Job ${jobId} is already ${current.status}`, 422);
    });
    return {
      jobId,
      id: jobId,
      taskTypeId: outcome.task_type_id,
      status: 'cancelled' as const,
      updatedAt: now,
      message: 'Job cancelled; no credits were consumed',
    };
  }

  async delete(tenantId: string, jobId: string): Promise<void> {
    await this.deps.transaction(async (repos) => {
      const job = await repos.jobs.find(tenantId, jobId);
      if (!job) throw jobNotFound(jobId);
      if (job.status === 'processing') throw new AppError('JOB_PROCESSING', `Job ${jobId} is processing; delete it once it has ended`);
      await releaseCredits(repos, job, 'deleted');
      // Inputs and artifacts go with the job (ON DELETE CASCADE).
      if (!(await repos.jobs.deleteUnlessProcessing(jobId))) {
        throw new AppError('JOB_PROCESSING', `Job ${jobId} started processing; delete it once it has ended`);
      }
    });
    await this.deps.store.deletePrefix(objectKeys.jobPrefix(jobId));
  }
}
