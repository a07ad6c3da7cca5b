/**
 * Regression tests for the findings of the hostile-input and crash test (issue 15), through
 * real HTTP, in SQLite and PostgreSQL mode alike: NUL bytes, an upload cut off by a crash,
 * header injection through a declared content type, deeply nested parameters, coerced JSON
 * types, Node's own parser errors, finalize losing to cancel or delete, private addresses in
 * IPv6 spellings, server paths in error messages, a task type without a detector, and key
 * revocation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { client, declare, eventually, jpeg, put, sleep, startServer, submit, withoutDetector, type TestServer } from '../helpers.js';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../scale/harness.js';
import { UPLOAD_CLAIM_STALE_MS } from '../../src/services/storage.service.js';

type Body = { code: string; statusCode?: number; type?: string; message: string };

function assertJobApiError(response: { status: number; body: Body }, status: number, code: string, message?: RegExp) {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.deepEqual(Object.keys(response.body).sort(), ['code', 'message', 'statusCode']);
  assert.equal(response.body.code, code, response.body.message);
  if (message) assert.match(response.body.message, message);
}

/** Sends bytes as they are (Node's client would refuse to send a malformed request). */
function rawHttp(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('error', reject);
  });
}

for (const mode of ['SQLite', 'PostgreSQL'] as const) {
  describe(`hostile input and crashes (${mode})`, { skip: mode === 'PostgreSQL' ? await postgresSkipReason() : false }, () => {
    let server: TestServer;
    let database: TestDatabase | undefined;
    let api: ReturnType<typeof client>;
    let tenantId: string;
    let image: Buffer;

    before(async () => {
      database = mode === 'PostgreSQL' ? await createTestDatabase() : undefined;
      server = await startServer(database ? { DATABASE_URL: database.url } : {});
      ({ tenantId } = await server.tenant(1000));
      api = client(server.url, await server.apiKey(tenantId));
      image = await jpeg();
    });
    after(async () => {
      await server.close();
      await database?.drop();
    });

    test('1. NUL bytes in paths, ids, file and media names: a 400 in the API error shape, the same in both modes', async () => {
      const upload = await fetch(`${server.url}/uploads/abc/original%00?expires=1&sig=x`, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: 'x' });
      assertJobApiError({ status: upload.status, body: (await upload.json()) as Body }, 400, 'VALIDATION_ERROR', /NUL/);
      assertJobApiError(await api.get('abc%00def'), 400, 'VALIDATION_ERROR', /NUL/);
      assertJobApiError(await api.finalize('%00'), 400, 'VALIDATION_ERROR');
      assertJobApiError(await api.createJob(1, [{ ...declare(image), fileName: 'a\u0000.jpg' }]), 400, 'VALIDATION_ERROR', /NUL/);
      assertJobApiError(await api.createJob(1, [declare(image)], { parameters: { 'k\u0000': 1 } }), 400, 'VALIDATION_ERROR', /NUL/);

      const media = await server.runtime.credentials.createMediaClient(tenantId, ['media:read', 'media:write'], { query: null, mutation: null, periodSeconds: 3600 });
      const created = await fetch(`${server.url}/api/media`, {
        method: 'POST',
        headers: { 'x-client-id': media.clientId, 'x-client-secret': media.clientSecret, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'clip\u0000.jpg', contentType: 'image/jpeg', size: image.length, modelType: 'AC-1' }),
      });
      const body = (await created.json()) as Body;
      assert.equal(created.status, 400);
      assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'type']);
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    });

    test('2. an upload cut off by a crash leaves its URL usable until it expires', async () => {
      const created = (await api.createJob(1, [declare(image)])).body;
      const jobId: string = created.jobId;
      const input = (await server.runtime.repos.jobs.input(jobId, 'original'))!;
      // A process that dies mid-upload leaves the slot claimed, never completed or released:
      // the claim a crashed process left behind, with its last heartbeat long ago.
      const longAgo = new Date(Date.now() - UPLOAD_CLAIM_STALE_MS - 5_000).toISOString();
      assert.ok(await server.runtime.repos.jobs.claimUpload(jobId, 'original', input.upload_nonce, longAgo, new Date().toISOString()));
      assert.equal((await put(created.inputs[0].uploadUrl, image, 'image/jpeg')).status, 200, 'the same URL works again');
      assert.equal((await api.finalize(jobId)).status, 200);
      assert.equal((await api.waitFor(jobId)).status, 'completed');
      // A completed upload is final: the URL is single-use.
      assertJobApiError(await put(created.inputs[0].uploadUrl, image, 'image/jpeg'), 403, 'UPLOAD_URL_INVALID', /already been used/);

      // While another upload of the URL is alive (its heartbeat is fresh), a second one waits its turn.
      const busy = (await api.createJob(1, [declare(image)])).body;
      const busyInput = (await server.runtime.repos.jobs.input(busy.jobId, 'original'))!;
      assert.ok(await server.runtime.repos.jobs.claimUpload(busy.jobId, 'original', busyInput.upload_nonce, new Date().toISOString(), new Date(0).toISOString()));
      assertJobApiError(await put(busy.inputs[0].uploadUrl, image, 'image/jpeg'), 403, 'UPLOAD_URL_INVALID', /in progress/);
    });

    test('3. a declared content type with parameters or a header injection is refused; a stored one never breaks downloads', async () => {
      for (const contentType of ['image/jpeg;\r\nX-Evil: 1', 'image/jpeg; charset=binary', 'image/jpeg\u0007', ' image/jpeg']) {
        assertJobApiError(await api.createJob(1, [{ ...declare(image), contentType }]), 400, 'UNSUPPORTED_MEDIA_TYPE');
      }
      // Rows written before the check existed: downloads still answer, with a neutral type.
      const jobId = await submit(api, 1, image);
      await api.waitFor(jobId);
      await server.runtime.db.kysely.updateTable('job_inputs').set({ content_type: 'image/jpeg;\r\nX-Evil: 1' }).where('job_id', '=', jobId).execute();
      const detail = (await api.get(jobId)).body;
      const artifact = detail.artifacts.find((a: { kind: string }) => a.kind === 'input');
      const download = await fetch(artifact.downloadUrl);
      assert.equal(download.status, 200);
      assert.equal(download.headers.get('content-type'), 'application/octet-stream');
      assert.equal(download.headers.get('x-evil'), null);
    });

    test('4. parameters nested 5,000 levels deep or too large: a clear 400, not a stack overflow', async () => {
      const deep = `{"inputs":[${JSON.stringify(declare(image))}],"parameters":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
      assertJobApiError(await api.call('POST', '/jobs?taskTypeId=1', deep), 400, 'VALIDATION_ERROR', /nested more than/);
      let nine: Record<string, unknown> = { leaf: 1 };
      for (let i = 0; i < 8; i++) nine = { a: nine };
      assertJobApiError(await api.createJob(1, [declare(image)], { parameters: nine }), 400, 'VALIDATION_ERROR', /at most 8 levels/);
      const big = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, 'x'.repeat(400)]));
      assertJobApiError(await api.createJob(1, [declare(image)], { parameters: big }), 400, 'VALIDATION_ERROR', /at most 16384 bytes/);
      assert.equal((await api.createJob(1, [declare(image)], { parameters: { a: { b: { c: 1 } } } })).status, 200);
    });

    test('6. JSON bodies are taken as typed: no coercion of booleans, arrays, hex strings or numbers', async () => {
      const valid = declare(image);
      for (const input of [{ ...valid, sizeBytes: true }, { ...valid, sizeBytes: [valid.sizeBytes] }, { ...valid, sizeBytes: '0x10' }, { ...valid, sizeBytes: String(valid.sizeBytes) }, { ...valid, fileName: 123 }]) {
        assertJobApiError(await api.call('POST', '/jobs?taskTypeId=1', { inputs: [input] }), 400, 'VALIDATION_ERROR');
      }
      for (const taskTypeId of [true, [1], 1.5, { $gt: 0 }]) {
        const answer = await api.call('POST', '/jobs', { inputs: [valid], taskTypeId });
        assert.equal(answer.status, 400, JSON.stringify(answer.body));
        assert.ok(['VALIDATION_ERROR', 'INVALID_TASK_TYPE'].includes(answer.body.code));
      }
      // The documented forms: a number, or a numeric string in the body (SPEC.md §4.1).
      assert.equal((await api.call('POST', '/jobs', { inputs: [valid], taskTypeId: '1' })).status, 200);
      assert.equal((await api.call('POST', '/jobs', { inputs: [valid], taskTypeId: 1 })).status, 200);
      // Query strings are text: their numbers are still read from digits.
      assert.equal((await api.list('?page=1&limit=5')).status, 200);
    });

    test("7. Node's parser errors in the API's shape; finalize after cancel or delete says so; IPv6 spellings of private addresses; no server paths", async () => {
      for (const request of [
        'GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n',
        'POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n',
      ]) {
        const answer = await rawHttp(server.url, request);
        assert.match(answer, /^HTTP\/1\.1 400 /);
        const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Body;
        assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'statusCode']);
        assert.equal(body.statusCode, 400);
      }

      const cancelled = await submit(api, 1, image, 'image/jpeg', false);
      assert.equal((await api.cancel(cancelled)).status, 200);
      assertJobApiError(await api.finalize(cancelled), 400, 'JOB_ALREADY_FINALIZED', /is cancelled/);
      const deleted = await submit(api, 1, image, 'image/jpeg', false);
      assert.equal((await api.remove(deleted)).status, 204);
      assertJobApiError(await api.finalize(deleted), 400, 'JOB_NOT_FOUND');

      for (const host of ['[64:ff9b::7f00:1]', '[64:ff9b::10.0.0.1]', '[::ffff:0:7f00:1]', '[::ffff:0:192.168.1.1]', '[::ffff:7f00:1]', '[64:ff9b:1::a00:1]']) {
        assertJobApiError(await api.createJob(1, [declare(image)], { webhookUrl: `http://${host}:8080/hook` }), 400, 'VALIDATION_ERROR', /private/);
      }
      assert.equal((await api.createJob(1, [declare(image)], { webhookUrl: 'http://[64:ff9b::808:808]/hook' })).status, 200, 'a public IPv4 through NAT64 is fine');

      // ffmpeg fails on a container with nothing in it: its message names no server path.
      const notVideo = new Uint8Array([0, 0, 0, 0x18, ...new TextEncoder().encode('ftypisom'), ...new Uint8Array(200)]);
      const failed = await api.waitFor(await submit(api, 4, notVideo, 'video/mp4'));
      assert.equal(failed.status, 'failed');
      assert.ok(failed.errorMessage.length > 10);
      assert.ok(!failed.errorMessage.includes(server.dataDir), failed.errorMessage);
      assert.doesNotMatch(failed.errorMessage, /\/(tmp|var|home|root|work)\//);
    });

    test('8. a task type without a detector is refused at creation: no job, no charge', async () => {
      const before = (await server.runtime.repos.tenants.find(tenantId))!;
      const listed = (await api.list('?limit=100')).body.pagination.total;
      const refused = await withoutDetector(3, () => api.createJob(3, [{ ...declare(image), contentType: 'video/mp4', fileName: 'clip.mp4' }]));
      assertJobApiError(refused, 400, 'TASK_TYPE_UNAVAILABLE', /ai-video-detection/);
      const after = (await server.runtime.repos.tenants.find(tenantId))!;
      assert.deepEqual([after.balance, after.reserved], [before.balance, before.reserved]);
      assert.equal((await api.list('?limit=100')).body.pagination.total, listed);
    });

    test('5. a revoked key is refused at once by the process that revoked it, and by another API process without waiting out its cache', async () => {
      const key = await server.apiKey(tenantId);
      const keyId = (await server.runtime.credentials.listApiKeys(tenantId)).at(-1)!.keyId;
      assert.equal((await client(server.url, key).list()).status, 200);
      // The last use is written after the answer, without holding up the request.
      const listed = await eventually(async () => (await server.runtime.credentials.listApiKeys(tenantId)).find((k) => k.keyId === keyId)!, (k) => k.lastUsedAt !== null);
      assert.ok(listed.lastUsedAt, 'the key was used');
      assert.equal(listed.revokedAt, null);
      await server.runtime.credentials.revokeApiKey(keyId);
      assertJobApiError(await client(server.url, key).list(), 401, 'INVALID_API_KEY');
      assert.ok((await server.runtime.credentials.listApiKeys(tenantId)).find((k) => k.keyId === keyId)!.revokedAt);

      if (!database) return; // one SQLite file serves one process
      const other = await startServer({ DATABASE_URL: database.url, DATA_DIR: server.dataDir }, 'api');
      try {
        const second = await server.apiKey(tenantId);
        const secondId = (await server.runtime.credentials.listApiKeys(tenantId)).at(-1)!.keyId;
        assert.equal((await client(other.url, second).list()).status, 200, 'cached by the other process');
        const revokedAt = Date.now();
        await server.runtime.credentials.revokeApiKey(secondId);
        let refusedAfter: number | null = null;
        while (Date.now() - revokedAt < 4_000) {
          if ((await client(other.url, second).list()).status === 401) {
            refusedAfter = Date.now() - revokedAt;
            break;
          }
          await sleep(50);
        }
        // The cache would have kept it for 5 s: NOTIFY reached the other process first.
        assert.ok(refusedAfter !== null, 'the other API process still accepted the key 4 s after it was revoked');
      } finally {
        await other.close();
      }
    });
  });
}
