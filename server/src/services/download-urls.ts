/**
 * Signed download URLs for stored files, as the job and media views list them.
 *
 * Every URL signed in the same minute expires at the same whole minute, at least the configured
 * TTL from now (at most a minute more). So a client polling a job gets the same URLs for a
 * minute, which browsers and proxies can cache, and each URL is signed once a minute instead of
 * on every poll: signing (an HMAC locally, a SigV4 derivation on S3) is a large part of a GET.
 */
import type { ObjectStore } from '../repositories/object-store.js';

const EXPIRY_STEP_MS = 60_000;

export class DownloadUrls {
  private readonly signed = new Map<string, string>();

  constructor(
    private readonly store: ObjectStore,
    private readonly ttlSeconds: number,
    private readonly limit = 10_000,
  ) {}

  /** The expiry of URLs signed at `now`. */
  expiresAt(now = Date.now()): Date {
    return new Date(Math.ceil((now + this.ttlSeconds * 1000) / EXPIRY_STEP_MS) * EXPIRY_STEP_MS);
  }

  async url(key: string, storedContentType: string, expiresAt: Date): Promise<string> {
    // Rows stored before declared types were checked may hold values no HTTP header can carry.
    const contentType = /^[\x21-\x7e][\x20-\x7e]*$/.test(storedContentType) ? storedContentType : 'application/octet-stream';
    const cacheKey = `${expiresAt.getTime()}\n${contentType}\n${key}`;
    let url = this.signed.get(cacheKey);
    if (url === undefined) {
      url = await this.store.downloadUrl({ key, contentType, expiresAt });
      // Entries of past minutes are never asked for again; dropping the oldest bounds memory.
      if (this.signed.size >= this.limit) this.signed.delete(this.signed.keys().next().value!);
      this.signed.set(cacheKey, url);
    }
    return url;
  }
}
