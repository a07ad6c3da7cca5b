/**
 * Scale-out mode end to end: 2 API and 3 worker processes on one PostgreSQL database and one
 * S3-compatible bucket (s3rver behind a gate that checks SigV4 signatures as S3 does). 500 jobs
 * go through the HTTP API concurrently; every job must complete exactly once and the credit
 * ledger must balance to the credit.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { client, declare, jpeg } from '../helpers.js';
import { createTestDatabase, direct, pool, postgresSkipReason, scrapeCounter, spawnRole, startS3, type Direct, type Proc, type TestDatabase, type TestS3 } from './harness.js';
import { S3ObjectStore } from '../../src/repositories/s3-object-store.js';

const JOBS = 500;
const skip = await postgresSkipReason();

async function s3Put(url: string, data: Uint8Array, contentType: string): Promise<number> {
  const response = await fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body: data as unknown as BodyInit });
  await response.arrayBuffer();
  return response.status;
}

describe('scale-out: 2 API + 3 workers on PostgreSQL and S3', { skip, timeout: 240_000 }, () => {
  let database: TestDatabase;
  let s3: TestS3;
  let db: Direct;
  let apis: Proc[] = [];
  let workers: Proc[] = [];
  let tenantId: string;
  let key: string;
  const credits = 10_000;


  before(async () => {
    database = await createTestDatabase();
    s3 = await startS3();
    const env = { DATABASE_URL: database.url, ...s3.env, LEASE_SECONDS: '10', POLL_INTERVAL_MS: '500' };
    // All five start at once against an empty database: the migration lock must hold.
    [apis, workers] = await Promise.all([
      Promise.all([spawnRole('api', env), spawnRole('api', env)]),
      Promise.all([spawnRole('worker', env), spawnRole('worker', env), spawnRole('worker', env)]),
    ]);
    db = await direct(database.url);
    tenantId = await db.tenant(credits);
    key = await db.apiKey(tenantId);
  });

  after(async () => {
    await Promise.all([...apis, ...workers].map((proc) => proc.stop('SIGKILL')));
    await db?.close();
    await s3?.close();
    await database?.drop();
  });

  test('the migrations ran once, under the lock, for five processes starting together', async () => {
    const rows = await db.db.kysely.selectFrom('kysely_migration' as never).selectAll().execute();
    assert.equal(rows.length, Object.keys((await import('../../src/db/migrations.js')).MIGRATIONS).length);
  });

  test(`${JOBS} jobs created, uploaded and finalized concurrently all complete exactly once, and credits balance`, async () => {
    const image = await jpeg(48, 32);
    const started = Date.now();
    const ids = await pool(Array.from({ length: JOBS }, (_, i) => i), 24, async (i) => {
      const api = client(apis[i % apis.length]!.url, key);
      const created = await api.createJob(1, [declare(image)]);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.match(created.body.inputs[0].uploadUrl, new RegExp(`^${s3.endpoint}/${s3.bucket}/jobs/`));
      assert.equal(await s3Put(created.body.inputs[0].uploadUrl, image, 'image/jpeg'), 200);
      // Finalize through the other API process: any process may serve any step.
      const finalized = await client(apis[(i + 1) % apis.length]!.url, key).finalize(created.body.jobId);
      assert.equal(finalized.status, 200, JSON.stringify(finalized.body));
      return created.body.jobId as string;
    });
    const submitted = Date.now();

    const deadline = Date.now() + 180_000;
    let counts: Record<string, number> = {};
    for (;;) {
      const rows = await db.db.kysely.selectFrom('jobs').select(['status', (eb) => eb.fn.countAll<string>().as('n')]).groupBy('status').execute();
      counts = Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
      if ((counts.completed ?? 0) + (counts.failed ?? 0) >= JOBS) break;
      if (Date.now() > deadline) assert.fail(`jobs not done after 180 s: ${JSON.stringify(counts)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const drained = Date.now();
    console.log(
      `# ${JOBS} jobs: submitted in ${((submitted - started) / 1000).toFixed(1)} s, all completed ${((drained - started) / 1000).toFixed(1)} s after the first create ` +
        `(${(JOBS / ((drained - started) / 1000)).toFixed(1)} jobs/s end to end)`,
    );
    assert.deepEqual(counts, { completed: JOBS });
    assert.equal(new Set(ids).size, JOBS);

    // Exactly once: each job has one reserve and one capture in the ledger, one result
    // artifact, and the workers together counted exactly JOBS completions.
    const ledger = await db.db.kysely.selectFrom('credit_ledger').select(['job_id', 'kind']).where('tenant_id', '=', tenantId).where('job_id', 'is not', null).execute();
    const perJob = new Map<string, string[]>();
    for (const row of ledger) perJob.set(row.job_id!, [...(perJob.get(row.job_id!) ?? []), row.kind]);
    assert.equal(perJob.size, JOBS);
    for (const [jobId, kinds] of perJob) assert.deepEqual(kinds.sort(), ['capture', 'reserve'], `ledger of job ${jobId}`);
    const artifacts = await db.db.kysely.selectFrom('job_artifacts').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(artifacts.n), JOBS);
    const completions = await Promise.all(workers.map((worker) => scrapeCounter(worker.url, 'mediaproof_jobs_ended_total', 'status="completed"')));
    assert.equal(completions.reduce((a, b) => a + b, 0), JOBS, `completions per worker: ${completions}`);
    for (const count of completions) assert.ok(count > 0, `every worker took part: ${completions}`);
    console.log(`# completions per worker process: ${completions.join(', ')}`);

    // No credit lost or double-spent.
    const tenant = (await db.repos.tenants.find(tenantId))!;
    const costs = await db.db.kysely.selectFrom('jobs').select((eb) => eb.fn.sum<string>('cost').as('total')).where('tenant_id', '=', tenantId).executeTakeFirstOrThrow();
    assert.equal(tenant.reserved, 0);
    assert.equal(tenant.balance, credits - Number(costs.total));
    assert.deepEqual(await db.repos.ledger.totals(tenantId), { balance: tenant.balance, reserved: tenant.reserved });
    const reserved = await Promise.all(apis.map((api) => scrapeCounter(api.url, 'mediaproof_credits_reserved_total')));
    const captured = await Promise.all(workers.map((worker) => scrapeCounter(worker.url, 'mediaproof_credits_captured_total')));
    assert.equal(reserved.reduce((a, b) => a + b, 0), Number(costs.total));
    assert.equal(captured.reduce((a, b) => a + b, 0), Number(costs.total));
    // Every upload, store write and read was signed as S3 checks it.
    assert.deepEqual([...s3.refused], []);
  });

  test('results and inputs download from the bucket through signed URLs; delete removes the job\'s objects', async () => {
    const api = client(apis[0]!.url, key);
    const image = await jpeg(40, 30);
    const created = await api.createJob(1, [declare(image)]);
    assert.equal(await s3Put(created.body.inputs[0].uploadUrl, image, 'image/jpeg'), 200);
    assert.equal((await api.finalize(created.body.jobId)).status, 200);
    const done = await api.waitFor(created.body.jobId, undefined, 60_000);
    assert.equal(done.status, 'completed', done.errorMessage);
    const input = done.artifacts.find((a: { kind: string }) => a.kind === 'input');
    const result = done.artifacts.find((a: { kind: string }) => a.kind === 'result');
    assert.ok(Buffer.from(await (await fetch(input.downloadUrl)).arrayBuffer()).equals(image));
    const resultResponse = await fetch(result.downloadUrl);
    assert.equal(resultResponse.headers.get('content-type'), 'application/json');
    assert.deepEqual(await resultResponse.json(), done.result);

    Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: s3.env.AWS_SECRET_ACCESS_KEY });
    const store = new S3ObjectStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
    assert.equal(await store.size(`jobs/${done.jobId}/inputs/0`), image.byteLength);
    assert.equal((await api.remove(done.jobId)).status, 204);
    assert.equal(await store.size(`jobs/${done.jobId}/inputs/0`), null);
    assert.equal(await store.size(`jobs/${done.jobId}/artifacts/result.json`), null);
    store.close();
  });

  test('pre-signed PUT URLs sign Content-Type and Content-Length', async () => {
    const image = await jpeg(40, 30);
    const created = await client(apis[0]!.url, key).createJob(1, [declare(image)]);
    const url = new URL(created.body.inputs[0].uploadUrl);
    assert.equal(url.searchParams.get('X-Amz-SignedHeaders'), 'content-length;content-type;host');
    assert.equal(url.searchParams.get('X-Amz-Expires'), '3600');
  });

  test('finalize checks the bucket: a PUT that never arrived, a wrong size, wrong magic bytes', async () => {
    const api = client(apis[1]!.url, key);
    const image = await jpeg(40, 30);
    const before = (await db.repos.tenants.find(tenantId))!;

    const never = await api.createJob(1, [declare(image)]);
    const missing = await api.finalize(never.body.jobId);
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'UPLOAD_INCOMPLETE');
    assert.match(missing.body.message, /"original" has not been uploaded/);

    // The bucket refuses another size (the length is signed), so the slot stays empty.
    const short = await api.createJob(1, [declare(image)]);
    assert.equal(await s3Put(short.body.inputs[0].uploadUrl, image.subarray(0, 100), 'image/jpeg'), 403);
    assert.match((await api.finalize(short.body.jobId)).body.message, /"original" has not been uploaded/);
    // A store that does not bind the length would keep it: finalize then refuses the size.
    const planted = new URL(short.body.inputs[0].uploadUrl).pathname;
    assert.equal((await fetch(`${s3.unguardedEndpoint}${planted}`, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: image.subarray(0, 100) as unknown as BodyInit })).status, 200);
    const shortFinal = await api.finalize(short.body.jobId);
    assert.equal(shortFinal.body.code, 'UPLOAD_INCOMPLETE');
    assert.match(shortFinal.body.message, /is 100 bytes, declared/);

    const png = Buffer.alloc(image.byteLength, 7);
    const wrong = await api.createJob(1, [declare(png)]);
    assert.equal(await s3Put(wrong.body.inputs[0].uploadUrl, png, 'image/jpeg'), 200);
    const wrongFinal = await api.finalize(wrong.body.jobId);
    assert.equal(wrongFinal.status, 400);
    assert.equal(wrongFinal.body.code, 'UNSUPPORTED_MEDIA_TYPE');

    for (const job of [never, short, wrong]) assert.equal((await api.get(job.body.jobId)).body.status, 'waiting_for_finalize');
    const afterwards = (await db.repos.tenants.find(tenantId))!;
    assert.deepEqual([afterwards.balance, afterwards.reserved], [before.balance, before.reserved]);
  });

  test('operations: /metrics in both roles, /readyz checks database and bucket', async () => {
    const apiMetrics = await (await fetch(`${apis[0]!.url}/metrics`)).text();
    assert.match(apiMetrics, /mediaproof_http_requests_total\{method="POST",route="\/api\/v1\/jobs",status="200"\} \d+/);
    assert.match(apiMetrics, /mediaproof_queue_depth \d+/);
    const workerMetrics = await (await fetch(`${workers[0]!.url}/metrics`)).text();
    assert.match(workerMetrics, /mediaproof_queue_claim_seconds_count \d+/);
    assert.match(workerMetrics, /mediaproof_detector_duration_seconds_count\{task_type="ai-image-detection"\} \d+/);
    assert.match(workerMetrics, /process_resident_memory_bytes \d+/);
    for (const proc of [...apis, ...workers]) {
      const ready = await (await fetch(`${proc.url}/readyz`)).json();
      assert.deepEqual(ready, { status: 'ready', checks: { database: 'ok', objectStore: 'ok' } });
    }
    assert.equal((await fetch(`${workers[0]!.url}/healthz`)).status, 200);
  });

  test('SIGTERM: every process stops claiming, closes and exits 0', async () => {
    const codes = await Promise.all([...apis, ...workers].map((proc) => proc.stop('SIGTERM')));
    assert.deepEqual(codes, [0, 0, 0, 0, 0], [...apis, ...workers].map((p) => p.output()).join('\n'));
  });
});
