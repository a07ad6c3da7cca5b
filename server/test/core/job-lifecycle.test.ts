/** The job API end to end over real HTTP (SPEC.md §3–§4): every endpoint and its fields. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { client, declare, jpeg, put, startServer, submit, type TestServer } from '../helpers.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('job lifecycle', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let tenantId: string;

  before(async () => {
    server = await startServer();
    ({ tenantId } = await server.tenant(100));
    api = client(server.url, await server.apiKey(tenantId));
  });
  after(() => server.close());

  test('create → upload → finalize → completed, with every documented field', async () => {
    const image = await jpeg();
    const created = await api.createJob(1, [declare(image)]);
    assert.equal(created.status, 200);
    const job = created.body;
    assert.equal(typeof job.jobId, 'string');
    assert.equal(job.id, job.jobId);
    assert.equal(job.taskTypeId, 1);
    assert.equal(job.status, 'waiting_for_finalize');
    assert.match(job.createdAt, ISO_MS);
    assert.match(job.updatedAt, ISO_MS);
    assert.deepEqual(Object.keys(job.inputs[0]).sort(), ['contentType', 'fileName', 'sizeBytes', 'slotName', 'uploadUrl', 'uploadUrlExpiresAt']);
    assert.equal(job.job.id, job.jobId);
    assert.equal(job.job.tenantId, tenantId);
    assert.equal(job.job.cost, 1);

    // Without finalize nothing happens.
    assert.equal((await put(job.inputs[0].uploadUrl, image, 'image/jpeg')).status, 200);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await api.get(job.jobId)).body.status, 'waiting_for_finalize');

    const finalized = await api.finalize(job.jobId);
    assert.equal(finalized.status, 200);
    assert.ok(['queued', 'processing'].includes(finalized.body.status));
    assert.match(finalized.body.queuedAt, ISO_MS);
    assert.equal(typeof finalized.body.message, 'string');

    const done = await api.waitFor(job.jobId);
    assert.equal(done.status, 'completed', done.errorMessage);
    assert.equal(done.taskTypeSlug, 'ai-image-detection');
    assert.match(done.completedAt, ISO_MS);
    assert.equal(done.inputs[0].uploadUrl, undefined);
    assert.deepEqual(done.inputs[0], declare(image));
    // Task type 1's result (SPEC.md §2.4) inside the common envelope (DESIGN.md §3).
    assert.equal(typeof done.result.confidence, 'number');
    assert.equal(typeof done.result.isAiGenerated, 'boolean');
    assert.ok(done.result.score >= 0 && done.result.score <= 1);
    assert.ok(['authentic', 'manipulated', 'inconclusive'].includes(done.result.verdict));
    assert.ok(Array.isArray(done.result.analysisDetails.signals));

    // Artifacts: the input and the result JSON, downloadable without an auth header.
    const kinds = done.artifacts.map((a: { kind: string }) => a.kind).sort();
    assert.deepEqual(kinds, ['input', 'result']);
    const inputArtifact = done.artifacts.find((a: { kind: string }) => a.kind === 'input');
    const downloaded = Buffer.from(await (await fetch(inputArtifact.downloadUrl)).arrayBuffer());
    assert.ok(downloaded.equals(image));
    const resultArtifact = done.artifacts.find((a: { kind: string }) => a.kind === 'result');
    assert.deepEqual(await (await fetch(resultArtifact.downloadUrl)).json(), done.result);
    // Change the signature's first character to a different one (always a real change).
    const tampered = resultArtifact.downloadUrl.replace(/sig=(.)/, (_m: string, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
    assert.equal((await fetch(tampered)).status, 403);

    // A client polling the job sees the same URLs (cacheable), valid for at least the
    // configured TTL (3600 s by default) and at most a minute more.
    const before = Date.now();
    const urls = async () => (await api.get(job.jobId)).body.artifacts.map((a: { downloadUrl: string }) => a.downloadUrl).join(' ');
    const pause = () => new Promise((r) => setTimeout(r, 1100));
    const first = await urls();
    await pause();
    const second = await urls();
    await pause();
    const third = await urls();
    // Polls a second apart (URLs signed per second would differ) cross at most one whole
    // minute in between, so two neighbours must agree.
    assert.ok(first === second || second === third, 'download URLs change on every poll');
    const expires = Number(new URL(third.split(' ')[0]!).searchParams.get('expires')) * 1000;
    assert.ok(expires >= before + 3600_000 && expires <= Date.now() + 3600_000 + 60_000, `expires ${new Date(expires).toISOString()}`);
  });

  test('task type in the body as a numeric string, and empty JSON bodies on finalize, GET and DELETE', async () => {
    const image = await jpeg();
    const created = await api.call('POST', '/jobs', { taskTypeId: '1', inputs: [declare(image)] });
    assert.equal(created.status, 200);
    assert.equal(created.body.taskTypeId, 1);
    await put(created.body.inputs[0].uploadUrl, image, 'image/jpeg');
    const json = { 'content-type': 'application/json' };
    assert.equal((await api.call('POST', `/jobs/${created.body.jobId}/finalize`, undefined, json)).status, 200);
    assert.equal((await api.call('GET', `/jobs/${created.body.jobId}`, undefined, json)).status, 200);
    await api.waitFor(created.body.jobId);
    const removed = await api.call('DELETE', `/jobs/${created.body.jobId}`, undefined, json);
    assert.equal(removed.status, 204);
    assert.equal(removed.body, null);
    assert.equal((await api.get(created.body.jobId)).status, 404);
    // Its inputs and artifacts went with it.
    assert.deepEqual(await server.runtime.repos.jobs.inputs(created.body.jobId), []);
    assert.deepEqual(await server.runtime.repos.jobs.artifacts(created.body.jobId), []);
  });

  test('the query parameter wins over the body when both name a task type', async () => {
    const image = await jpeg();
    const created = await api.call('POST', '/jobs?taskTypeId=5', { taskTypeId: 1, inputs: [declare(image)] });
    assert.equal(created.status, 200);
    assert.equal(created.body.taskTypeId, 5);
  });

  test('cancel a waiting job, then cancel again is 422; a completed job is 409', async () => {
    const image = await jpeg();
    const created = await api.createJob(1, [declare(image)]);
    const cancelled = await api.cancel(created.body.jobId);
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.status, 'cancelled');
    assert.equal(cancelled.body.taskTypeId, 1);
    assert.match(cancelled.body.updatedAt, ISO_MS);
    assert.equal(typeof cancelled.body.message, 'string');
    const again = await api.cancel(created.body.jobId);
    assert.equal(again.status, 422);
    assert.equal(again.body.code, 'JOB_NOT_CANCELLABLE');

    const jobId = await submit(api, 1, image);
    await api.waitFor(jobId);
    const late = await api.cancel(jobId);
    assert.equal(late.status, 409);
    assert.deepEqual(Object.keys(late.body).sort(), ['code', 'message', 'statusCode']);
    assert.equal(late.body.statusCode, 409);
  });

  test('a queued job can be cancelled and its credits come back', async () => {
    // A worker-less API process on its own data: the job stays queued (sharing the suite's
    // data directory would let the suite's worker claim it first).
    const apiOnly = await startServer({}, 'api');
    try {
      const { tenantId: queuedTenant } = await apiOnly.tenant(100);
      const queuedApi = client(apiOnly.url, await apiOnly.apiKey(queuedTenant));
      const balance = async () => (await apiOnly.runtime.repos.tenants.find(queuedTenant))!.balance;
      const before = await balance();
      const jobId = await submit(queuedApi, 1, await jpeg());
      assert.equal((await queuedApi.get(jobId)).body.status, 'queued');
      assert.equal(await balance(), before - 1);
      assert.equal((await queuedApi.cancel(jobId)).status, 200);
      assert.equal(await balance(), before);
    } finally {
      await apiOnly.close();
    }
  });

  test('list: newest first, pagination, limit cap, pageSize alias, status filter', async () => {
    const fresh = await startServer();
    try {
      const { tenantId: t } = await fresh.tenant(0);
      const listApi = client(fresh.url, await fresh.apiKey(t));
      const image = await jpeg();
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await listApi.createJob(1, [declare(image)])).body.jobId);
      await listApi.cancel(ids[0]!);

      const first = await listApi.list();
      assert.equal(first.status, 200);
      assert.equal(first.body.data.length, 10);
      assert.deepEqual(first.body.pagination, { page: 1, limit: 10, total: 12, pages: 2 });
      assert.deepEqual(Object.keys(first.body.data[0]).sort(), ['createdAt', 'id', 'jobId', 'status', 'taskTypeId', 'updatedAt']);
      assert.equal(first.body.data[0].jobId, ids[11]);

      const second = await listApi.list('?page=2&limit=10');
      assert.deepEqual(second.body.data.map((j: { jobId: string }) => j.jobId), [ids[1], ids[0]]);
      assert.equal((await listApi.list('?pageSize=5')).body.data.length, 5);
      assert.equal((await listApi.list('?limit=1000')).body.pagination.limit, 100);
      const cancelled = await listApi.list('?status=cancelled');
      assert.deepEqual(cancelled.body.data.map((j: { jobId: string }) => j.jobId), [ids[0]]);
      assert.equal((await listApi.list('?status=nonsense')).body.code, 'VALIDATION_ERROR');
      assert.equal((await listApi.list('?page=0')).status, 400);
    } finally {
      await fresh.close();
    }
  });

  test('tenants are isolated: another tenant’s job is 404 everywhere and absent from lists', async () => {
    const { tenantId: other } = await server.tenant(10);
    const otherApi = client(server.url, await server.apiKey(other));
    const jobId = (await api.createJob(1, [declare(await jpeg())])).body.jobId;
    assert.equal((await otherApi.get(jobId)).status, 404);
    assert.equal((await otherApi.get(jobId)).body.code, 'JOB_NOT_FOUND');
    assert.equal((await otherApi.cancel(jobId)).status, 404);
    assert.equal((await otherApi.remove(jobId)).status, 404);
    assert.equal((await otherApi.finalize(jobId)).body.code, 'JOB_NOT_FOUND');
    assert.equal((await otherApi.list()).body.pagination.total, 0);
    assert.equal((await api.get(jobId)).status, 200);
  });

  test('task types: the catalogue says which detectors are available', async () => {
    const response = await api.call('GET', '/task-types');
    assert.equal(response.status, 200);
    assert.equal(response.body.data.length, 11);
    const first = response.body.data[0];
    assert.equal(first.slug, 'ai-image-detection');
    assert.equal(first.available, true);
    assert.equal(first.timeoutSeconds, 300);
    assert.deepEqual(first.formats, ['JPEG', 'PNG']);
  });
});
