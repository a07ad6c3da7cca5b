/**
 * Fast service tests: one API process (no worker, no port) driven with `app.inject`, with a
 * clock that stands still until the test moves it and an id source that counts. What expires
 * (upload URLs, console sessions, the verified-key cache, media quota periods) is checked at
 * its edges without waiting, and ids and timestamps are predicted exactly.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import type { Clock, Sources } from '../../src/repositories/clock.js';
import { grantCredits } from '../../src/services/credit.service.js';
import { ConsoleAuthService } from '../../src/services/console-auth.service.js';

class ManualClock implements Clock {
  constructor(private at: number) {}
  now(): number {
    return this.at;
  }
  advance(milliseconds: number): void {
    this.at += milliseconds;
  }
}

const START = Date.parse('2031-03-01T09:00:00.000Z');
const UPLOAD_TTL_SECONDS = 900;
const SESSION_SECONDS = 3600;
const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

describe('services on an injected clock and id source', () => {
  const clock = new ManualClock(START);
  let issued = 0;
  const sources: Sources = { clock, ids: () => uuid(++issued) };
  let runtime: Runtime;
  let app: FastifyInstance;
  let dataDir: string;
  let tenantId: string;
  let apiKey: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'mediaproof-clock-'));
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', UPLOAD_URL_TTL_SECONDS: String(UPLOAD_TTL_SECONDS), CONSOLE_SESSION_SECONDS: String(SESSION_SECONDS) });
    runtime = await createRuntime(config, 'api', pino({ level: 'silent' }), sources);
    app = runtime.app!;
    tenantId = (await runtime.transaction(async (repos) => {
      const row = await repos.tenants.insert('clock', false);
      await grantCredits(repos, row.id, 100);
      return row;
    })).id;
    apiKey = (await runtime.credentials.createApiKey(tenantId, 'clock', ['jobs:read', 'jobs:write', 'jobs:delete'])).key;
  });
  after(async () => {
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const auth = () => ({ authorization: `Bearer ${apiKey}` });
  async function createJob() {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/jobs',
      headers: auth(),
      payload: { taskTypeId: 1, inputs: [{ slotName: 'original', fileName: 'a.png', contentType: 'image/png', sizeBytes: 4 }] },
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.json();
  }
  const uploadPath = (job: { inputs: Array<{ uploadUrl: string }> }) => {
    const url = new URL(job.inputs[0]!.uploadUrl);
    return url.pathname + url.search;
  };

  test('a job takes its id from the id source and its times from the clock', async () => {
    const before = issued;
    const job = await createJob();
    assert.equal(job.jobId, uuid(before + 1));
    assert.equal(job.inputs[0].uploadUrlExpiresAt, new Date(clock.now() + UPLOAD_TTL_SECONDS * 1000).toISOString());
    const detail = (await app.inject({ method: 'GET', url: `/api/v1/jobs/${job.jobId}`, headers: auth() })).json();
    assert.equal(detail.createdAt, new Date(clock.now()).toISOString());
  });

  test('an upload URL works until its expiry second and is refused after it', async () => {
    const early = await createJob();
    const late = await createJob();
    clock.advance(UPLOAD_TTL_SECONDS * 1000 - 1000);
    const accepted = await app.inject({ method: 'PUT', url: uploadPath(early), headers: { 'content-type': 'image/png' }, payload: Buffer.from([1, 2, 3, 4]) });
    assert.equal(accepted.statusCode, 200, accepted.body);
    clock.advance(2000);
    const refused = await app.inject({ method: 'PUT', url: uploadPath(late), headers: { 'content-type': 'image/png' }, payload: Buffer.from([1, 2, 3, 4]) });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.json().code, 'UPLOAD_URL_INVALID');
    assert.match(refused.json().message, /expired/);
  });

  test('a key revoked by another process (no NOTIFY on SQLite) keeps working here for at most 5 s', async () => {
    const { id, key } = await runtime.credentials.createApiKey(tenantId, 'revoked elsewhere', ['jobs:read']);
    const list = () => app.inject({ method: 'GET', url: '/api/v1/jobs', headers: { authorization: `Bearer ${key}` } });
    assert.equal((await list()).statusCode, 200);
    // Revoked in the database, as another API process would: this process's cache is not told.
    await runtime.repos.credentials.revokeApiKey(id, new Date(clock.now()).toISOString());
    clock.advance(4900);
    assert.equal((await list()).statusCode, 200, 'within the documented 5 s bound the cached key still answers');
    clock.advance(200);
    const refused = await list();
    assert.equal(refused.statusCode, 401, refused.body);
  });

  test('a key revoked in this process is refused at once', async () => {
    const { id, key } = await runtime.credentials.createApiKey(tenantId, 'revoked here', ['jobs:read']);
    const list = () => app.inject({ method: 'GET', url: '/api/v1/jobs', headers: { authorization: `Bearer ${key}` } });
    assert.equal((await list()).statusCode, 200);
    await runtime.credentials.revokeApiKey(id);
    assert.equal((await list()).statusCode, 401);
  });

  test('a console session ends when its lifetime is over', async () => {
    const users = new ConsoleAuthService(runtime.repos, SESSION_SECONDS, sources);
    await users.createUser(tenantId, 'clock@example.com', 'a long enough password', 'member');
    const headers = { 'x-mediaproof-console': '1' };
    const signIn = await app.inject({ method: 'POST', url: '/console/api/session', headers, payload: { email: 'clock@example.com', password: 'a long enough password' } });
    assert.equal(signIn.statusCode, 200, signIn.body);
    assert.equal(signIn.json().expiresAt, new Date(clock.now() + SESSION_SECONDS * 1000).toISOString());
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const who = () => app.inject({ method: 'GET', url: '/console/api/session', headers: { ...headers, cookie } });
    clock.advance(SESSION_SECONDS * 1000 - 1000);
    assert.equal((await who()).statusCode, 200);
    clock.advance(2000);
    const expired = await who();
    assert.equal(expired.statusCode, 401, expired.body);
    assert.equal(expired.json().code, 'NOT_SIGNED_IN');
  });

  test('a media client’s quota opens again when its period turns', async () => {
    const { clientId, clientSecret } = await runtime.credentials.createMediaClient(tenantId, ['media:read'], { query: 1, mutation: null, periodSeconds: 60 });
    const read = () => app.inject({ method: 'GET', url: '/api/media', headers: { 'x-client-id': clientId, 'x-client-secret': clientSecret } });
    // Start at the beginning of a period, so both reads fall in it.
    clock.advance(60_000 - (clock.now() % 60_000));
    assert.equal((await read()).statusCode, 200);
    const limited = await read();
    assert.equal(limited.statusCode, 429, limited.body);
    assert.equal(limited.headers['retry-after'], '60');
    clock.advance(60_000);
    assert.equal((await read()).statusCode, 200);
  });
});
