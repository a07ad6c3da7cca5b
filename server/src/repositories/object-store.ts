/**
 * Where uploaded media and artifacts live. Two implementations: the local store under
 * DATA_DIR (its signed URLs are served by the API itself) and an S3-compatible bucket.
 */
import { Transform, type Readable } from 'node:stream';
import { AppError } from '../errors.js';

import type { LocalObjectStore } from './local-object-store.js';

export interface UploadTarget {
  key: string;
  jobId: string;
  slotName: string;
  contentType: string;
  sizeBytes: number;
  /** Makes the URL single-use: the upload route accepts it while the slot is not yet uploaded. */
  nonce: string;
  expiresAt: Date;
}

export interface DownloadTarget {
  key: string;
  contentType: string;
  expiresAt: Date;
}

export interface ObjectStore {
  /**
   * True when clients upload straight to the store (S3 pre-signed PUTs): the API hears of an
   * upload only by asking the store. False when uploads pass through the API (local store).
   */
  readonly uploadsBypassApi: boolean;
  /** The store's own signed-URL routes, served by the API (the local store), or null. */
  readonly urlRoutes: LocalObjectStore | null;
  uploadUrl(target: UploadTarget): Promise<string>;
  downloadUrl(target: DownloadTarget): Promise<string>;
  /** Writes a stream, failing (and leaving nothing behind) past maxBytes. Returns bytes written. */
  putStream(key: string, body: Readable, contentType: string, maxBytes: number): Promise<number>;
  put(key: string, data: Uint8Array, contentType: string): Promise<void>;
  /** Size of a stored object, or null when it does not exist. */
  size(key: string): Promise<number | null>;
  /** The first `length` bytes, for format sniffing. */
  head(key: string, length: number): Promise<Buffer>;
  /** A local file holding the object: the object itself for the local store, a download otherwise. */
  materialise(key: string, scratchPath: string): Promise<string>;
  openRead(key: string): Promise<Readable>;
  deletePrefix(prefix: string): Promise<void>;
  /** Throws when the store cannot be used (readiness probe). */
  check(): Promise<void>;
}

const SAFE_KEY = /^[a-z0-9][a-z0-9/_.-]*$/i;

/** Keys are built from server-side ids only; this rejects anything else as a bug. */
export function assertSafeKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.includes('..') || key.includes('//')) {
    throw new Error(`unsafe object key: ${JSON.stringify(key)}`);
  }
}

export const objectKeys = {
  jobPrefix: (jobId: string) => `jobs/${jobId}/`,
  input: (jobId: string, position: number) => `jobs/${jobId}/inputs/${position}`,
  artifact: (jobId: string, artifactId: string) => `jobs/${jobId}/artifacts/${artifactId}`,
};

/** A pass-through stream that counts bytes and fails past `maxBytes` (uploads bound to their size). */
export function byteLimit(maxBytes: number): Transform & { bytes: number } {
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      limit.bytes += chunk.length;
      if (limit.bytes > maxBytes) return callback(new AppError('FILE_TOO_LARGE', `Body exceeds the ${maxBytes} bytes declared for this upload`));
      callback(null, chunk);
    },
  }) as Transform & { bytes: number };
  limit.bytes = 0;
  return limit;
}
