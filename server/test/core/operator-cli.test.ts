/** The operator CLI of DESIGN.md §7, run as a real process, with the server running beside it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SERVER_DIR, client, jpeg, runCli, startServer, submit } from '../helpers.js';

test('tenant, key, client and credits commands print one JSON object each and work while the server runs', async () => {
  const server = await startServer();
  try {
    const env = { DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' };
    const tenant = await runCli(['tenant', 'create', '--name', 'acme', '--credits', '5', '--json'], env);
    assert.equal(tenant.code, 0, tenant.stderr);
    const { tenantId } = JSON.parse(tenant.stdout.trim());
    assert.equal(typeof tenantId, 'string');
    assert.equal(tenant.stdout.trim().split('\n').length, 1);

    const key = await runCli(['key', 'create', '--tenant', tenantId, '--name', 'ci', '--permissions', 'jobs:read,jobs:write,jobs:delete', '--json'], env);
    assert.equal(key.code, 0, key.stderr);
    const apiKey: string = JSON.parse(key.stdout).key;
    assert.match(apiKey, /^api_[0-9A-Za-z]{40,}$/);

    const mediaClient = await runCli(['client', 'create', '--tenant', tenantId, '--permissions', 'media:read,media:write', '--query-quota', '2', '--json'], env);
    assert.equal(mediaClient.code, 0, mediaClient.stderr);
    const { clientId, clientSecret } = JSON.parse(mediaClient.stdout);
    assert.ok(clientId && clientSecret);

    const grant = await runCli(['credits', 'grant', '--tenant', tenantId, '--amount', '7', '--json'], env);
    assert.equal(grant.code, 0, grant.stderr);
    assert.equal(JSON.parse(grant.stdout).balance, 12);

    // The key works against the running server at once, and the balance is the granted one.
    const jobs = client(server.url, apiKey);
    const done = await jobs.waitFor(await submit(jobs, 1, await jpeg()));
    assert.equal(done.status, 'completed');
    const shown = await runCli(['credits', 'show', '--tenant', tenantId, '--json'], env);
    assert.deepEqual(JSON.parse(shown.stdout), { balance: 11, reserved: 0, ledger: { balance: 11, reserved: 0 } });

    // key list / key revoke (DESIGN.md §7): the listing never shows a key's value again, and a
    // key revoked from the CLI is refused by the running server (its cache lives 5 s at most).
    const keyId: string = JSON.parse(key.stdout).keyId;
    const listed = await runCli(['key', 'list', '--tenant', tenantId, '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const keys = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(Object.keys(keys[0]!).sort(), ['createdAt', 'keyId', 'lastUsedAt', 'name', 'permissions', 'prefix', 'revokedAt']);
    assert.deepEqual([keys[0]!.keyId, keys[0]!.name, keys[0]!.prefix, keys[0]!.revokedAt], [keyId, 'ci', apiKey.slice(0, 10), null]);
    assert.deepEqual(keys[0]!.permissions, ['jobs:read', 'jobs:write', 'jobs:delete']);
    assert.equal(typeof keys[0]!.lastUsedAt, 'string', 'the key was used for the job above');
    assert.ok(!listed.stdout.includes(apiKey));
    const revoked = await runCli(['key', 'revoke', '--key', keyId, '--json'], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(JSON.parse(revoked.stdout).keyId, keyId);
    assert.match(JSON.parse(revoked.stdout).revokedAt, /^\d{4}-\d\d-\d\dT/);
    const deadline = Date.now() + 6_000;
    while ((await jobs.list()).status !== 401) {
      assert.ok(Date.now() < deadline, 'the revoked key still works 6 s later');
      await new Promise((r) => setTimeout(r, 200));
    }

    const clients = await runCli(['client', 'list', '--tenant', tenantId, '--json'], env);
    assert.equal(clients.code, 0, clients.stderr);
    const [listedClient] = JSON.parse(clients.stdout) as Array<Record<string, unknown>>;
    assert.deepEqual([listedClient!.clientId, listedClient!.revokedAt, listedClient!.queryQuota], [clientId, null, 2]);
    const clientRevoked = await runCli(['client', 'revoke', '--client', clientId, '--json'], env);
    assert.equal(clientRevoked.code, 0, clientRevoked.stderr);
    const mediaCall = await fetch(`${server.url}/api/media`, { headers: { 'x-client-id': clientId, 'x-client-secret': clientSecret } });
    assert.equal(mediaCall.status, 401, 'a revoked media client is refused at once (IAM001)');
    assert.equal(((await mediaCall.json()) as { code: string }).code, 'IAM001');
  } finally {
    await server.close();
  }
});

test('bad operator input fails with a message and a non-zero exit', async () => {
  const server = await startServer();
  try {
    const env = { DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' };
    const badPermission = await runCli(['key', 'create', '--tenant', 'x', '--name', 'n', '--permissions', 'jobs:everything', '--json'], env);
    assert.notEqual(badPermission.code, 0);
    assert.match(JSON.parse(badPermission.stdout).error, /unknown permission jobs:everything/);
    const noTenant = await runCli(['credits', 'grant', '--tenant', 'nope', '--amount', '1', '--json'], env);
    assert.notEqual(noTenant.code, 0);
    assert.match(JSON.parse(noTenant.stdout).error, /no tenant nope/);
    const badConfig = await runCli(['tenant', 'create', '--name', 'x'], { ...env, PORT: 'eighty' });
    assert.notEqual(badConfig.code, 0);
    assert.match(badConfig.stderr, /PORT must be an integer/);
  } finally {
    await server.close();
  }
});

test('the mediaproof binary works from any directory, with DATA_DIR relative to the caller; tenant list', async () => {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const { mkdtemp, rm, stat } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const elsewhere = await mkdtemp(join(tmpdir(), 'mediaproof-bin-'));
  try {
    const run = (...args: string[]) =>
      promisify(execFile)(join(SERVER_DIR, 'bin', 'mediaproof.js'), args, { cwd: elsewhere, env: { ...process.env, DATA_DIR: 'state', LOG_LEVEL: 'silent' } });
    const created = JSON.parse((await run('tenant', 'create', '--name', 'elsewhere', '--credits', '3', '--json')).stdout);
    assert.ok((await stat(join(elsewhere, 'state', 'mediaproof.sqlite'))).isFile(), 'the database is under the caller\'s ./state');
    const listed = JSON.parse((await run('tenant', 'list', '--json')).stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(listed.map((t) => [t.tenantId, t.name, t.balance]), [[created.tenantId, 'elsewhere', 3]]);
  } finally {
    await rm(elsewhere, { recursive: true, force: true });
  }
});
