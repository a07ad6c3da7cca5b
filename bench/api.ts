/**
 * `node --import tsx bench/api.ts [--seconds 10] [--connections 16] [--warm-up 20000]`
 *
 * HTTP API throughput and latency with autocannon, against a `mediaproof serve --role api`
 * process on embedded SQLite and on PostgreSQL (127.0.0.1:5432, when reachable), and against a
 * bare Fastify route in its own process in the same run (the ceiling for this machine):
 *
 * - GET /api/v1/jobs/{id} of a completed job (auth, tenant scoping, inputs, two artifacts with
 *   signed download URLs);
 * - create + upload + finalize: POST /jobs, PUT of a 1 KiB JPEG to the signed upload URL
 *   (served by the API: local object store), POST /finalize (credits reserved, job queued);
 *   reported as whole jobs per second and per-request latency.
 *
 * The bare route is measured again right before each GET figure, so that both see the same
 * machine (it is shared and noisy). Beside throughput, each figure has the server process's
 * CPU time per request (from /proc): the steadier measure when other work shares the cores.
 *
 * Also prints the API process's RSS at rest and its peak under load. autocannon runs in
 * this process, so server and load generator share the machine's cores.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon, { type Result } from 'autocannon';
import { openDatabase, type Db } from '../server/src/db/database.js';
import { repositoriesFor, transactionRunner } from '../server/src/repositories/index.js';
import { CredentialService } from '../server/src/services/credential.service.js';
import { grantCredits } from '../server/src/services/credit.service.js';
import { client, declare, freePort, jpeg, put, sleep } from '../server/test/helpers.js';
import { createTestDatabase, postgresSkipReason, spawnRole } from '../server/test/scale/harness.js';
import { numberOption, processCpuSeconds, rssMiB } from './measure.js';

const SECONDS = numberOption('seconds', 10);
const CONNECTIONS = numberOption('connections', 16);
// Steady state is what is compared: V8 needs thousands of requests to optimise a route's code,
// and a fixed count (not a duration) warms both servers equally however busy the machine is.
const WARM_UP_REQUESTS = numberOption('warm-up', 20_000);

/** autocannon against `url`, with the CPU time the server process `pid` spent per request. */
async function measure(url: string, pid: number, headers: Record<string, string> = {}): Promise<{ result: Result; cpuUsPerRequest: number }> {
  const cpuStart = processCpuSeconds(pid);
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  return { result, cpuUsPerRequest: (1e6 * (processCpuSeconds(pid) - cpuStart)) / result.requests.total };
}

const figures = (r: Result, per = 1) =>
  `${(r.requests.average / per).toFixed(0).padStart(6)} /s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(4)} ms   errors ${r.errors + r.timeouts}, non-2xx ${r.non2xx}`;

