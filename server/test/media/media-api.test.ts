/** The media-record API (SPEC.md §4.8, §7.3) over real HTTP, with the clients' own habits. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { jpeg, put, startServer, type TestServer } from '../helpers.js';

function mediaClient(baseUrl: string, clientId: string, clientSecret: string) {
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}/api${path}`, {
      method,
      headers: { 'x-client-id': clientId, 'x-client-secret': clientSecret, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, body: (text ? JSON.parse(text) : null) as any, headers: response.headers };
  };
}

function assertMediaError(response: { status: number; body: { code: string; type: string; message: string } }, status: number, code: string, type: string) {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.deepEqual(Object.keys(response.body).sort(), ['code', 'message', 'type']);
  assert.equal(response.body.code, code);
  assert.equal(response.body.type, type);
}

describe('media-record API', () => {
  let server: TestServer;
  let tenantId: string;
  let call: ReturnType<typeof mediaClient>;

  const newClient = async (permissions = ['media:read', 'media:write', 'media:delete'], quotas: { query?: number; mutation?: number } = {}, tenant = tenantId) => {
    const created = await server.runtime.credentials.createMediaClient(tenant, permissions as never, {
      query: quotas.query ?? null,
      mutation: quotas.mutation ?? null,
      periodSeconds: 3600,
    });
    return mediaClient(server.url, created.clientId, created.clientSecret);
  };

  before(async () => {
    server = await startServer();
    ({ tenantId } = await server.tenant(100));
    call = await newClient();
  });
  after(() => server.close());

  test('an existing-style integration: create, PUT with only Content-Type, poll until PROCESSED, fetch resultURL without auth, list, delete', async () => {
    const image = await jpeg();
    const created = await call('POST', '/media', { name: 'selfie.jpg', contentType: 'image/jpeg', size: image.length, modelType: 'AC-1' });
    assert.equal(created.status, 201);
    assert.match(created.body.mid, /^[0-9a-f]{24}$/);
    assert.equal(created.body.type, 'Image');
    assert.equal(created.body.status, 'INITED');
    assert.equal(created.body.modelType, 'AC-1');
    assert.equal(created.body.name, 'selfie.jpg');
    assert.equal(typeof created.body.createdAt, 'string');

    const upload = await fetch(created.body.uploadUrl, { method: 'PUT', headers: { 'Content-Type': 'image/jpeg' }, body: new Uint8Array(image) });
    assert.equal(upload.status, 200);

    let record;
    for (let i = 0; i < 100; i++) {
      record = (await call('GET', `/media/${created.body.mid}`)).body;
      if (record.status === 'PROCESSED' || record.status === 'FAILED') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(record.status, 'PROCESSED', record.errorMessage);
    assert.equal(typeof record.fake, 'boolean');
    assert.equal(typeof record.confidence, 'number');
    const result = await (await fetch(record.resultURL)).json();
    assert.equal(result.isAiGenerated, record.fake);
    const source = Buffer.from(await (await fetch(record.srcURL)).arrayBuffer());
    assert.ok(source.equals(image));

    const listed = await call('GET', '/media');
    assert.equal(listed.status, 200);
    // The seed's fields, and Authenta's SDKs' `items`, `page`, `pageSize` beside them.
    assert.deepEqual(Object.keys(listed.body).sort(), ['data', 'items', 'limit', 'offset', 'page', 'pageSize', 'total']);
    assert.deepEqual(listed.body.items, listed.body.data);
    assert.deepEqual([listed.body.page, listed.body.pageSize], [1, 10]);
    assert.ok(listed.body.data.some((m: { mid: string }) => m.mid === created.body.mid));
    assert.equal(listed.body.data[0].participants, undefined);
    assert.equal(listed.body.data[0].resultURL, undefined);

    const removed = await call('DELETE', `/media/${created.body.mid}`);
    assert.equal(removed.status, 200);
    assertMediaError(await call('GET', `/media/${created.body.mid}`), 404, 'NOT_FOUND', 'CLIENT_ERROR');
  });

  test('IAM001 without or with wrong credentials; IAM002 without the permission', async () => {
    assertMediaError(await mediaClient(server.url, '', '')('GET', '/media'), 401, 'IAM001', 'UNAUTHENTICATED');
    assertMediaError(await mediaClient(server.url, 'abc', 'def')('GET', '/media'), 401, 'IAM001', 'UNAUTHENTICATED');
    const readOnly = await newClient(['media:read']);
    assertMediaError(await readOnly('POST', '/media', { name: 'a.jpg', contentType: 'image/jpeg', size: 10, modelType: 'AC-1' }), 403, 'IAM002', 'UNAUTHORIZED');
    const created = await call('POST', '/media', { name: 'a.jpg', contentType: 'image/jpeg', size: 10, modelType: 'AC-1' });
    const noDelete = await newClient(['media:read', 'media:write']);
    assertMediaError(await noDelete('DELETE', `/media/${created.body.mid}`), 403, 'IAM002', 'UNAUTHORIZED');
  });

  test('AA001: a client with a query quota of 2 is refused on its third read, with Retry-After; mutations count apart', async () => {
    const limited = await newClient(undefined, { query: 2, mutation: 1 });
    assert.equal((await limited('GET', '/media')).status, 200);
    assert.equal((await limited('GET', '/media')).status, 200);
    const third = await limited('GET', '/media');
    assertMediaError(third, 429, 'AA001', 'CLIENT_ERROR');
    assert.ok(Number(third.headers.get('retry-after')) > 0);
    assert.equal((await limited('POST', '/media', { name: 'a.jpg', contentType: 'image/jpeg', size: 10, modelType: 'AC-1' })).status, 201);
    assertMediaError(await limited('POST', '/media', { name: 'a.jpg', contentType: 'image/jpeg', size: 10, modelType: 'AC-1' }), 429, 'AA001', 'CLIENT_ERROR');
  });

  test('U007 at creation when credits are short; nothing is created and nothing charged', async () => {
    const { tenantId: poor } = await server.tenant(0);
    const poorClient = await newClient(undefined, {}, poor);
    assertMediaError(await poorClient('POST', '/media', { name: 'a.jpg', contentType: 'image/jpeg', size: 10, modelType: 'AC-1' }), 402, 'U007', 'CLIENT_ERROR');
    assert.equal((await poorClient('GET', '/media')).body.total, 0);
    assert.equal((await server.runtime.repos.tenants.find(poor))!.balance, 0);
  });

  test('tenant isolation: another tenant’s record is not found and not listed', async () => {
    const created = await call('POST', '/media', { name: 'a.jpg', contentType: 'image/jpeg', size: 10, modelType: 'FD-1' });
    const { tenantId: other } = await server.tenant(10);
    const stranger = await newClient(undefined, {}, other);
    assertMediaError(await stranger('GET', `/media/${created.body.mid}`), 404, 'NOT_FOUND', 'CLIENT_ERROR');
    assertMediaError(await stranger('DELETE', `/media/${created.body.mid}`), 404, 'NOT_FOUND', 'CLIENT_ERROR');
    assert.equal((await stranger('GET', '/media')).body.total, 0);
  });

  test('bad requests answer in the media error shape', async () => {
    assertMediaError(await call('POST', '/media', { name: 'a.jpg', contentType: 'image/jpeg', size: 10, modelType: 'XX-9' }), 400, 'VALIDATION_ERROR', 'CLIENT_ERROR');
    assertMediaError(await call('POST', '/media', { name: 'a.pdf', contentType: 'application/pdf', size: 10, modelType: 'AC-1' }), 400, 'UNSUPPORTED_MEDIA_TYPE', 'CLIENT_ERROR');
    assertMediaError(await call('POST', '/media', { name: 'a.jpg', contentType: 'image/jpeg', size: 10 ** 12, modelType: 'AC-1' }), 413, 'FILE_TOO_LARGE', 'CLIENT_ERROR');
  });

  test('a mislabelled upload ends FAILED with a message and releases its credits', async () => {
    const { tenantId: t } = await server.tenant(5);
    const own = await newClient(undefined, {}, t);
    const notJpeg = Buffer.from('%PDF-1.4 definitely not a jpeg file, but long enough to sniff');
    const created = await own('POST', '/media', { name: 'x.jpg', contentType: 'image/jpeg', size: notJpeg.length, modelType: 'AC-1' });
    assert.equal((await server.runtime.repos.tenants.find(t))!.balance, 4);
    assert.equal((await put(created.body.uploadUrl, notJpeg, 'image/jpeg')).status, 200);
    const record = (await own('GET', `/media/${created.body.mid}`)).body;
    assert.equal(record.status, 'FAILED');
    assert.match(record.errorMessage, /declared image\/jpeg/);
    assert.equal((await server.runtime.repos.tenants.find(t))!.balance, 5);
  });

  test('a DF-1 record whose video cannot be decoded ends FAILED with a clear message', async () => {
    const fakeMp4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(200)]);
    const created = await call('POST', '/media', { name: 'clip.mp4', contentType: 'video/mp4', size: fakeMp4.length, modelType: 'DF-1' });
    assert.equal(created.body.type, 'Video');
    await put(created.body.uploadUrl, fakeMp4, 'video/mp4');
    let record;
    for (let i = 0; i < 100; i++) {
      record = (await call('GET', `/media/${created.body.mid}`)).body;
      if (record.status === 'PROCESSED' || record.status === 'FAILED') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(record.status, 'FAILED');
    assert.ok(record.errorMessage.length > 10);
  });

  test('records whose upload never arrives end FAILED once the URL expires, and their credits come back', async () => {
    const shortLived = await startServer({ UPLOAD_URL_TTL_SECONDS: '1' });
    try {
      const { tenantId: t } = await shortLived.tenant(3);
      const created = await shortLived.runtime.credentials.createMediaClient(t, ['media:read', 'media:write'], { query: null, mutation: null, periodSeconds: 60 });
      const own = mediaClient(shortLived.url, created.clientId, created.clientSecret);
      const record = await own('POST', '/media', { name: 'a.jpg', contentType: 'image/jpeg', size: 10, modelType: 'AC-1' });
      assert.equal((await shortLived.runtime.repos.tenants.find(t))!.balance, 2);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(await shortLived.runtime.media.sweepExpiredUploads(), 1);
      const after = (await own('GET', `/media/${record.body.mid}`)).body;
      assert.equal(after.status, 'FAILED');
      assert.match(after.errorMessage, /No file was uploaded/);
      assert.equal((await shortLived.runtime.repos.tenants.find(t))!.balance, 3);
    } finally {
      await shortLived.close();
    }
  });
});
