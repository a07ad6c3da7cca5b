/**
 * Faults in scale-out mode (PostgreSQL + S3, separate API and worker processes): a worker
 * killed mid-job, a detector that hangs past its timeout, a transient object-store failure,
 * a graceful stop with a job in flight, and PostgreSQL stopped and restarted under load.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { client, declare, jpeg, sleep } from '../helpers.js';
import { createTestDatabase, direct, postgresSkipReason, scrapeCounter, spawnRole, startS3, type Direct, type Proc, type TestDatabase, type TestS3 } from './harness.js';
import { privatePostgres } from './private-postgres.js';
import { S3ObjectStore } from '../../src/repositories/s3-object-store.js';

const skip = await postgresSkipReason();
type Api = ReturnType<typeof client>;

async function submit(api: Api, taskTypeId: number, image: Buffer): Promise<string> {
  const created = await api.createJob(taskTypeId, [declare(image)]);
  if (created.status !== 200) throw Object.assign(new Error(JSON.stringify(created.body)), { status: created.status });
  const put = await fetch(created.body.inputs[0].uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: image as unknown as BodyInit });
  assert.equal(put.status, 200);
  const finalized = await api.finalize(created.body.jobId);
  if (finalized.status !== 200) throw Object.assign(new Error(JSON.stringify(finalized.body)), { status: finalized.status });
  return created.body.jobId;
}

describe('faults on PostgreSQL + S3', { skip, timeout: 200_000 }, () => {
  let database: TestDatabase;
  let s3: TestS3;
  let db: Direct;
  let api: Proc;
  let jobs: Api;
  let tenantId: string;
  let image: Buffer;
  const started: Proc[] = [];
  let env: Record<string, string>;

  const worker = async (extra: Record<string, string> = {}) => {
    const proc = await spawnRole('worker', { ...env, ...extra });
    started.push(proc);
    return proc;
  };

  const ledgerKinds = async (jobId: string) => (await db.repos.ledger.entriesForJob(jobId)).map((entry) => entry.kind).sort();


  before(async () => {
    database = await createTestDatabase();
    s3 = await startS3();
    env = { DATABASE_URL: database.url, ...s3.env, POLL_INTERVAL_MS: '200', LEASE_SECONDS: '1' };
    api = await spawnRole('api', env);
    started.push(api);
    db = await direct(database.url);
    tenantId = await db.tenant(1000);
    jobs = client(api.url, await db.apiKey(tenantId));
    image = await jpeg(48, 32);
  });

  after(async () => {
    await Promise.all(started.map((proc) => proc.stop('SIGKILL')));
    await db?.close();
    await s3?.close();
    await database?.drop();
  });

  test('kill -9 of a worker mid-job: the lease runs out, another worker reclaims and completes it', async () => {
    const slow = await worker({ DEBUG_DETECTOR_DELAY_MS: '3000' });
    const jobId = await submit(jobs, 1, image);
    await jobs.waitFor(jobId, (status) => status === 'processing', 20_000);
    const held = await db.repos.jobs.findById(jobId);
    assert.match(held!.locked_by!, new RegExp(`:${slow.child.pid}:`));
    slow.child.kill('SIGKILL');
    await slow.exited;

    await worker();
    const done = await jobs.waitFor(jobId, undefined, 30_000);
    assert.equal(done.status, 'completed', done.errorMessage);
    const row = (await db.repos.jobs.findById(jobId))!;
    assert.equal(row.attempts, 2);
    assert.equal(row.locked_by, null);
    assert.deepEqual(await ledgerKinds(jobId), ['capture', 'reserve']);
  });

  test('a transient object-store failure is retried with backoff, then fails with the reason and releases the credits', async () => {
    // The worker from the previous test is running: stop it so the job waits for us.
    await Promise.all(started.filter((proc) => proc.role === 'worker').map((proc) => proc.stop('SIGTERM')));
    const jobId = await submit(jobs, 1, image);
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: s3.env.AWS_SECRET_ACCESS_KEY });
    const store = new S3ObjectStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
    await store.deletePrefix(`jobs/${jobId}/`);
    store.close();

    const retrying = await worker({ MAX_ATTEMPTS: '2' });
    const done = await jobs.waitFor(jobId, undefined, 30_000);
    assert.equal(done.status, 'failed');
    assert.match(done.errorMessage, /^Processing failed after 2 attempts: could not read input "original" from the object store/);
    const row = (await db.repos.jobs.findById(jobId))!;
    assert.equal(row.attempts, 2);
    // The retry waited (backoff), it did not spin.
    assert.ok(Date.parse(row.updated_at) - Date.parse(row.started_at!) >= 900, `retried after ${Date.parse(row.updated_at) - Date.parse(row.started_at!)} ms`);
    assert.deepEqual(await ledgerKinds(jobId), ['release', 'reserve']);
    assert.equal(retrying.child.exitCode, null);
    await retrying.stop('SIGTERM');
  });

  test('a detector that hangs past its timeout: the job fails saying so, the worker lives on and runs the next job', async () => {
    const hanging = await worker({ TASK_OVERRIDES: JSON.stringify({ 'ai-image-detection': { timeoutSeconds: 1 } }), DEBUG_DETECTOR_DELAY_MS: '4000' });
    const slowId = await submit(jobs, 1, image);
    const failed = await jobs.waitFor(slowId, undefined, 30_000);
    assert.equal(failed.status, 'failed');
    assert.match(failed.errorMessage, /exceeded the 1 s timeout of ai-image-detection/);
    assert.deepEqual(await ledgerKinds(slowId), ['release', 'reserve']);

    // The next job (a task type without the 1 s override) runs on the same process.
    const nextId = await submit(jobs, 5, image);
    const next = await jobs.waitFor(nextId, undefined, 60_000);
    assert.equal(next.status, 'completed', next.errorMessage);
    // Both ran on this process (no other worker runs now).
    assert.equal(await scrapeCounter(hanging.url, 'mediaproof_jobs_ended_total', 'status="failed"'), 1);
    assert.equal(await scrapeCounter(hanging.url, 'mediaproof_jobs_ended_total', 'status="completed"'), 1);
    assert.equal(hanging.child.exitCode, null);
    await hanging.stop('SIGTERM');
  });

  test('SIGTERM with a job in flight: the worker stops claiming, finishes the job, exits 0', async () => {
    // A grace far above the job's length: on a loaded machine the first job of a fresh worker
    // (detector thread start, model loading) can take longer than the default 10 s.
    const draining = await worker({ DEBUG_DETECTOR_DELAY_MS: '1500', SHUTDOWN_GRACE_SECONDS: '120' });
    const first = await submit(jobs, 1, image);
    await jobs.waitFor(first, (status) => status === 'processing', 20_000);
    const second = await submit(jobs, 1, image);
    assert.equal(await draining.stop('SIGTERM', 150_000), 0);
    assert.equal((await jobs.get(first)).body.status, 'completed');
    // It took nothing new while stopping.
    assert.equal((await jobs.get(second)).body.status, 'queued');
    await worker();
    assert.equal((await jobs.waitFor(second, undefined, 30_000)).status, 'completed');
  });

  // The private cluster of this test process (private-postgres.ts), never the machine's own.
  test('PostgreSQL stopped and restarted under load: processes reconnect, no job is lost or stuck', async () => {
    const cluster = await privatePostgres();
    const pgctl = (action: 'start' | 'stop') => cluster[action]();
    const workers = [await worker({ DEBUG_DETECTOR_DELAY_MS: '200', LEASE_SECONDS: '2' }), await worker({ DEBUG_DETECTOR_DELAY_MS: '200', LEASE_SECONDS: '2' })];
    const accepted: string[] = [];
    let errors = 0;
    const statuses = new Set<number | string>();
    let loading = true;
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (loading) {
          try {
            accepted.push(await submit(jobs, 1, image));
          } catch (error) {
            statuses.add((error as { status?: number }).status ?? `${(error as Error).message}`.slice(0, 200));
            errors++;
            await sleep(200);
          }
        }
      }),
    );
    try {
      await sleep(2500);
      await pgctl('stop');
      await sleep(3000);
    } finally {
      await pgctl('start');
    }
    await sleep(4000);
    loading = false;
    await load;
    assert.ok(errors > 0, 'the outage was felt by the API clients');
    // The API says 503 (retry) while its database is away, never 500.
    assert.deepEqual([...statuses], [503], api.problems());
    assert.ok(accepted.length > 10, `jobs accepted: ${accepted.length}`);

    // Every job that finalize accepted ends completed; nothing is left queued or processing.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const open = await db.db.kysely.selectFrom('jobs').select('id').where('status', 'in', ['queued', 'processing']).execute();
      if (!open.length) break;
      if (Date.now() > deadline) assert.fail(`${open.length} jobs still queued or processing 60 s after the restart`);
      await sleep(250);
    }
    const rows = await db.db.kysely.selectFrom('jobs').select(['id', 'status', 'error_message']).where('id', 'in', accepted).execute();
    assert.equal(rows.length, accepted.length);
    for (const row of rows) assert.equal(row.status, 'completed', `${row.id}: ${row.error_message}`);
    const tenant = (await db.repos.tenants.find(tenantId))!;
    assert.deepEqual(await db.repos.ledger.totals(tenantId), { balance: tenant.balance, reserved: tenant.reserved });
    assert.equal(tenant.reserved, 0);

    for (const proc of [api, ...workers]) {
      assert.equal(proc.child.exitCode, null, `${proc.role} survived:\n${proc.problems()}`);
      assert.equal((await fetch(`${proc.url}/readyz`)).status, 200);
    }
    assert.match(workers[0]!.output() + workers[1]!.output(), /LISTEN connection lost; reconnecting/);
    console.log(`# PostgreSQL restart under load: ${accepted.length} jobs accepted, ${errors} client errors during the outage, all accepted jobs completed`);
  });
});
