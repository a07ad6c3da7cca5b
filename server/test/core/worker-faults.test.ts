/**
 * The queue under faults, with real processes sharing one SQLite file: a worker killed
 * mid-job loses nothing (its lease runs out and another worker takes the job), and a
 * detector stuck past its task type's timeout fails its job while the worker lives on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, jpeg, sleep, spawnMediaproof, startServer, submit, waitForOutput } from '../helpers.js';

test('a worker killed with SIGKILL mid-job: the job is reclaimed after its lease and completes', async () => {
  const api = await startServer({ LEASE_SECONDS: '1' }, 'api');
  const workerEnv = { ...api.env, PORT: '0', LEASE_SECONDS: '1', POLL_INTERVAL_MS: '100', WORKER_CONCURRENCY: '1' };
  const doomed = spawnMediaproof(['serve', '--role', 'worker'], { ...workerEnv, DEBUG_DETECTOR_DELAY_MS: '20000' });
  let rescuer: ReturnType<typeof spawnMediaproof> | undefined;
  try {
    const { tenantId } = await api.tenant(10);
    const jobs = client(api.url, await api.apiKey(tenantId));
    const jobId = await submit(jobs, 1, await jpeg());
    await jobs.waitFor(jobId, (status) => status === 'processing', 90_000);
    doomed.kill('SIGKILL');
    await new Promise((resolve) => doomed.once('exit', resolve));
    rescuer = spawnMediaproof(['serve', '--role', 'worker'], workerEnv);
    const done = await jobs.waitFor(jobId, undefined, 90_000);
    assert.equal(done.status, 'completed', done.errorMessage);
    const row = (await api.runtime.repos.jobs.findById(jobId))!;
    assert.equal(row.attempts, 2, 'claimed once by the killed worker, once by the rescuer');
    const tenant = (await api.runtime.repos.tenants.find(tenantId))!;
    assert.deepEqual({ balance: tenant.balance, reserved: tenant.reserved }, { balance: 9, reserved: 0 });
  } finally {
    doomed.kill('SIGKILL');
    rescuer?.kill('SIGTERM');
    if (rescuer) await new Promise((resolve) => rescuer!.once('exit', resolve));
    await api.close();
  }
});

test('a detector stuck past the timeout: the job fails saying so, the worker goes on to the next job', async () => {
  const server = await startServer({
    TASK_OVERRIDES: JSON.stringify({ 'ai-image-detection': { timeoutSeconds: 1 } }),
    DEBUG_DETECTOR_DELAY_MS: '8000',
  });
  try {
    const { tenantId } = await server.tenant(10);
    const jobs = client(server.url, await server.apiKey(tenantId));
    const first = await submit(jobs, 1, await jpeg());
    const second = await submit(jobs, 1, await jpeg());
    const failed = await jobs.waitFor(first, undefined, 60_000);
    assert.equal(failed.status, 'failed');
    assert.match(failed.errorMessage, /exceeded the 1 s timeout of ai-image-detection/);
    const next = await jobs.waitFor(second, undefined, 60_000);
    assert.equal(next.status, 'failed');
    assert.match(next.errorMessage, /timeout/);
    // Failure released the credits of both jobs.
    assert.equal((await server.runtime.repos.tenants.find(tenantId))!.balance, 10);
  } finally {
    await server.close();
  }
});

test('SIGTERM: a worker stops claiming and exits cleanly; queued work waits for the next worker', async () => {
  const api = await startServer({}, 'api');
  const worker = spawnMediaproof(['serve', '--role', 'worker'], { ...api.env, PORT: '0', LOG_LEVEL: 'info' });
  try {
    await waitForOutput(worker, /mediaproof started/);
    worker.kill('SIGTERM');
    const code = await new Promise((resolve) => worker.once('exit', (c) => resolve(c)));
    assert.equal(code, 0);
    const { tenantId } = await api.tenant(10);
    const jobs = client(api.url, await api.apiKey(tenantId));
    const jobId = await submit(jobs, 1, await jpeg());
    await sleep(500);
    assert.equal((await jobs.get(jobId)).body.status, 'queued');
  } finally {
    worker.kill('SIGKILL');
    await api.close();
  }
});
