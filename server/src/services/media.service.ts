/**
 * The media-record API (SPEC.md §2.7, §3.3, §4.8): an older interface over the same
 * tenants, credits, storage and queue. A record owns one ordinary job; its status is derived
 * from that job, so the two can never disagree:
 *   job waiting_for_finalize → INITED, queued/processing → UPLOADED, completed → PROCESSED,
 *   failed/cancelled (or an upload that never came) → FAILED.
 * Credits are reserved when the record is created (U007 then), and released if no file
 * arrives before the upload URL expires.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.js';
import type { MediaKind, MediaRecordTable } from '../db/schema.js';
import { MODEL_CODES, taskTypeByModelCode, type TaskType } from '../detectors/catalogue.js';
import { AppError } from '../errors.js';
import { isoAt, systemClock, type Clock } from '../repositories/clock.js';
import type { Repositories } from '../repositories/index.js';
import type { JobRow } from '../repositories/job.repository.js';
import { objectKeys, type ObjectStore } from '../repositories/object-store.js';
import { hashSecret, type MediaPermission } from './credential.service.js';
import type { DownloadUrls } from './download-urls.js';
import type { JobService } from './job.service.js';

/** Errors of the media-record API: `{code, type, message}` (SPEC.md §7.3, DESIGN.md §2). */
/** The record's `type` follows what the file is: the seed's Image and Video, and Audio and Document beside them. */
export function mediaKind(contentType: string, taskType: TaskType, name = ''): MediaKind {
  const mime = contentType.toLowerCase();
  if (mime.startsWith('video/')) return 'Video';
  if (mime.startsWith('audio/')) return 'Audio';
  if (mime.startsWith('image/')) return 'Image';
  if (mime === 'application/pdf') return 'Document';
  // A generic type (application/octet-stream): the file's extension, else what the task type takes.
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  if (extension === 'pdf') return 'Document';
  if (['mp4', 'mov', 'webm'].includes(extension ?? '')) return 'Video';
  if (['mp3', 'wav', 'm4a', 'flac', 'ogg', 'opus', 'weba'].includes(extension ?? '')) return 'Audio';
  if (['jpg', 'jpeg', 'png'].includes(extension ?? '')) return 'Image';
  const first = taskType.formats[0]!;
  return first === 'pdf' ? 'Document' : ['mp3', 'wav', 'm4a', 'flac', 'ogg', 'weba'].includes(first) ? 'Audio' : ['mp4', 'mov', 'webm'].includes(first) ? 'Video' : 'Image';
}

/**
 * FI-1 options as the SDKs send them in `metadata` (`faceSwapCheck` is read as well as
 * `faceswapCheck`); a flag that is absent is false, as the SDKs assume.
 */
export function faceIntelligenceParameters(metadata: Record<string, unknown> | undefined): Record<string, boolean> {
  const flag = (...names: string[]) => names.some((name) => metadata?.[name] === true || metadata?.[name] === 'true');
  return {
    isSingleFace: flag('isSingleFace'),
    isFaceswapCheck: flag('faceswapCheck', 'faceSwapCheck'),
    isLivenessCheck: flag('livenessCheck'),
    isSimilarityCheck: flag('faceSimilarityCheck'),
  };
}

export interface MediaClientPrincipal {
  clientId: string;
  tenantId: string;
  permissions: ReadonlySet<string>;
}

export interface MediaServiceDeps {
  repos: Pick<Repositories, 'media' | 'jobs' | 'credentials'>;
  jobs: JobService;
  store: ObjectStore;
  downloadUrls: DownloadUrls;
  config: Pick<Config, 'mediaQueryQuota' | 'mediaMutationQuota'>;
  clock?: Clock;
}

type MediaStatus = 'INITED' | 'UPLOADED' | 'PROCESSED' | 'FAILED';

function statusOf(record: MediaRecordTable, job: JobRow | undefined): MediaStatus {
  if (record.error_message || !job) return 'FAILED';
  switch (job.status) {
    case 'waiting_for_finalize':
      return 'INITED';
    case 'queued':
    case 'processing':
      return 'UPLOADED';
    case 'completed':
      return 'PROCESSED';
    default:
      return 'FAILED';
  }
}

/** The media API words the job API's INSUFFICIENT_BALANCE for its own flow (credits are taken at creation). */
function asMediaError(error: unknown): unknown {
  if (error instanceof AppError && error.code === 'INSUFFICIENT_BALANCE') return new AppError('INSUFFICIENT_BALANCE', 'Insufficient credits to start processing. Top up your balance or enable pay-as-you-go billing.');
  return error;
}

