/**
 * The media-record API (SPEC.md §4.8) at {host}/api/media, authenticated with the
 * x-client-id / x-client-secret pair. Errors there are `{code, type, message}` and map to
 * InvalidClientCredentialsError (IAM001), ForbiddenError (IAM002), QuotaExceededError (AA001)
 * and InsufficientBalanceError (U007).
 */
import type { Mediaproof, RequestOptions } from '../client.js';
import { sleep } from '../internal.js';
import { WaitTimeoutError } from '../errors.js';
import { resolveFile, type Uploadable } from '../uploadable.js';
import type { CreatedMediaRecord, MediaCreateParams, MediaDetail, MediaListResponse } from '../types.js';

export class Media {
  constructor(private readonly client: Mediaproof) {}

  /** Declares a media record (status INITED) and returns its upload URL. */
  create(params: MediaCreateParams, options?: RequestOptions): Promise<CreatedMediaRecord> {
    return this.client.request({ ...options, method: 'POST', path: '/api/media', auth: 'client', body: params });
  }

  /** PUTs the file to the record's upload URL; processing then starts by itself. */
  async upload(record: Pick<CreatedMediaRecord, 'uploadUrl'> | string, data: Uploadable, options: RequestOptions & { contentType?: string } = {}): Promise<void> {
    const url = typeof record === 'string' ? record : record.uploadUrl;
    const file = await resolveFile(data, { contentType: options.contentType });
    await this.client.request({
      ...options,
      method: 'PUT',
      path: url,
      auth: 'none',
      headers: { ...options.headers, 'content-type': file.contentType, 'content-length': String(file.sizeBytes) },
      rawBody: () => file.open(),
    });
  }

  list(options?: RequestOptions): Promise<MediaListResponse> {
    return this.client.request({ ...options, method: 'GET', path: '/api/media', auth: 'client' });
  }

  retrieve(mid: string, options?: RequestOptions): Promise<MediaDetail> {
    return this.client.request({ ...options, method: 'GET', path: `/api/media/${encodeURIComponent(mid)}`, auth: 'client' });
  }

  async delete(mid: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ ...options, method: 'DELETE', path: `/api/media/${encodeURIComponent(mid)}`, auth: 'client' });
  }

  /** Polls GET /media/{mid} until the record is PROCESSED (SPEC.md §3.3), backing off to maxIntervalMs. */
  async waitFor(mid: string, options: { signal?: AbortSignal; intervalMs?: number; maxIntervalMs?: number; timeoutMs?: number } = {}): Promise<MediaDetail> {
    const maxInterval = options.maxIntervalMs ?? 5_000;
    let interval = Math.min(options.intervalMs ?? 250, maxInterval);
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (;;) {
      const record = await this.retrieve(mid, { signal: options.signal });
      if (record.status === 'PROCESSED') return record;
      if (Date.now() + interval > deadline) throw new WaitTimeoutError(`Media ${mid} still ${record.status} after ${options.timeoutMs} ms`, mid, record.status);
      await sleep(interval, options.signal);
      interval = Math.min(interval * 1.5, maxInterval);
    }
  }
}
