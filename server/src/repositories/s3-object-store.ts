/**
 * The scale-out object store: any S3-compatible bucket (AWS S3, MinIO, Ceph RGW, R2, …)
 * through the AWS SDK v3. Clients upload straight to the bucket with pre-signed PUT URLs
 * (SigV4) that sign `content-type` and `content-length`, so the bucket refuses a body of
 * another type or size. Credentials come from the standard AWS chain (AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY, a profile, or an instance role).
 *
 * What S3 cannot do: make a pre-signed URL single-use. Until it expires the URL can PUT the
 * object again (same type and size). Finalize therefore checks the object's size and magic
 * bytes itself (JobService.verifyUploads), and keep UPLOAD_URL_TTL_SECONDS short where this
 * matters.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { assertSafeKey, byteLimit, type DownloadTarget, type ObjectStore, type UploadTarget } from './object-store.js';

export interface S3StoreOptions {
  bucket: string;
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
}

/** SigV4 pre-signed URLs live at most seven days. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

const isNotFound = (error: unknown) =>
  error instanceof S3ServiceException && (error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata?.httpStatusCode === 404);

export class S3ObjectStore implements ObjectStore {
  readonly uploadsBypassApi = true;
  readonly urlRoutes = null;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint ?? undefined,
      forcePathStyle: options.forcePathStyle,
      // Checksums only where S3 requires them: the newer default (CRC32 on every request,
      // aws-chunked uploads) is not understood by many S3-compatible servers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  private expiresIn(expiresAt: Date): number {
    return Math.max(1, Math.min(MAX_PRESIGN_SECONDS, Math.round((expiresAt.getTime() - Date.now()) / 1000)));
  }

  async uploadUrl(target: UploadTarget): Promise<string> {
    assertSafeKey(target.key);
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: target.key, ContentType: target.contentType, ContentLength: target.sizeBytes });
    // Both headers are signed: a PUT with another Content-Type or size fails the signature.
    return getSignedUrl(this.client, command, {
      expiresIn: this.expiresIn(target.expiresAt),
      signableHeaders: new Set(['content-type', 'content-length']),
    });
  }

  async downloadUrl(target: DownloadTarget): Promise<string> {
    assertSafeKey(target.key);
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: target.key, ResponseContentType: target.contentType });
    return getSignedUrl(this.client, command, { expiresIn: this.expiresIn(target.expiresAt) });
  }

  /** Spools to a temporary file first: S3 needs the length up front, and memory stays flat. */
  async putStream(key: string, body: Readable, contentType: string, maxBytes: number): Promise<number> {
    assertSafeKey(key);
    const spool = join(tmpdir(), `mediaproof-spool-${randomUUID()}`);
    const limit = byteLimit(maxBytes);
    try {
      await pipeline(body, limit, createWriteStream(spool));
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: createReadStream(spool), ContentLength: limit.bytes, ContentType: contentType }),
      );
      return limit.bytes;
    } finally {
      await rm(spool, { force: true });
    }
  }

  async put(key: string, data: Uint8Array, contentType: string): Promise<void> {
    assertSafeKey(key);
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: data, ContentLength: data.byteLength, ContentType: contentType }));
  }

  async size(key: string): Promise<number | null> {
    assertSafeKey(key);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? null;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async head(key: string, length: number): Promise<Buffer> {
    assertSafeKey(key);
    if (length <= 0) return Buffer.alloc(0);
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=0-${length - 1}` }));
      const bytes = Buffer.from(await object.Body!.transformToByteArray());
      // A server that ignores Range sends the whole object: keep only what was asked for.
      return bytes.subarray(0, length);
    } catch (error) {
      // An empty object has no byte 0: S3 answers 416 InvalidRange.
      if (error instanceof S3ServiceException && error.$metadata?.httpStatusCode === 416) return Buffer.alloc(0);
      throw error;
    }
  }

  async materialise(key: string, scratchPath: string): Promise<string> {
    await mkdir(dirname(scratchPath), { recursive: true });
    await pipeline(await this.openRead(key), createWriteStream(scratchPath));
    return scratchPath;
  }

  async openRead(key: string): Promise<Readable> {
    assertSafeKey(key);
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return object.Body as Readable;
  }

  /** Deletes every object under the prefix (a job's inputs and artifacts), 1000 per request. */
  async deletePrefix(prefix: string): Promise<void> {
    assertSafeKey(prefix);
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
      if (keys.length) {
        const result = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }));
        if (result.Errors?.length) throw new Error(`could not delete ${result.Errors.length} objects under ${prefix}: ${result.Errors[0]?.Message ?? ''}`);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  close(): void {
    this.client.destroy();
  }
}
