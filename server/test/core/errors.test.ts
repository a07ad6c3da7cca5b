/** Every error code of SPEC.md §7 and DESIGN.md §2, with the `{code, statusCode, message}` shape. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { client, declare, jpeg, put, startServer, submit, type TestServer } from '../helpers.js';

function assertError(response: { status: number; body: { code: string; statusCode: number; message: string } }, status: number, code: string) {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.deepEqual(Object.keys(response.body).sort(), ['code', 'message', 'statusCode']);
  assert.equal(response.body.code, code);
  assert.equal(response.body.statusCode, status);
  assert.ok(response.body.message.length > 0);
}

describe('errors', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let tenantId: string;

  before(async () => {
    server = await startServer();
    ({ tenantId } = await server.tenant(1000));
    api = client(server.url, await server.apiKey(tenantId));
  });
  after(() => server.close());

  test('401 INVALID_API_KEY: missing, malformed, unknown key; checked before the body', async () => {
    assertError(await client(server.url).list(), 401, 'INVALID_API_KEY');
    assertError(await client(server.url, 'not-a-key').list(), 401, 'INVALID_API_KEY');
    assertError(await client(server.url, 'api_0000000000000000000000000000000000000000000').list(), 401, 'INVALID_API_KEY');
    assertError(await client(server.url).call('POST', '/jobs', '{not json'), 401, 'INVALID_API_KEY');
  });

  test('403 FORBIDDEN: read-only key cannot create; delete needs jobs:delete', async () => {
    const readOnly = client(server.url, await server.apiKey(tenantId, ['jobs:read']));
    assertError(await readOnly.createJob(1, [declare(await jpeg())]), 403, 'FORBIDDEN');
    const noDelete = client(server.url, await server.apiKey(tenantId, ['jobs:read', 'jobs:write']));
    const jobId = (await noDelete.createJob(1, [declare(await jpeg())])).body.jobId;
    assertError(await noDelete.remove(jobId), 403, 'FORBIDDEN');
    assert.equal((await noDelete.get(jobId)).status, 200);
    assertError(await client(server.url, await server.apiKey(tenantId, ['jobs:write'])).list(), 403, 'FORBIDDEN');
  });

  test('400 INVALID_TASK_TYPE: unknown, missing and non-numeric task types', async () => {
    const inputs = [declare(await jpeg())];
    assertError(await api.createJob(12, inputs), 400, 'INVALID_TASK_TYPE');
    assertError(await api.createJob(0, inputs), 400, 'INVALID_TASK_TYPE');
    assertError(await api.call('POST', '/jobs', { inputs }), 400, 'INVALID_TASK_TYPE');
    assertError(await api.call('POST', '/jobs', { taskTypeId: 'one', inputs }), 400, 'INVALID_TASK_TYPE');
    assertError(await api.call('POST', '/jobs', { taskTypeId: '1.5', inputs }), 400, 'INVALID_TASK_TYPE');
  });

  test('400 UNSUPPORTED_MEDIA_TYPE: declared type not supported by the task type', async () => {
    assertError(await api.createJob(1, [{ ...declare(await jpeg()), contentType: 'application/pdf' }]), 400, 'UNSUPPORTED_MEDIA_TYPE');
    assertError(await api.createJob(2, [{ ...declare(await jpeg()), contentType: 'image/jpeg' }]), 400, 'UNSUPPORTED_MEDIA_TYPE');
    assertError(await api.createJob(1, [{ ...declare(await jpeg()), contentType: 'image/gif' }]), 400, 'UNSUPPORTED_MEDIA_TYPE');
    // A MediaRecorder blob's type: refused (only bare types are stored and signed), saying which type to declare.
    const recorded = await api.createJob(2, [{ contentType: 'audio/webm;codecs=opus', fileName: 'note.webm', sizeBytes: 1000, slotName: 'original' }]);
    assertError(recorded, 400, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(recorded.body.message, /declare the media type alone, "audio\/webm"/);
    const withVideo = await api.createJob(2, [{ contentType: 'video/webm; codecs="vp8, opus"', fileName: 'call.webm', sizeBytes: 1000, slotName: 'original' }]);
    assert.match(withVideo.body.message, /not supported by ai-audio-detection/, 'a video type stays unsupported by an audio task, parameters or not');
  });

  test('400 VALIDATION_ERROR: malformed JSON, missing fields, wrong types, unknown slots', async () => {
    const image = await jpeg();
    assertError(await api.call('POST', '/jobs?taskTypeId=1', '{"inputs": ['), 400, 'VALIDATION_ERROR');
    assertError(await api.call('POST', '/jobs?taskTypeId=1', {}), 400, 'VALIDATION_ERROR');
    assertError(await api.createJob(1, []), 400, 'VALIDATION_ERROR');
    assertError(await api.createJob(1, [{ ...declare(image), sizeBytes: 'big' }]), 400, 'VALIDATION_ERROR');
    assertError(await api.createJob(1, [{ ...declare(image), sizeBytes: -1 }]), 400, 'VALIDATION_ERROR');
    assertError(await api.createJob(1, [{ contentType: 'image/jpeg', fileName: 'a.jpg', slotName: 'original' }]), 400, 'VALIDATION_ERROR');
    assertError(await api.createJob(1, [declare(image, 'image/jpeg', 'selfie')]), 400, 'VALIDATION_ERROR');
    assertError(await api.createJob(1, [declare(image), declare(image)]), 400, 'VALIDATION_ERROR');
    assertError(await api.createJob(8, [declare(image, 'image/jpeg', 'reference')]), 400, 'VALIDATION_ERROR');
    assertError(await api.call('POST', '/jobs?taskTypeId=1', 'x'.repeat(300_000)), 413, 'PAYLOAD_TOO_LARGE');
  });

  test('413 FILE_TOO_LARGE at create (per task type limit)', async () => {
    assertError(await api.createJob(1, [{ ...declare(await jpeg()), sizeBytes: 50 * 1024 * 1024 + 1 }]), 413, 'FILE_TOO_LARGE');
  });

  test('404 JOB_NOT_FOUND on get, cancel, delete; 400 on finalize (SPEC.md §4.3)', async () => {
    assertError(await api.get('00000000-0000-0000-0000-000000000000'), 404, 'JOB_NOT_FOUND');
    assertError(await api.cancel('missing'), 404, 'JOB_NOT_FOUND');
    assertError(await api.remove('missing'), 404, 'JOB_NOT_FOUND');
    assertError(await api.finalize('missing'), 400, 'JOB_NOT_FOUND');
  });

  test('400 UPLOAD_INCOMPLETE: finalize before the upload; the job stays waiting', async () => {
    const created = await api.createJob(1, [declare(await jpeg())]);
    assertError(await api.finalize(created.body.jobId), 400, 'UPLOAD_INCOMPLETE');
    assert.equal((await api.get(created.body.jobId)).body.status, 'waiting_for_finalize');
  });

  test('400 JOB_ALREADY_FINALIZED: a second finalize', async () => {
    const jobId = await submit(api, 1, await jpeg());
    assertError(await api.finalize(jobId), 400, 'JOB_ALREADY_FINALIZED');
  });

  test('mislabelled file: PNG bytes declared as JPEG fail finalize with UNSUPPORTED_MEDIA_TYPE', async () => {
    const sharp = (await import('sharp')).default;
    const png = await sharp(await jpeg()).png().toBuffer();
    const created = await api.createJob(1, [declare(png, 'image/jpeg')]);
    assert.equal((await put(created.body.inputs[0].uploadUrl, png, 'image/jpeg')).status, 200);
    assertError(await api.finalize(created.body.jobId), 400, 'UNSUPPORTED_MEDIA_TYPE');
    assert.equal((await api.get(created.body.jobId)).body.status, 'waiting_for_finalize');
  });

  test('truncated file: fewer bytes than declared are refused and nothing is stored', async () => {
    const image = await jpeg();
    const created = await api.createJob(1, [declare(image)]);
    assertError(await put(created.body.inputs[0].uploadUrl, image.subarray(0, image.length - 10), 'image/jpeg'), 400, 'UPLOAD_INCOMPLETE');
    assertError(await api.finalize(created.body.jobId), 400, 'UPLOAD_INCOMPLETE');
    // The failed attempt did not use up the URL: the whole file can still be sent.
    assert.equal((await put(created.body.inputs[0].uploadUrl, image, 'image/jpeg')).status, 200);
    assert.equal((await api.finalize(created.body.jobId)).status, 200);
  });

  test('a truncated JPEG that passes the magic-byte check fails its own job, not the worker', async () => {
    const image = await jpeg(400, 300);
    const truncated = image.subarray(0, 200);
    const jobId = await submit(api, 1, truncated);
    const failed = await api.waitFor(jobId);
    assert.equal(failed.status, 'failed');
    assert.ok(failed.errorMessage.length > 0);
    const next = await api.waitFor(await submit(api, 1, image));
    assert.equal(next.status, 'completed');
  });

  test('upload URL: tampered, replayed, wrong Content-Type, oversized body → rejected', async () => {
    const image = await jpeg();
    const created = await api.createJob(1, [declare(image)]);
    const url: string = created.body.inputs[0].uploadUrl;
    assertError(await put(url.replace(/sig=[^&]+/, 'sig=AAAA'), image, 'image/jpeg'), 403, 'UPLOAD_URL_INVALID');
    assertError(await put(url.replace(/expires=(\d+)/, (_m, e) => `expires=${Number(e) + 60}`), image, 'image/jpeg'), 403, 'UPLOAD_URL_INVALID');
    assertError(await put(url, image, 'image/png'), 403, 'UPLOAD_URL_INVALID');
    assertError(await put(url, Buffer.concat([image, Buffer.alloc(100)]), 'image/jpeg'), 413, 'FILE_TOO_LARGE');
    assert.equal((await put(url, image, 'image/jpeg')).status, 200);
    assertError(await put(url, image, 'image/jpeg'), 403, 'UPLOAD_URL_INVALID');
  });

  test('upload URL: expired', async () => {
    const shortLived = await startServer({ UPLOAD_URL_TTL_SECONDS: '1' });
    try {
      const { tenantId: t } = await shortLived.tenant(10);
      const shortApi = client(shortLived.url, await shortLived.apiKey(t));
      const image = await jpeg();
      const created = await shortApi.createJob(1, [declare(image)]);
      await new Promise((r) => setTimeout(r, 2100));
      const response = await put(created.body.inputs[0].uploadUrl, image, 'image/jpeg');
      assertError(response, 403, 'UPLOAD_URL_INVALID');
      assert.match(response.body.message, /expired/);
    } finally {
      await shortLived.close();
    }
  });

  test('409 JOB_PROCESSING: delete while processing; cancel while processing is 409', async () => {
    const slow = await startServer({ DEBUG_DETECTOR_DELAY_MS: '1500' });
    try {
      const { tenantId: t } = await slow.tenant(10);
      const slowApi = client(slow.url, await slow.apiKey(t));
      const jobId = await submit(slowApi, 1, await jpeg());
      await slowApi.waitFor(jobId, (s) => s === 'processing');
      assertError(await slowApi.remove(jobId), 409, 'JOB_PROCESSING');
      assertError(await slowApi.cancel(jobId), 409, 'JOB_NOT_CANCELLABLE');
      assert.equal((await slowApi.waitFor(jobId)).status, 'completed');
      assert.equal((await slowApi.remove(jobId)).status, 204);
    } finally {
      await slow.close();
    }
  });

  test('unknown routes answer 404 in the same shape', async () => {
    assertError(await api.call('GET', '/nothing-here'), 404, 'NOT_FOUND');
  });
});

describe('credits', () => {
  test('402 INSUFFICIENT_BALANCE on finalize: job and balance unchanged; pay-as-you-go may go negative', async () => {
    const server = await startServer();
    try {
      const { tenantId } = await server.tenant(0);
      const api = client(server.url, await server.apiKey(tenantId));
      const jobId = await submit(api, 1, await jpeg(), 'image/jpeg', false);
      const refused = await api.finalize(jobId);
      assertError(refused, 402, 'INSUFFICIENT_BALANCE');
      assert.match(refused.body.message, /top up|pay-as-you-go/i);
      assert.equal((await api.get(jobId)).body.status, 'waiting_for_finalize');
      assert.equal((await server.runtime.repos.tenants.find(tenantId))!.balance, 0);
      assert.equal((await server.runtime.repos.ledger.entriesForJob(jobId)).length, 0);

      const { tenantId: payg } = await server.tenant(0, { payAsYouGo: true });
      const paygApi = client(server.url, await server.apiKey(payg));
      const paidJob = await submit(paygApi, 1, await jpeg());
      assert.equal((await paygApi.waitFor(paidJob)).status, 'completed');
      assert.equal((await server.runtime.repos.tenants.find(payg))!.balance, -1);
    } finally {
      await server.close();
    }
  });

  test('50 finalizes race for a balance that covers 10: exactly 10 win, no overdraft, ledger balances', async () => {
    const server = await startServer({}, 'api');
    try {
      const { tenantId } = await server.tenant(10);
      const api = client(server.url, await server.apiKey(tenantId));
      const image = await jpeg();
      const jobIds = await Promise.all(Array.from({ length: 50 }, () => submit(api, 1, image, 'image/jpeg', false)));
      const results = await Promise.all(jobIds.map((id) => api.finalize(id)));
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, 10);
      assert.equal(statuses.filter((s) => s === 402).length, 40);
      const tenant = (await server.runtime.repos.tenants.find(tenantId))!;
      assert.equal(tenant.balance, 0);
      assert.equal(tenant.reserved, 10);
      assert.deepEqual(await server.runtime.repos.ledger.totals(tenantId), { balance: 0, reserved: 10 });
      assert.equal((await api.list('?status=queued')).body.pagination.total, 10);
      assert.equal((await api.list('?status=waiting_for_finalize')).body.pagination.total, 40);
    } finally {
      await server.close();
    }
  });

  test('completion captures, failure releases; ledger sums equal balances', async () => {
    const server = await startServer();
    try {
      const { tenantId } = await server.tenant(10);
      const api = client(server.url, await server.apiKey(tenantId));
      const good = await submit(api, 1, await jpeg());
      const bad = await submit(api, 1, (await jpeg(300, 300)).subarray(0, 300));
      assert.equal((await api.waitFor(good)).status, 'completed');
      assert.equal((await api.waitFor(bad)).status, 'failed');
      const tenant = (await server.runtime.repos.tenants.find(tenantId))!;
      assert.equal(tenant.balance, 9);
      assert.equal(tenant.reserved, 0);
      assert.deepEqual(await server.runtime.repos.ledger.totals(tenantId), { balance: 9, reserved: 0 });
      assert.deepEqual((await server.runtime.repos.ledger.entriesForJob(good)).map((e) => e.kind), ['reserve', 'capture']);
      assert.deepEqual((await server.runtime.repos.ledger.entriesForJob(bad)).map((e) => e.kind), ['reserve', 'release']);
    } finally {
      await server.close();
    }
  });
});