async function bareFastify(): Promise<{ url: string; pid: number; stop: () => void }> {
  const port = await freePort();
  const code = `
    import Fastify from 'fastify';
    const app = Fastify({ logger: false });
    app.get('/bare', async () => ({ jobId: 'x', status: 'completed', createdAt: new Date().toISOString() }));
    await app.listen({ host: '127.0.0.1', port: ${port} });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: join(import.meta.dirname, '..', 'server'), stdio: 'inherit' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (await fetch(`${url}/bare`).then(() => true, () => false)) break;
    await sleep(100);
  }
  return { url, pid: child.pid!, stop: () => child.kill('SIGKILL') };
}

async function setup(db: Db) {
  const repos = repositoriesFor(db.kysely);
  const tenantId = await transactionRunner(db)(async (trx) => {
    const row = await trx.tenants.insert('bench', false);
    await grantCredits(trx, row.id, 1_000_000_000);
    return row.id;
  });
  const key = (await new CredentialService(repos).createApiKey(tenantId, 'bench', ['jobs:read', 'jobs:write', 'jobs:delete'])).key;
  return { repos, tenantId, key };
}

type Bare = Awaited<ReturnType<typeof bareFastify>>;

async function benchMode(mode: 'sqlite' | 'postgres', bare: Bare): Promise<void> {
  const database = mode === 'postgres' ? await createTestDatabase() : null;
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaproof-bench-'));
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...(database ? { DATABASE_URL: database.url } : {}) };
  const api = await spawnRole('api', env);
  const db = await openDatabase({ databaseUrl: database?.url ?? null, dataDir, poolSize: 2 });
  try {
    const { key } = await setup(db);
    const jobs = client(api.url, key);
    const image = await jpeg(32, 24);

    // One completed job to GET: finalized through the API, completed directly in the database.
    const created = await jobs.createJob(1, [declare(image)]);
    await put(created.body.inputs[0].uploadUrl, image, 'image/jpeg');
    await jobs.finalize(created.body.jobId);
    const now = new Date().toISOString();
    const result = { score: 0.12, confidence: 0.88, verdict: 'authentic', isAiGenerated: false, analysisDetails: { detector: { name: 'bench', version: '1' }, signals: [] } };
    await db.kysely.updateTable('jobs').set({ status: 'completed', result: JSON.stringify(result), completed_at: now, updated_at: now }).where('id', '=', created.body.jobId).execute();
    await db.kysely.insertInto('job_artifacts').values({ job_id: created.body.jobId, id: 'result.json', kind: 'result', slot_name: null, content_type: 'application/json', size_bytes: 100, object_key: `jobs/${created.body.jobId}/artifacts/result.json`, created_at: now }).execute();
    const auth = { authorization: `Bearer ${key}` };

    const pid = api.child.pid!;
    const rest = rssMiB(pid);
    await autocannon({ url: `${api.url}/api/v1/jobs/${created.body.jobId}`, connections: CONNECTIONS, amount: WARM_UP_REQUESTS, headers: auth });
    const baseline = await measure(`${bare.url}/bare`, bare.pid);
    const get = await measure(`${api.url}/api/v1/jobs/${created.body.jobId}`, pid, auth);
    console.log(`  ${mode.padEnd(8)} bare Fastify GET      ${figures(baseline.result)}   server CPU ${baseline.cpuUsPerRequest.toFixed(0)} µs/request`);
    console.log(
      `  ${mode.padEnd(8)} GET /jobs/{id}        ${figures(get.result)}   server CPU ${get.cpuUsPerRequest.toFixed(0)} µs/request` +
        `   (${((100 * get.result.requests.average) / baseline.result.requests.average).toFixed(0)} % of bare Fastify's throughput,` +
        ` ${((100 * baseline.cpuUsPerRequest) / get.cpuUsPerRequest).toFixed(0)} % by CPU per request)`,
    );

    const body = JSON.stringify({ inputs: [declare(image)] });
    const flow = await autocannon({
      url: api.url,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/jobs?taskTypeId=1',
          headers: { ...auth, 'content-type': 'application/json' },
          body,
          onResponse: (_status, text, context) => {
            const job = JSON.parse(text) as { jobId: string; inputs: Array<{ uploadUrl: string }> };
            const upload = new URL(job.inputs[0]!.uploadUrl);
            context.jobId = job.jobId;
            context.upload = upload.pathname + upload.search;
          },
        },
        { setupRequest: (request, context) => ({ ...request, method: 'PUT', path: context.upload as string, headers: { 'content-type': 'image/jpeg' }, body: image }) },
        { setupRequest: (request, context) => ({ ...request, method: 'POST', path: `/api/v1/jobs/${context.jobId as string}/finalize`, headers: auth, body: undefined }) },
      ],
    });
    console.log(`  ${mode.padEnd(8)} create+upload+finalize ${figures(flow, 3)}   (jobs/s; latency per request)`);
    console.log(`  ${mode.padEnd(8)} API process RSS: ${rest} MiB at rest, peak ${rssMiB(pid, 'VmHWM')} MiB under load`);
  } finally {
    await db.close();
    await api.stop('SIGTERM');
    await database?.drop();
  }
}

const bare = await bareFastify();
await autocannon({ url: `${bare.url}/bare`, connections: CONNECTIONS, amount: WARM_UP_REQUESTS });
console.log(`API throughput (${CONNECTIONS} connections, ${SECONDS} s per figure, autocannon in the same machine)`);
try {
  await benchMode('sqlite', bare);
  if (await postgresSkipReason()) console.log('  postgres skipped: not reachable');
  else await benchMode('postgres', bare);
} finally {
  bare.stop();
}
