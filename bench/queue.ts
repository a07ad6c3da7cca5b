/**
 * `node --import tsx bench/queue.ts [--samples 60] [--backlog 10000]`   (needs PostgreSQL at 127.0.0.1:5432)
 *
 * 1. Finalize-to-claim latency: a `serve --role api` and a `serve --role worker` process
 *    (WORKER_CONCURRENCY=1, POLL_INTERVAL_MS=1000, the default) share one database; jobs are
 *    created, uploaded and finalized one at a time through the HTTP API, each after the
 *    previous one completed, at random spacing. Latency = the job's started_at (set by the
 *    claim) minus queued_at (set by finalize, before its commit), both server clocks of this
 *    machine. Run with LISTEN/NOTIFY (the default) and with QUEUE_NOTIFY=false (polling only).
 *    Also the worker process's RSS at rest and its peak after running real detector jobs.
 * 2. Drain throughput: a backlog of N jobs inserted directly, drained by 1, 2 and 4 processes
 *    running bench/queue-drain.ts: the real claim statement and the real completion
 *    transaction (fenced finish, credit capture, ledger row) with no detector. This is the
 *    queue's own ceiling: what the database path costs per job, and how it scales when
 *    claimers contend. Every run checks that each job completed once and the ledger balances.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../server/src/db/database.js';
import { repositoriesFor, transactionRunner } from '../server/src/repositories/index.js';
import { CredentialService } from '../server/src/services/credential.service.js';
import { grantCredits } from '../server/src/services/credit.service.js';
import { client, declare, jpeg, put, sleep } from '../server/test/helpers.js';
import { createTestDatabase, postgresSkipReason, spawnRole } from '../server/test/scale/harness.js';
import { numberOption, rssMiB } from './measure.js';

const SAMPLES = numberOption('samples', 60);
const BACKLOG = numberOption('backlog', 10_000);

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;

async function tenantWithKey(db: Db, credits: number) {
  const tenantId = await transactionRunner(db)(async (trx) => {
    const row = await trx.tenants.insert('bench', false);
    await grantCredits(trx, row.id, credits);
    return row.id;
  });
  const key = (await new CredentialService(repositoriesFor(db.kysely)).createApiKey(tenantId, 'bench', ['jobs:read', 'jobs:write'])).key;
  return { tenantId, key };
}

async function finalizeToClaim(notify: boolean): Promise<void> {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaproof-queue-bench-'));
  const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, QUEUE_NOTIFY: String(notify), POLL_INTERVAL_MS: '1000', LOG_LEVEL: 'warn' };
  const [api, worker] = await Promise.all([spawnRole('api', env), spawnRole('worker', env)]);
  const db = await openDatabase({ databaseUrl: database.url, dataDir, poolSize: 2 });
  try {
    const { key } = await tenantWithKey(db, 1_000_000);
    const jobs = client(api.url, key);
    const image = await jpeg(48, 32);
    const workerRest = rssMiB(worker.child.pid!);
    const latencies: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const created = await jobs.createJob(1, [declare(image)]);
      await put(created.body.inputs[0].uploadUrl, image, 'image/jpeg');
      await jobs.finalize(created.body.jobId);
      for (;;) {
        const row = await db.kysely.selectFrom('jobs').select(['status', 'queued_at', 'started_at']).where('id', '=', created.body.jobId).executeTakeFirstOrThrow();
        if (row.status === 'completed' || row.status === 'failed') {
          latencies.push(Date.parse(row.started_at!) - Date.parse(row.queued_at!));
          break;
        }
        await sleep(5);
      }
      await sleep(Math.random() * 150);
    }
    console.log(
      `  ${notify ? 'LISTEN/NOTIFY + polling' : 'polling only (1 s)    '}  p50 ${percentile(latencies, 50)} ms   p99 ${percentile(latencies, 99)} ms   max ${Math.max(...latencies)} ms   (${SAMPLES} jobs)`,
    );
    if (notify) console.log(`  worker process RSS: ${workerRest} MiB at rest, peak ${rssMiB(worker.child.pid!, 'VmHWM')} MiB after ${SAMPLES} ai-image-detection jobs`);
  } finally {
    await db.close();
    await Promise.all([api.stop('SIGTERM'), worker.stop('SIGTERM')]);
    await database.drop();
  }
}

async function drain(workers: number): Promise<number> {
  const database = await createTestDatabase();
  const db = await openDatabase({ databaseUrl: database.url, dataDir: tmpdir(), poolSize: 4 });
  try {
    const { tenantId } = await tenantWithKey(db, BACKLOG);
    const base = Date.now() - BACKLOG;
    for (let offset = 0; offset < BACKLOG; offset += 1000) {
      const rows = Array.from({ length: Math.min(1000, BACKLOG - offset) }, (_, i) => {
        const at = new Date(base + offset + i).toISOString();
        return {
          id: randomBytes(12).toString('hex'), tenant_id: tenantId, task_type_id: 1, status: 'queued' as const, cost: 1, credit_state: 'reserved' as const,
          parameters: '{}', result: null, error_message: null, attempts: 0, locked_by: null, lease_expires_at: null, run_after: null,
          created_at: at, updated_at: at, queued_at: at, started_at: null, completed_at: null, webhook_url: null,
        };
      });
      await db.kysely.insertInto('jobs').values(rows).execute();
    }
    // The backlog's credits are reserved, as finalize would have done.
    await db.kysely.updateTable('tenants').set({ balance: 0, reserved: BACKLOG }).where('id', '=', tenantId).execute();
    await db.kysely.insertInto('credit_ledger').values({ id: randomBytes(12).toString('hex'), tenant_id: tenantId, job_id: null, kind: 'reserve', amount: -BACKLOG, reserved_delta: BACKLOG, note: 'bench backlog', created_at: new Date().toISOString() }).execute();
    await sql`analyze jobs`.execute(db.kysely);

    const goAt = Date.now() + 5000;
    const outputs = await Promise.all(
      Array.from({ length: workers }, () => {
        const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'queue-drain.ts')], {
          cwd: join(import.meta.dirname, '..', 'server'),
          env: { ...process.env, DATABASE_URL: database.url, GO_AT: String(goAt) },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        return new Promise<{ claimed: number; startedAt: number; endedAt: number }>((resolve) => child.on('exit', () => resolve(JSON.parse(out.trim().split('\n').pop()!))));
      }),
    );
    const seconds = (Math.max(...outputs.map((o) => o.endedAt)) - Math.min(...outputs.map((o) => o.startedAt))) / 1000;
    const completed = await db.kysely.selectFrom('jobs').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', 'completed').executeTakeFirstOrThrow();
    const tenant = (await repositoriesFor(db.kysely).tenants.find(tenantId))!;
    const ledger = await repositoriesFor(db.kysely).ledger.totals(tenantId);
    const ok = Number(completed.n) === BACKLOG && outputs.reduce((a, o) => a + o.claimed, 0) === BACKLOG && tenant.reserved === 0 && ledger.reserved === 0 && ledger.balance === tenant.balance;
    const rate = BACKLOG / seconds;
    console.log(`  ${workers} drain process${workers > 1 ? 'es' : '  '}  ${rate.toFixed(0).padStart(5)} jobs/s   (${seconds.toFixed(1)} s; per process ${outputs.map((o) => o.claimed).join('/')}; exactly once + ledger ${ok ? 'ok' : 'MISMATCH'})`);
    return rate;
  } finally {
    await db.close();
    await database.drop();
  }
}

if (await postgresSkipReason()) process.exit(0);
console.log(`Finalize-to-claim latency (PostgreSQL, 1 API + 1 worker process)`);
await finalizeToClaim(true);
await finalizeToClaim(false);
console.log(`Drain throughput: ${BACKLOG}-job backlog, claim + complete + credit capture, no detector`);
const rates: number[] = [];
for (const workers of [1, 2, 4]) rates.push(await drain(workers));
console.log(`  scaling: 2 processes ${(rates[1]! / rates[0]!).toFixed(2)}x, 4 processes ${(rates[2]! / rates[0]!).toFixed(2)}x the rate of 1`);
