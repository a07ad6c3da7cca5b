/**
 * HMAC-SHA256 signatures for the URLs the API serves itself: uploads to the local object
 * store and artifact downloads. A signature binds every field that matters (method, object,
 * content type, size, nonce, expiry), so changing any of them invalidates the URL.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

export class UrlSigner {
  // Imported once: every GET of a job signs a URL per file, and a string key is re-imported each time.
  private readonly key: KeyObject;

  constructor(secret: string) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  sign(fields: ReadonlyArray<string | number>): string {
    return createHmac('sha256', this.key).update(fields.join('\n')).digest('base64url');
  }

  verify(fields: ReadonlyArray<string | number>, signature: string): boolean {
    const expected = Buffer.from(this.sign(fields));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
