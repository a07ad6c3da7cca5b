/**
 * What is behind the local object store's signed URLs (DESIGN.md §2), which the API serves
 * itself. Uploads: the URL is HMAC-signed over job, slot, content type, size, a per-slot nonce
 * and the expiry; it works once, until it expires, for exactly the declared Content-Type and
 * size. Downloads: signed over key, content type and expiry; the file is streamed.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { AppError } from '../errors.js';
import { isoAt, systemClock, type Clock } from '../repositories/clock.js';
import type { Repositories } from '../repositories/index.js';
import { uploadSignatureFields, type LocalObjectStore } from '../repositories/local-object-store.js';
import type { ObjectStore } from '../repositories/object-store.js';
import type { UrlSigner } from './url-signer.js';

export interface UploadRequest {
  jobId: string;
  slotName: string;
  expires: string | undefined;
  sig: string | undefined;
  contentType: string | undefined;
  contentLength: string | undefined;
  body: Readable;
}

const invalid = (reason: string) => new AppError('UPLOAD_URL_INVALID', `Upload URL rejected: ${reason}`);

/**
 * An upload's claim is renewed this often while its bytes arrive, and one not renewed for
 * UPLOAD_CLAIM_STALE_MS belonged to a process that crashed mid-upload: the URL works again.
 */
export const UPLOAD_CLAIM_RENEW_MS = 10_000;
export const UPLOAD_CLAIM_STALE_MS = 45_000;

const mediaType = (header: string) => header.split(';')[0]!.trim().toLowerCase();

export interface DownloadRequest {
  key: string;
  expires: string;
  contentType: string;
  sig: string;
}

export class StorageService {
  constructor(
    private readonly deps: {
      repos: Pick<Repositories, 'jobs'>;
      store: ObjectStore;
      signer: UrlSigner;
      /** The local store, whose signed download URLs this service checks and serves. */
      local: LocalObjectStore;
      /** Runs once a file has fully arrived (the media-record API starts processing here). */
      onUploaded?: (jobId: string) => Promise<void>;
      clock?: Clock;
    },
  ) {}

  private get clock(): Clock {
    return this.deps.clock ?? systemClock;
  }

  async receive(request: UploadRequest) {
    const expires = Number(request.expires);
    if (!request.sig || !Number.isInteger(expires)) throw invalid('the signature is missing');
    const input = await this.deps.repos.jobs.input(request.jobId, request.slotName);
    // An unknown job or slot gets the same answer as a bad signature: nothing leaks.
    if (!input) throw invalid('the signature does not match');
    const fields = uploadSignatureFields(input.job_id, input.slot_name, input.content_type, input.size_bytes, input.upload_nonce, expires);
    if (!this.deps.signer.verify(fields, request.sig)) throw invalid('the signature does not match');
    if (expires * 1000 < this.clock.now()) throw invalid('the URL has expired; create a new job to get a fresh one');
    if (input.uploaded_size !== null) throw invalid('the URL has already been used');
    const job = await this.deps.repos.jobs.findById(input.job_id);
    if (job?.status !== 'waiting_for_finalize') throw invalid(`the job is ${job?.status ?? 'deleted'}`);

    if (!request.contentType || mediaType(request.contentType) !== mediaType(input.content_type)) {
      throw invalid(`Content-Type ${request.contentType ?? '(none)'} differs from the declared ${input.content_type}`);
    }
    if (request.contentLength !== undefined) {
      const length = Number(request.contentLength);
      if (length > input.size_bytes) throw new AppError('FILE_TOO_LARGE', `Body is ${length} bytes; ${input.size_bytes} were declared`);
      if (length !== input.size_bytes) throw new AppError('UPLOAD_INCOMPLETE', `Body is ${length} bytes; ${input.size_bytes} were declared`);
    }

    // Claim the slot before writing, so two concurrent PUTs of one URL cannot both land.
    let claimedAt = isoAt(this.clock.now());
    const staleBefore = isoAt(this.clock.now() - UPLOAD_CLAIM_STALE_MS);
    if (!(await this.deps.repos.jobs.claimUpload(input.job_id, input.slot_name, input.upload_nonce, claimedAt, staleBefore))) {
      throw invalid('another upload to this URL is in progress');
    }
    const heartbeat = setInterval(() => {
      const at = isoAt(this.clock.now());
      this.deps.repos.jobs.renewUpload(input.job_id, input.slot_name, claimedAt, at).then((renewed) => renewed && (claimedAt = at), () => {});
    }, UPLOAD_CLAIM_RENEW_MS);
    try {
      const written = await this.deps.store.putStream(input.object_key, request.body, input.content_type, input.size_bytes);
      if (written !== input.size_bytes) {
        throw new AppError('UPLOAD_INCOMPLETE', `Received ${written} bytes; ${input.size_bytes} were declared`);
      }
      await this.deps.repos.jobs.completeUpload(input.job_id, input.slot_name, written);
    } catch (error) {
      await this.deps.repos.jobs.releaseUpload(input.job_id, input.slot_name);
      await this.deps.store.deletePrefix(input.object_key).catch(() => {});
      throw error;
    } finally {
      clearInterval(heartbeat);
    }
    const uploadedAt = claimedAt;
    await this.deps.onUploaded?.(input.job_id);
    return { jobId: input.job_id, slotName: input.slot_name, sizeBytes: input.size_bytes, uploadedAt };
  }

  /** A signed download URL's file, opened for streaming. */
  async openDownload(request: DownloadRequest): Promise<{ contentType: string; size: number; stream: Readable }> {
    const path = this.deps.local.verifiedDownloadPath(request.key, Number(request.expires), request.contentType, request.sig, this.clock.now());
    if (!path) throw new AppError('UPLOAD_URL_INVALID', 'Download URL rejected: the signature does not match or has expired');
    const size = await stat(path).then((s) => s.size).catch(() => null);
    if (size === null) throw new AppError('ARTIFACT_NOT_FOUND', 'The file no longer exists');
    return { contentType: request.contentType, size, stream: createReadStream(path) };
  }
}
