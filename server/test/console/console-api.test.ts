/**
 * The console's own routes over real HTTP: sign-in (the same answer for a wrong password and
 * an unknown email, rate-limited, a cookie a script cannot read), the session on the job API
 * (only with the console's header), keys and clients per tenant and role, credits, peaks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeWavPcm16 } from '../../src/detectors/audio/pcm.js';
import { ConsoleAuthService } from '../../src/services/console-auth.service.js';
import { client, declare, eventually, put, runCli, sleep, startServer, type TestServer } from '../helpers.js';

const HEADER = { 'x-mediaproof-console': '1' };

describe('console API', () => {
  let server: TestServer;
  let tenantId: string;
  let otherTenantId: string;
  /** Session cookies signed in once (sign-ins are rate-limited per email). */
  let admin: string;
  let ops: string;

  /** Calls /console/api with an optional session cookie; returns status, body and set-cookie. */
  async function consoleCall(method: string, path: string, options: { cookie?: string; body?: unknown; headers?: Record<string, string> } = {}) {
    const response = await fetch(`${server.url}/console/api${path}`, {
      method,
      headers: { ...HEADER, ...(options.cookie ? { cookie: options.cookie } : {}), ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, body: (text ? JSON.parse(text) : null) as any, setCookie: response.headers.get('set-cookie') };
  }

  async function signIn(email: string, password: string): Promise<string> {
    const answer = await consoleCall('POST', '/session', { body: { email, password } });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.setCookie!.split(';')[0]!;
  }

  before(async () => {
    server = await startServer({ CONSOLE_LOGIN_ATTEMPTS_PER_MINUTE: '5' });
    ({ tenantId } = await server.tenant(50));
    ({ tenantId: otherTenantId } = await server.tenant(0));
    const users = new ConsoleAuthService(server.runtime.repos, 3600);
    await users.createUser(tenantId, 'Admin@Example.com', 'correct horse battery', 'admin');
    await users.createUser(tenantId, 'member@example.com', 'member password 1', 'member');
    await users.createUser(otherTenantId, 'ops@example.com', 'operator password', 'operator');
    await users.createUser(tenantId, 'target@example.com', 'target password', 'member');
    admin = await signIn('admin@example.com', 'correct horse battery');
    ops = await signIn('ops@example.com', 'operator password');
  });

  after(() => server?.close());

  test('a wrong password and an unknown email get the same answer; the cookie is HttpOnly and SameSite=Strict', async () => {
    const wrong = await consoleCall('POST', '/session', { body: { email: 'admin@example.com', password: 'not the password' } });
    const unknown = await consoleCall('POST', '/session', { body: { email: 'nobody@example.com', password: 'not the password' } });
    assert.equal(wrong.status, 401);
    assert.deepEqual(wrong.body, unknown.body);
    assert.deepEqual(wrong.body, { code: 'INVALID_CREDENTIALS', statusCode: 401, message: 'The email or password is wrong' });
    assert.equal(wrong.setCookie, null);

    const ok = await consoleCall('POST', '/session', { body: { email: ' ADMIN@example.com ', password: 'correct horse battery' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.role, 'admin');
    assert.equal(ok.body.tenant.id, tenantId);
    assert.match(ok.setCookie!, /^mediaproof_session=ses_\w+;/);
    assert.match(ok.setCookie!, /HttpOnly/);
    assert.match(ok.setCookie!, /SameSite=Strict/);
    assert.doesNotMatch(ok.setCookie!, /Secure/, 'plain http on loopback: not Secure');
  });

  test('sign-in without the console header is refused (a form posted from another site cannot send it)', async () => {
    const response = await fetch(`${server.url}/console/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@example.com', password: 'correct horse battery' }) });
    assert.equal(response.status, 403);
  });

  test('sign-in attempts are rate-limited per email and address, in the error shape', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await consoleCall('POST', '/session', { body: { email: 'target@example.com', password: `guess ${i}` } })).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429]);
    const limited = await consoleCall('POST', '/session', { body: { email: 'Target@example.com', password: 'target password' } });
    assert.equal(limited.status, 429, 'even the right password waits out the limit');
    assert.equal(limited.body.code, 'TOO_MANY_REQUESTS');
    assert.match(limited.body.message, /try again in \d+ s/);
    // Another account from the same address is not locked out by it.
    assert.equal((await consoleCall('POST', '/session', { body: { email: 'member@example.com', password: 'member password 1' } })).status, 200);
  });

  test('a session works on the job API only with the console header, and not after sign-out', async () => {
    const cookie = await signIn('member@example.com', 'member password 1');
    const api = client(server.url);
    assert.equal((await api.call('GET', '/jobs', undefined, { cookie, ...HEADER })).status, 200);
    const withoutHeader = await api.call('GET', '/jobs', undefined, { cookie });
    assert.equal(withoutHeader.status, 403);
    assert.match(withoutHeader.body.message, /x-mediaproof-console/);

    const created = await api.call('POST', '/jobs?taskTypeId=5', { inputs: [declare(Buffer.alloc(10))] }, { cookie, ...HEADER });
    assert.equal(created.status, 200, 'a session creates jobs for its tenant');

    assert.equal((await consoleCall('DELETE', '/session', { cookie })).status, 204);
    const after = await api.call('GET', '/jobs', undefined, { cookie, ...HEADER });
    assert.equal(after.status, 401);
    assert.equal(after.body.code, 'NOT_SIGNED_IN');
    assert.equal((await consoleCall('GET', '/session', { cookie })).status, 401);
  });

  test('a session expires', async () => {
    const shortLived = new ConsoleAuthService(server.runtime.repos, 1);
    const session = await shortLived.signIn('member@example.com', 'member password 1');
    assert.ok(session);
    const cookie = `mediaproof_session=${session.token}`;
    assert.equal((await consoleCall('GET', '/session', { cookie })).status, 200);
    await sleep(1100);
    assert.equal((await consoleCall('GET', '/session', { cookie })).body.code, 'NOT_SIGNED_IN');
  });

  test('admins create, list and revoke keys of their own tenant; the key works at once and stops at once', async () => {
    const cookie = admin;
    const created = await consoleCall('POST', '/keys', { cookie, body: { name: 'backend', permissions: ['jobs:read'] } });
    assert.equal(created.status, 200);
    assert.match(created.body.key, /^api_/);
    const api = client(server.url, created.body.key);
    assert.equal((await api.list()).status, 200);

    // The last use is written after the answer, without holding up the request.
    const listed = await eventually(() => consoleCall('GET', '/keys', { cookie }), (answer) => answer.body.data.some((key: { keyId: string; lastUsedAt: string | null }) => key.keyId === created.body.keyId && key.lastUsedAt !== null));
    const row = listed.body.data.find((key: { keyId: string }) => key.keyId === created.body.keyId);
    assert.equal(row.prefix, created.body.key.slice(0, 10));
    assert.equal(JSON.stringify(listed.body).includes(created.body.key), false, 'the value is never listed');
    assert.ok(row.lastUsedAt, 'last use is recorded');

    // Another tenant's admin (here: its operator) cannot revoke it.
    assert.equal((await consoleCall('DELETE', `/keys/${created.body.keyId}`, { cookie: ops })).status, 404);
    assert.equal((await api.list()).status, 200);

    const revoked = await consoleCall('DELETE', `/keys/${created.body.keyId}`, { cookie });
    assert.equal(revoked.status, 200);
    assert.equal((await api.list()).status, 401, 'revocation takes effect at once in this process');

    const bad = await consoleCall('POST', '/keys', { cookie, body: { name: 'x', permissions: ['jobs:everything'] } });
    assert.equal(bad.status, 400);
  });

  test('members run jobs but cannot manage keys or see other tenants; operators see all tenants and grant credits', async () => {
    const member = await signIn('member@example.com', 'member password 1');
    assert.equal((await consoleCall('GET', '/keys', { cookie: member })).status, 403);
    assert.equal((await consoleCall('POST', '/clients', { cookie: member, body: { permissions: ['media:read'] } })).status, 403);
    assert.equal((await consoleCall('GET', '/tenants', { cookie: member })).status, 403);
    assert.equal((await client(server.url).call('DELETE', '/jobs/none', undefined, { cookie: member, ...HEADER })).status, 403, 'members lack jobs:delete');

    const tenants = await consoleCall('GET', '/tenants', { cookie: ops });
    assert.ok(tenants.body.data.some((t: { id: string }) => t.id === tenantId));
    const granted = await consoleCall('POST', `/tenants/${tenantId}/credits`, { cookie: ops, body: { amount: 25 } });
    assert.equal(granted.status, 200);
    const credits = await consoleCall('GET', '/credits', { cookie: member });
    assert.equal(credits.body.balance, granted.body.balance);
    assert.equal(credits.body.ledger.items[0].kind, 'grant');
    assert.equal(credits.body.ledger.items[0].amount, 25);
    assert.match(credits.body.ledger.items[0].note, /ops@example.com/);
  });

  test('media clients: created with the secret shown once, listed, revoked', async () => {
    const cookie = admin;
    const created = await consoleCall('POST', '/clients', { cookie, body: { permissions: ['media:read', 'media:write'] } });
    assert.equal(created.status, 200);
    const listed = await consoleCall('GET', '/clients', { cookie });
    assert.ok(listed.body.data.some((c: { clientId: string }) => c.clientId === created.body.clientId));
    assert.equal(JSON.stringify(listed.body).includes(created.body.clientSecret), false);
    const media = () => fetch(`${server.url}/api/media`, { headers: { 'x-client-id': created.body.clientId, 'x-client-secret': created.body.clientSecret } });
    assert.equal((await media()).status, 200);
    assert.equal((await consoleCall('DELETE', `/clients/${created.body.clientId}`, { cookie })).status, 200);
    assert.equal((await media()).status, 401);
  });

  test("credits show a job's reservation and capture with its task type; peaks of an uploaded WAV", async () => {
    const cookie = admin;
    const api = client(server.url);
    const headers = { cookie, ...HEADER };
    // One second of a 440 Hz tone, then one of silence.
    const samples = new Float32Array(16_000);
    for (let i = 0; i < 8000; i++) samples[i] = 0.5 * Math.sin((2 * Math.PI * 440 * i) / 8000);
    const wav = encodeWavPcm16([samples], 8000);
    const created = await api.call('POST', '/jobs?taskTypeId=10', { inputs: [declare(wav, 'audio/wav', 'original', 'tone.wav')] }, headers);
    assert.equal((await put(created.body.inputs[0].uploadUrl, wav, 'audio/wav')).status, 200);
    assert.equal((await api.call('POST', `/jobs/${created.body.jobId}/finalize`, undefined, headers)).status, 200);
    let job;
    for (let i = 0; i < 600 && !['completed', 'failed'].includes((job = (await api.call('GET', `/jobs/${created.body.jobId}`, undefined, headers)).body).status); i++) await sleep(100);
    assert.equal(job.status, 'completed', job.errorMessage);

    const peaks = await consoleCall('GET', `/jobs/${created.body.jobId}/peaks?file=input-0&bins=20`, { cookie });
    assert.equal(peaks.status, 200, JSON.stringify(peaks.body));
    assert.equal(peaks.body.peaks.length, 20);
    assert.ok(Math.abs(peaks.body.durationSeconds - 2) < 0.05, `duration ${peaks.body.durationSeconds}`);
    assert.ok(peaks.body.peaks.slice(0, 9).every((p: number) => p > 0.4), 'the tone half is loud');
    assert.ok(peaks.body.peaks.slice(11).every((p: number) => p < 0.01), 'the silent half is quiet');
    const track = job.artifacts.find((a: { kind: string }) => a.kind === 'track');
    assert.equal((await consoleCall('GET', `/jobs/${created.body.jobId}/peaks?file=${track.id}&bins=20`, { cookie })).status, 200);
    assert.equal((await consoleCall('GET', `/jobs/${created.body.jobId}/peaks?file=nothing&bins=20`, { cookie })).status, 404);

    const credits = await consoleCall('GET', '/credits', { cookie });
    const kinds = credits.body.ledger.items.filter((e: { jobId: string }) => e.jobId === created.body.jobId).map((e: { kind: string; taskType: string }) => `${e.kind}:${e.taskType}`);
    assert.deepEqual(kinds.sort(), ['capture:audio-splitter', 'reserve:audio-splitter']);
    const today = credits.body.usage.find((u: { taskType: string }) => u.taskType === 'audio-splitter');
    assert.equal(today.credits, job.cost);
    assert.equal(today.jobs, 1);
  });

  test('operator CLI: user create prints the user id as JSON and refuses a duplicate email or a short password', async () => {
    const env = { ...server.env };
    const created = await runCli(['user', 'create', '--tenant', tenantId, '--email', 'cli@example.com', '--password', 'long enough pw', '--role', 'member', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.match(JSON.parse(created.stdout).userId, /\S+/);
    assert.equal((await consoleCall('POST', '/session', { body: { email: 'cli@example.com', password: 'long enough pw' } })).status, 200);
    const duplicate = await runCli(['user', 'create', '--tenant', tenantId, '--email', 'CLI@example.com', '--password', 'long enough pw', '--json'], env);
    assert.notEqual(duplicate.code, 0);
    assert.match(JSON.parse(duplicate.stdout).error, /exists already/);
    const short = await runCli(['user', 'create', '--tenant', tenantId, '--email', 'short@example.com', '--password', 'short', '--json'], env);
    assert.notEqual(short.code, 0);
    assert.match(JSON.parse(short.stdout).error, /at least 10 characters/);
  });
});
