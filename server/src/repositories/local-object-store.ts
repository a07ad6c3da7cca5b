import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile, access } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import type { UrlSigner } from '../services/url-signer.js';
import { assertSafeKey, byteLimit, type DownloadTarget, type ObjectStore, type UploadTarget } from './object-store.js';

/** The embedded object store: files under DATA_DIR/objects, URLs served by the API. */
export class LocalObjectStore implements ObjectStore {
  readonly uploadsBypassApi = false;
  readonly urlRoutes = this;
  private readonly root: string;

  constructor(
    dataDir: string,
    private readonly publicUrl: string,
    private readonly signer: UrlSigner,
  ) {
    this.root = join(dataDir, 'objects');
  }

  private path(key: string): string {
    assertSafeKey(key);
    return join(this.root, key);
  }

  async uploadUrl(target: UploadTarget): Promise<string> {
    const expires = Math.floor(target.expiresAt.getTime() / 1000);
    const sig = this.signer.sign(uploadSignatureFields(target.jobId, target.slotName, target.contentType, target.sizeBytes, target.nonce, expires));
    const slot = encodeURIComponent(target.slotName);
    return `${this.publicUrl}/uploads/${target.jobId}/${slot}?expires=${expires}&sig=${sig}`;
  }

  async downloadUrl(target: DownloadTarget): Promise<string> {
    const expires = Math.floor(target.expiresAt.getTime() / 1000);
    const sig = this.signer.sign(downloadSignatureFields(target.key, target.contentType, expires));
    return `${this.publicUrl}/downloads/${target.key}?expires=${expires}&ct=${encodeURIComponent(target.contentType)}&sig=${sig}`;
  }

  async putStream(key: string, body: Readable, _contentType: string, maxBytes: number): Promise<number> {
    const finalPath = this.path(key);
    await mkdir(dirname(finalPath), { recursive: true });
    // Write beside the target and rename, so a reader never sees half a file.
    const partPath = `${finalPath}.${randomUUID()}.part`;
    const limit = byteLimit(maxBytes);
    try {
      await pipeline(body, limit, createWriteStream(partPath));
      await rename(partPath, finalPath);
      return limit.bytes;
    } catch (error) {
      await rm(partPath, { force: true });
      throw error;
    }
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, data);
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.path(key))).size;
    } catch {
      return null;
    }
  }

  async head(key: string, length: number): Promise<Buffer> {
    const handle = await open(this.path(key), 'r');
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  async materialise(key: string): Promise<string> {
    return this.path(key);
  }

  async openRead(key: string): Promise<Readable> {
    const path = this.path(key);
    await access(path, constants.R_OK);
    return createReadStream(path);
  }

  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.path(prefix.replace(/\/$/, '')), { recursive: true, force: true });
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await access(this.root, constants.W_OK);
  }

  /** Verifies a download URL's signature; returns the key's path or null. */
  verifiedDownloadPath(key: string, expires: number, contentType: string, sig: string, now = Date.now()): string | null {
    if (!Number.isFinite(expires) || expires * 1000 < now) return null;
    if (!this.signer.verify(downloadSignatureFields(key, contentType, expires), sig)) return null;
    try {
      return this.path(key);
    } catch {
      return null;
    }
  }
}

export const uploadSignatureFields = (jobId: string, slotName: string, contentType: string, sizeBytes: number, nonce: string, expires: number) =>
  ['PUT', jobId, slotName, contentType, sizeBytes, nonce, expires];

const downloadSignatureFields = (key: string, contentType: string, expires: number) => ['GET', key, contentType, expires];