export class MediaService {
  private readonly clock: Clock;

  constructor(private readonly deps: MediaServiceDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  async authenticate(clientId: string | undefined, clientSecret: string | undefined): Promise<MediaClientPrincipal> {
    const unauthenticated = new AppError('INVALID_CLIENT_CREDENTIALS', 'Missing or incorrect x-client-id / x-client-secret');
    if (!clientId || !clientSecret || clientId.length > 128 || clientSecret.length > 256) throw unauthenticated;
    const client = await this.deps.repos.credentials.findMediaClient(clientId);
    if (!client) throw unauthenticated;
    const expected = Buffer.from(client.secret_hash);
    const given = Buffer.from(hashSecret(clientSecret));
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw unauthenticated;
    // `lastUsedAt` to the minute: one write per client a minute, not one per call.
    const now = isoAt(this.clock.now());
    if (!client.last_used_at || Date.parse(client.last_used_at) < Date.parse(now) - 60_000) {
      void this.deps.repos.credentials.touchMediaClient(client.id, now).catch(() => {});
    }
    return { clientId: client.id, tenantId: client.tenant_id, permissions: new Set(client.permissions.split(',')) };
  }

  /** Checks the permission, then counts the call against the client's quota for this period. */
  async authorize(principal: MediaClientPrincipal, permission: MediaPermission, kind: 'query' | 'mutation'): Promise<void> {
    if (!principal.permissions.has(permission)) {
      throw new AppError('FORBIDDEN', `This client lacks the ${permission} permission`);
    }
    const client = await this.deps.repos.credentials.findMediaClient(principal.clientId);
    if (!client) throw new AppError('INVALID_CLIENT_CREDENTIALS', 'This client has been revoked');
    const quota = kind === 'query' ? (client.query_quota ?? this.deps.config.mediaQueryQuota) : (client.mutation_quota ?? this.deps.config.mediaMutationQuota);
    if (quota === null) return;
    const periodMs = client.quota_period_seconds * 1000;
    const periodStart = Math.floor(this.clock.now() / periodMs) * periodMs;
    const used = await this.deps.repos.media.countCall(client.id, kind, new Date(periodStart).toISOString());
    if (used > quota) {
      const retryAfter = Math.max(1, Math.ceil((periodStart + periodMs - this.clock.now()) / 1000));
      throw new AppError('QUOTA_EXCEEDED', `The ${kind} quota of ${quota} calls per ${client.quota_period_seconds} s is exhausted; retry in ${retryAfter} s`, undefined, retryAfter);
    }
  }

  async create(
    principal: MediaClientPrincipal,
    body: { name: string; contentType: string; size: number; modelType: string; metadata?: Record<string, unknown>; referenceName?: string; referenceContentType?: string; referenceSize?: number },
  ) {
    const taskType = taskTypeByModelCode(body.modelType);
    if (!taskType) throw new AppError('VALIDATION_ERROR', `modelType ${JSON.stringify(body.modelType)} is not one of ${MODEL_CODES.join(', ')}`);
    const parameters = taskType.modelCode === 'FI-1' ? faceIntelligenceParameters(body.metadata) : {};
    const inputs = [{ contentType: body.contentType, fileName: body.name, sizeBytes: body.size, slotName: 'original' }];
    if (parameters.isSimilarityCheck) {
      // The reference gets its own upload URL, bound like every upload URL to its type and size.
      if (!body.referenceContentType || !body.referenceSize) {
        throw new AppError('VALIDATION_ERROR', 'faceSimilarityCheck needs the reference image: send referenceContentType and referenceSize (and optionally referenceName); upload it to the referenceUploadUrl of the answer');
      }
      inputs.push({ contentType: body.referenceContentType, fileName: body.referenceName ?? 'reference', sizeBytes: body.referenceSize, slotName: 'reference' });
    }
    const created = await this.deps.jobs
      .create(principal.tenantId, { taskTypeId: taskType.id, inputs, parameters }, { reserveCredits: true })
      .catch((error: unknown) => {
        throw asMediaError(error);
      });
    const record: MediaRecordTable = {
      mid: randomBytes(12).toString('hex'),
      tenant_id: principal.tenantId,
      client_id: principal.clientId,
      job_id: created.jobId,
      name: body.name,
      content_type: body.contentType,
      size: body.size,
      type: mediaKind(body.contentType, taskType, body.name),
      model_type: taskType.modelCode,
      error_message: null,
      upload_expires_at: created.inputs[0]!.uploadUrlExpiresAt,
      created_at: created.createdAt,
    };
    await this.deps.repos.media.insert(record);
    const reference = created.inputs.find((input) => input.slotName === 'reference');
    return {
      ...this.summary(record, await this.deps.repos.jobs.findById(record.job_id)),
      uploadUrl: created.inputs[0]!.uploadUrl,
      ...(reference && { referenceUploadUrl: reference.uploadUrl }),
    };
  }

  async list(principal: MediaClientPrincipal, query: { limit?: number; offset?: number; page?: number; pageSize?: number }) {
    const limit = Math.min(query.limit ?? query.pageSize ?? 10, 100);
    const offset = query.offset ?? ((query.page ?? 1) - 1) * limit;
    const { rows, total } = await this.deps.repos.media.page(principal.tenantId, offset, limit);
    const data = await Promise.all(
      rows.map(async (record) => {
        const job = await this.reconcile(record);
        return { ...this.summary(record, job), ...(await this.resultFields(record, job, false)) };
      }),
    );
    // The seed's `limit, offset, total, data` first; Authenta's SDKs read `items`, `page`, `pageSize`.
    return { limit, offset, total, data, items: data, page: Math.floor(offset / limit) + 1, pageSize: limit };
  }

  async get(principal: MediaClientPrincipal, mid: string) {
    const record = await this.findRecord(principal, mid);
    const job = await this.reconcile(record);
    const fresh = (await this.deps.repos.media.find(principal.tenantId, mid)) ?? record;
    return { ...this.summary(fresh, job), ...(await this.resultFields(fresh, job, true)) };
  }

  async delete(principal: MediaClientPrincipal, mid: string) {
    const record = await this.findRecord(principal, mid);
    const job = await this.deps.repos.jobs.findById(record.job_id);
    if (job?.status === 'processing') throw new AppError('MEDIA_PROCESSING', `Media ${mid} is being processed; delete it once it is PROCESSED`);
    if (job) await this.deps.jobs.delete(record.tenant_id, job.id).catch((error: unknown) => { throw asMediaError(error); });
    await this.deps.repos.media.delete(mid);
    return { mid, deleted: true };
  }

  /** Called after a file lands on a record's upload URL: processing starts once every file has. */
  async onUploaded(jobId: string): Promise<void> {
    const record = await this.deps.repos.media.findByJob(jobId);
    if (!record) return;
    // FI-1 with a reference waits for both files.
    if ((await this.deps.repos.jobs.inputs(jobId)).some((input) => input.uploaded_size === null)) return;
    try {
      await this.deps.jobs.finalize(record.tenant_id, jobId);
    } catch (error) {
      // The sweeper and a read of the record can both find the file in the bucket: the one that
      // loses the finalize race must not fail (and cancel) the job the other one queued.
      if (error instanceof AppError && error.code === 'JOB_ALREADY_FINALIZED') return;
      await this.failRecord(record, error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * With S3 the upload never passes through the API: start processing for every record whose
   * file has arrived in the bucket. (Reads of a record do the same for that record at once.)
   */
  async sweepArrivedUploads(): Promise<number> {
    if (!this.deps.store.uploadsBypassApi) return 0;
    let started = 0;
    for (const record of await this.deps.repos.media.waitingForUpload()) {
      if (await this.reconcileUpload(record)) started++;
    }
    return started;
  }

  /** Ends records whose file never arrived before the URL expired (credits released). */
  async sweepExpiredUploads(): Promise<number> {
    const expired = await this.deps.repos.media.expiredUploads(isoAt(this.clock.now()));
    for (const record of expired) {
      if (!(await this.reconcileUpload(record))) {
        await this.failRecord(record, 'No file was uploaded before the upload URL expired');
      }
    }
    return expired.length;
  }

  private async findRecord(principal: MediaClientPrincipal, mid: string): Promise<MediaRecordTable> {
    const record = /^[0-9a-f]{24}$/.test(mid) ? await this.deps.repos.media.find(principal.tenantId, mid) : undefined;
    if (!record) throw new AppError('NOT_FOUND', `No media with mid ${mid}`);
    return record;
  }

  private async failRecord(record: MediaRecordTable, message: string): Promise<void> {
    await this.deps.repos.media.setError(record.mid, message);
    await this.deps.jobs.cancel(record.tenant_id, record.job_id).catch(() => {});
  }

  /**
   * With S3 the upload never passes through the API, so a read of an INITED record checks
   * the bucket and starts processing when the file is there.
   */
  private async reconcile(record: MediaRecordTable): Promise<JobRow | undefined> {
    const job = await this.deps.repos.jobs.findById(record.job_id);
    if (job?.status === 'waiting_for_finalize' && !record.error_message && this.deps.store.uploadsBypassApi) {
      await this.reconcileUpload(record);
      return this.deps.repos.jobs.findById(record.job_id);
    }
    return job;
  }

  private async reconcileUpload(record: MediaRecordTable): Promise<boolean> {
    const inputs = await this.deps.repos.jobs.inputs(record.job_id);
    for (const input of inputs) {
      if (input.uploaded_size !== null) continue;
      const size = await this.deps.store.size(objectKeys.input(record.job_id, input.position)).catch(() => null);
      if (size === null) return false;
      await this.deps.repos.jobs.completeUpload(record.job_id, input.slot_name, size);
    }
    await this.onUploaded(record.job_id);
    return true;
  }

  private summary(record: MediaRecordTable, job: JobRow | undefined) {
    return {
      mid: record.mid,
      name: record.name,
      type: record.type,
      status: statusOf(record, job),
      modelType: record.model_type,
      createdAt: record.created_at,
    };
  }

  private async resultFields(record: MediaRecordTable, job: JobRow | undefined, detail: boolean) {
    const status = statusOf(record, job);
    const expiresAt = this.deps.downloadUrls.expiresAt();
    const url = (key: string, contentType: string) => this.deps.downloadUrls.url(key, contentType, expiresAt);
    const fields: Record<string, unknown> = {};
    if (status === 'UPLOADED' || status === 'PROCESSED') fields.srcURL = await url(objectKeys.input(record.job_id, 0), record.content_type);
    if (status === 'FAILED') fields.errorMessage = record.error_message ?? job?.error_message ?? 'Processing failed';
    if (status !== 'PROCESSED' || !job?.result) return fields;

    const result = JSON.parse(job.result) as Record<string, unknown> & { analysisDetails?: Record<string, unknown> };
    const taskType = taskTypeByModelCode(record.model_type)!;
    if (detail) fields.resultURL = await url(objectKeys.artifact(job.id, 'result.json'), 'application/json');
    const artifacts = await this.deps.repos.jobs.artifacts(job.id);
    const heatmapUrl = async (name: unknown) => {
      const artifact = artifacts.find((a) => a.id === name) ?? (name === undefined ? artifacts.find((a) => a.kind === 'heatmap') : undefined);
      return artifact ? url(artifact.object_key, artifact.content_type) : undefined;
    };
    if (record.type !== 'Video' || !['DF-1', 'ED-1'].includes(taskType.modelCode)) {
      if (taskType.verdictFlag) {
        fields.fake = Boolean(result[taskType.verdictFlag]);
        fields.confidence = result.confidence;
      }
      const heatmap = detail ? await heatmapUrl(undefined) : undefined;
      // `heatmap` as the seed named it, `heatmapURL` as Authenta's SDKs read it.
      if (heatmap) Object.assign(fields, { heatmap, heatmapURL: heatmap });
      return fields;
    }
    const participants = (result.participants ?? result.analysisDetails?.participants ?? []) as Array<Record<string, unknown>>;
    const faces = result.faces ?? result.analysisDetails?.faces;
    fields.faces = typeof faces === 'number' ? faces : participants.length;
    fields.deepFakes = participants.filter((p) => p.fake === true).length;
    if (detail) {
      fields.participants = await Promise.all(
        participants.map(async (p, index) => ({
          id: typeof p.id === 'number' ? p.id : index,
          fake: Boolean(p.fake),
          // The detector's per-person score is P(fake); the record wants confidence in `fake`.
          ...(typeof p.confidence === 'number' ? { confidence: p.confidence } : typeof p.score === 'number' ? { confidence: p.fake ? p.score : 1 - p.score } : {}),
          // Per-face media stands in for a heatmap where the detector localises by face.
          ...((p.heatmap ?? p.artifact) ? { heatmap: await heatmapUrl(p.heatmap ?? p.artifact) } : {}),
        })),
      );
    }
    return fields;
  }
}
