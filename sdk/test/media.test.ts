/** The media-record resource against a real server (skipped on a build without /api/media). */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Mediaproof, ForbiddenError, InvalidClientCredentialsError, NotFoundError, MediaproofError, QuotaExceededError } from '../src/index.js';
import { jpeg, startServer, type TestServer } from './setup.js';

describe('media resource', () => {
  let server: TestServer;
  let tenantId: string;
  let available = false;

  const sdkFor = async (permissions: string[] = ['media:read', 'media:write', 'media:delete'], quotas: { query?: number; mutation?: number } = {}) => {
    const created = await server.runtime.credentials.createMediaClient(tenantId, permissions as never, { query: quotas.query ?? null, mutation: quotas.mutation ?? null, periodSeconds: 3600 });
    return new Mediaproof({ baseUrl: server.url, clientId: created.clientId, clientSecret: created.clientSecret, maxRetries: 0 });
  };

  before(async () => {
    server = await startServer();
    ({ tenantId } = await server.tenant(100));
    const probe = await fetch(`${server.url}/api/media`);
    available = !((await probe.json()) as { code?: string }).code?.startsWith('NOT_FOUND');
  });
  after(() => server.close());

  test('create → upload → waitFor PROCESSED → retrieve → list → delete', async (t) => {
    if (!available) return t.skip('this build has no media-record API');
    const sdk = await sdkFor();
    const image = await jpeg();
    const created = await sdk.media.create({ name: 'selfie.jpg', contentType: 'image/jpeg', size: image.byteLength, modelType: 'AC-1' });
    assert.equal(created.status, 'INITED');
    assert.equal(created.type, 'Image');
    assert.equal(typeof created.uploadUrl, 'string');
    await sdk.media.upload(created, image);
    const processed = await sdk.media.waitFor(created.mid, { intervalMs: 50, timeoutMs: 20_000 });
    assert.equal(processed.status, 'PROCESSED');
    assert.equal(processed.mid, created.mid);
    assert.equal((await sdk.media.retrieve(created.mid)).name, 'selfie.jpg');
    const list = await sdk.media.list();
    assert.ok(list.total >= 1);
    assert.ok(list.data.some((record) => record.mid === created.mid));
    await sdk.media.delete(created.mid);
    await assert.rejects(sdk.media.retrieve(created.mid), NotFoundError);
  });

  test('IAM001, IAM002 and AA001 map to their error classes', async (t) => {
    if (!available) return t.skip('this build has no media-record API');
    const wrong = new Mediaproof({ baseUrl: server.url, clientId: 'nobody', clientSecret: 'nothing', maxRetries: 0 });
    const unauthenticated = await wrong.media.list().catch((e: unknown) => e);
    assert.ok(unauthenticated instanceof InvalidClientCredentialsError);
    assert.equal(unauthenticated.code, 'IAM001');
    assert.equal(unauthenticated.statusCode, 401);

    const readOnly = await sdkFor(['media:read']);
    const forbidden = await readOnly.media.create({ name: 'a.jpg', contentType: 'image/jpeg', size: 10, modelType: 'AC-1' }).catch((e: unknown) => e);
    assert.ok(forbidden instanceof ForbiddenError);
    assert.equal(forbidden.code, 'IAM002');

    const limited = await sdkFor(['media:read'], { query: 1 });
    await limited.media.list();
    const quota = await limited.media.list().catch((e: unknown) => e);
    assert.ok(quota instanceof QuotaExceededError);
    assert.equal(quota.code, 'AA001');
    assert.equal(quota.statusCode, 429);
  });

  test('without client credentials nothing is sent', async () => {
    const error = await new Mediaproof({ baseUrl: server.url, apiKey: 'api_x', clientId: '', clientSecret: '' }).media.list().catch((e: unknown) => e);
    assert.ok(error instanceof MediaproofError);
    assert.equal(error.code, 'MISSING_CLIENT_CREDENTIALS');
  });
});
