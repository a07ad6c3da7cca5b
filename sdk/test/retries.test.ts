/**
 * Retries (SPEC.md §7.4) against a real server behind a proxy that fails transiently:
 * 5xx, dropped connections and timeouts are retried with backoff; 401, 402 and 403 never are.
 * Also waitFor's polling: backoff, give-up, and sleeping on states it does not know.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Mediaproof, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError, ForbiddenError, InsufficientBalanceError,
  InvalidApiKeyError, ServiceUnavailableError, WaitTimeoutError, isRetryable, retryDelay,
} from '../src/index.js';
import { flakyProxy, jpeg, startServer, type FlakyProxy, type TestServer } from './setup.js';

describe('retries', () => {
  let server: TestServer;
  let proxy: FlakyProxy;
  let apiKey: string;
  let tenantId: string;
  let image: Buffer;

  before(async () => {
    // An API-only server: finalized jobs stay queued, which the waitFor tests rely on.
    server = await startServer({}, 'api');
    proxy = await flakyProxy(server.url);
    ({ tenantId } = await server.tenant(0));
    apiKey = await server.apiKey(tenantId);
    image = await jpeg();
  });
  after(async () => {
    await proxy.close();
    await server.close();
  });

  const client = (options: { maxRetries?: number; timeout?: number; apiKey?: string } = {}) =>
    new Mediaproof({ apiKey: options.apiKey ?? apiKey, baseUrl: proxy.url, maxRetries: options.maxRetries ?? 2, timeout: options.timeout });
  const count = (line: string) => proxy.seen.filter((seen) => seen === line).length;
  const inputs = () => [{ slotName: 'original', fileName: 'a.jpg', sizeBytes: image.byteLength, contentType: 'image/jpeg' }];

  test('503 twice, then success: the call succeeds after three attempts, with backoff', async () => {
    proxy.seen.length = 0;
    proxy.failNext(2, 'status-503');
    const started = Date.now();
    const types = await client().taskTypes.list();
    assert.equal(types.length, 11);
    assert.equal(count('GET /api/v1/task-types'), 3);
    // Backoff: ~0.5 s then ~1 s, each with at most 25 % jitter off.
    assert.ok(Date.now() - started >= 0.75 * 1500 - 50, `waited ${Date.now() - started} ms`);
  });

  test('more failures than retries: ServiceUnavailableError after maxRetries + 1 attempts', async () => {
    proxy.seen.length = 0;
    proxy.failNext(5, 'status-503');
    const error = await client({ maxRetries: 1 }).jobs.list().catch((e: unknown) => e);
    assert.ok(error instanceof ServiceUnavailableError);
    assert.equal(error.statusCode, 503);
    assert.equal(count('GET /api/v1/jobs'), 2);
    proxy.failNext(0, 'status-503');
  });

  test('a dropped connection is retried, and POSTs go through once the network is back', async () => {
    proxy.seen.length = 0;
    proxy.failNext(1, 'reset');
    const created = await client().jobs.create({ taskType: 1, inputs: inputs() });
    assert.equal(created.status, 'waiting_for_finalize');
    assert.equal(count('POST /api/v1/jobs'), 2);
  });

  test('a request that gets no answer times out and is retried', async () => {
    proxy.seen.length = 0;
    proxy.failNext(1, 'hang');
    const page = await client({ timeout: 300 }).jobs.list();
    assert.ok(Array.isArray(page.data));
    assert.equal(count('GET /api/v1/jobs'), 2);

    proxy.failNext(5, 'hang');
    const error = await client({ timeout: 200, maxRetries: 0 }).jobs.list().catch((e: unknown) => e);
    assert.ok(error instanceof APIConnectionTimeoutError);
    assert.equal(error.code, 'TIMEOUT');
    proxy.failNext(0, 'hang');
  });

  test('never retried: INVALID_API_KEY, FORBIDDEN, INSUFFICIENT_BALANCE', async () => {
    proxy.seen.length = 0;
    await assert.rejects(client({ apiKey: 'api_nope', maxRetries: 3 }).jobs.list(), InvalidApiKeyError);
    assert.equal(count('GET /api/v1/jobs'), 1);

    const readOnly = await server.apiKey(tenantId, ['jobs:read']);
    await assert.rejects(client({ apiKey: readOnly, maxRetries: 3 }).jobs.create({ taskType: 1, inputs: inputs() }), ForbiddenError);
    assert.equal(count('POST /api/v1/jobs'), 1);

    const sdk = client({ maxRetries: 3 });
    const job = await sdk.jobs.create({ taskType: 1, inputs: inputs() });
    await sdk.jobs.upload(job.inputs[0]!, image);
    await assert.rejects(sdk.jobs.finalize(job.jobId), InsufficientBalanceError);
    assert.equal(count(`POST /api/v1/jobs/${job.jobId}/finalize`), 1);
  });

  test('an unreachable server is APIConnectionError, after retrying', async () => {
    const closed = new Mediaproof({ apiKey, baseUrl: 'http://127.0.0.1:9', maxRetries: 1 });
    const error = await closed.jobs.list().catch((e: unknown) => e);
    assert.ok(error instanceof APIConnectionError);
    assert.equal(error.code, 'CONNECTION_ERROR');
    assert.match(error.message, /127\.0\.0\.1:9/);
  });

  test('retry policy: what is retryable, and the backoff grows with jitter up to a cap', () => {
    assert.equal(isRetryable(new ServiceUnavailableError('x', { code: 'SERVICE_UNAVAILABLE', statusCode: 503 })), true);
    assert.equal(isRetryable(new InsufficientBalanceError('x', { code: 'INSUFFICIENT_BALANCE', statusCode: 402 })), false);
    assert.equal(isRetryable(new APIUserAbortError()), false);
    for (let attempt = 0; attempt < 8; attempt++) {
      const delay = retryDelay(attempt);
      const base = Math.min(500 * 2 ** attempt, 8000);
      assert.ok(delay <= base && delay >= base * 0.75, `attempt ${attempt}: ${delay}`);
    }
  });

  test('waitFor gives up after timeoutMs with the last status; a signal stops it at once', async () => {
    const rich = await server.tenant(100);
    const sdk = new Mediaproof({ apiKey: await server.apiKey(rich.tenantId), baseUrl: server.url });
    const job = await sdk.jobs.create({ taskType: 1, inputs: inputs() });
    await sdk.jobs.upload(job.inputs[0]!, image);
    await sdk.jobs.finalize(job.jobId);
    const error = await sdk.jobs.waitFor(job.jobId, { intervalMs: 20, timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(error instanceof WaitTimeoutError);
    assert.equal(error.lastStatus, 'queued');
    assert.equal(error.jobId, job.jobId);

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await assert.rejects(sdk.jobs.waitFor(job.jobId, { intervalMs: 5_000, signal: controller.signal }), APIUserAbortError);
    assert.ok(Date.now() - started < 1_000);
  });

  test('waitFor sleeps on a status it does not know instead of spinning, then returns the terminal job', async () => {
    const rich = await server.tenant(100);
    const key = await server.apiKey(rich.tenantId);
    const setup = new Mediaproof({ apiKey: key, baseUrl: server.url });
    const job = await setup.jobs.create({ taskType: 1, inputs: inputs() });
    // A newer server could report a status this SDK has never heard of: here the real
    // answers for this job say "paused" twice, then the job is cancelled for real.
    let polls = 0;
    const rewriting: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).endsWith(`/jobs/${job.jobId}`) || init?.method !== 'GET') return response;
      polls++;
      const body = await response.json();
      if (polls <= 2) body.status = 'paused';
      if (polls === 2) await setup.jobs.cancel(job.jobId);
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
    };
    const sdk = new Mediaproof({ apiKey: key, baseUrl: server.url, fetch: rewriting });
    const started = Date.now();
    const done = await sdk.jobs.waitFor(job.jobId, { intervalMs: 10, maxIntervalMs: 300 });
    assert.equal(done.status, 'cancelled');
    assert.equal(polls, 3);
    // Two unknown answers, each followed by the longest interval (300 ms), not by 10 ms.
    assert.ok(Date.now() - started >= 590, `waited ${Date.now() - started} ms`);
  });
});
