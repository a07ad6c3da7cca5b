/**
 * HMAC-SHA256 signatures for the URLs the API serves itself: uploads to the local object
 * store and artifact downloads. A signature binds every field that matters (method, object,
 * content type, size, nonce, expiry), so changing any of them invalidates the URL.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export class UrlSigner {
  constructor(private readonly secret: string) {}

  sign(fields: ReadonlyArray<string | number>): string {
    return createHmac('sha256', this.secret).update(fields.join('\n')).digest('base64url');
  }

  verify(fields: ReadonlyArray<string | number>, signature: string): boolean {
    const expected = Buffer.from(this.sign(fields));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
