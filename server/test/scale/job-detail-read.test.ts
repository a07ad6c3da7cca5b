/**
 * GET /jobs/{id} reads a job, its inputs and its artifacts in one statement (JSON aggregates,
 * which SQLite and PostgreSQL spell differently) and only the columns the view shows. It must
 * return exactly those columns of what the three plain reads return, on both databases: same
 * values, same types, same order, nothing of another tenant.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type Db } from '../../src/db/database.js';
import type { JobArtifactTable, JobInputTable, JobTable } from '../../src/db/schema.js';
import { JobRepository } from '../../src/repositories/job.repository.js';
import { createTestDatabase, postgresSkipReason } from './harness.js';

const postgresSkip = await postgresSkipReason();

function job(id: string, tenantId: string): JobTable {
  return {
    id, tenant_id: tenantId, task_type_id: 5, status: 'completed', cost: 3, credit_state: 'captured', parameters: '{"a":1}',
    result: '{"verdict":"authentic","score":0.1}', error_message: null, attempts: 1, locked_by: null, lease_expires_at: null,
    run_after: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:05.000Z', queued_at: '2026-01-01T00:00:01.000Z',
    started_at: '2026-01-01T00:00:02.000Z', completed_at: '2026-01-01T00:00:05.000Z', webhook_url: null,
  };
}

function input(jobId: string, position: number, slot: string, uploaded: boolean): JobInputTable {
  return {
    job_id: jobId, slot_name: slot, position, file_name: `${slot} "ü".jpg`, content_type: 'image/jpeg', size_bytes: 1000 + position,
    object_key: `jobs/${jobId}/inputs/${position}`, upload_nonce: `n${position}`, uploaded_at: uploaded ? '2026-01-01T00:00:00.500Z' : null,
    uploaded_size: uploaded ? 1000 + position : null,
  };
}

function artifact(jobId: string, id: string, createdAt: string, slot: string | null): JobArtifactTable {
  return { job_id: jobId, id, kind: 'heatmap', slot_name: slot, content_type: 'image/png', size_bytes: 77, object_key: `jobs/${jobId}/artifacts/${id}`, created_at: createdAt };
}

function pick<T extends object>(row: T, keys: ReadonlyArray<string>): Partial<T> {
  return Object.fromEntries(keys.map((key) => [key, (row as Record<string, unknown>)[key]])) as Partial<T>;
}

async function plainReads(jobs: JobRepository, tenantId: string, jobId: string) {
  const job = await jobs.find(tenantId, jobId);
  return {
    job: pick(job!, ['id', 'task_type_id', 'status', 'cost', 'result', 'error_message', 'created_at', 'updated_at', 'queued_at', 'completed_at']),
    inputs: (await jobs.inputs(jobId)).map((row) => pick(row, ['position', 'slot_name', 'file_name', 'content_type', 'size_bytes', 'object_key', 'uploaded_at', 'uploaded_size'])),
    artifacts: (await jobs.artifacts(jobId)).map((row) => pick(row, ['id', 'kind', 'slot_name', 'content_type', 'size_bytes', 'object_key', 'created_at'])),
  };
}

async function checkDetailRead(db: Db): Promise<void> {
  const jobs = new JobRepository(db.kysely);
  await db.kysely.insertInto('tenants').values([
    { id: 't1', name: 'one', balance: 0, reserved: 0, pay_as_you_go: 0, created_at: '2026-01-01T00:00:00.000Z', webhook_url: null, webhook_secret: null },
    { id: 't2', name: 'two', balance: 0, reserved: 0, pay_as_you_go: 0, created_at: '2026-01-01T00:00:00.000Z', webhook_url: null, webhook_secret: null },
  ]).execute();
  // Inserted out of order, so that an unsorted read would show.
  await jobs.insert(job('j1', 't1'), [input('j1', 2, 'c', false), input('j1', 0, 'a', true), input('j1', 1, 'b', true)]);
  await jobs.insertArtifacts([
    artifact('j1', 'z-last', '2026-01-01T00:00:09.000Z', null),
    artifact('j1', 'b', '2026-01-01T00:00:05.000Z', 'a'),
    artifact('j1', 'a', '2026-01-01T00:00:05.000Z', null),
  ]);
  await jobs.insert(job('j2', 't1'), []);

  const read = await jobs.findWithFiles('t1', 'j1');
  assert.deepEqual(read, await plainReads(jobs, 't1', 'j1'));
  assert.deepEqual(read!.inputs.map((row) => row.position), [0, 1, 2]);
  assert.deepEqual(read!.artifacts.map((row) => row.id), ['a', 'b', 'z-last']);
  assert.equal(typeof read!.inputs[0]!.size_bytes, 'number');
  assert.equal(read!.inputs[2]!.uploaded_size, null);

  assert.deepEqual(await jobs.findWithFiles('t1', 'j2'), { ...(await plainReads(jobs, 't1', 'j2')), inputs: [], artifacts: [] });
  assert.equal(await jobs.findWithFiles('t2', 'j1'), undefined, "another tenant's job is not found");
  assert.equal(await jobs.findWithFiles('t1', 'missing'), undefined);
  // The statement is compiled once; a second call with other ids must not reuse the first's.
  assert.equal((await jobs.findWithFiles('t1', 'j2'))!.job.id, 'j2');

  // Reads asked for together (on PostgreSQL: sent as batches) each get their own answer,
  // scoped to their own tenant, whatever else shares the batch.
  await jobs.insert(job('j3', 't2'), [input('j3', 0, 'a', true)]);
  const asked: Array<[string, string]> = [];
  for (let i = 0; i < 40; i++) asked.push(...([['t1', 'j1'], ['t2', 'j1'], ['t2', 'j3'], ['t1', 'j3'], ['t1', 'j2'], ['t1', `missing-${i}`], ['t1', 'j1']] as Array<[string, string]>));
  const answers = await Promise.all(asked.map(([tenantId, jobId]) => jobs.findWithFiles(tenantId, jobId)));
  const expected = new Map<string, unknown>([
    ['t1 j1', read],
    ['t2 j3', await plainReads(jobs, 't2', 'j3')],
    ['t1 j2', { ...(await plainReads(jobs, 't1', 'j2')), inputs: [], artifacts: [] }],
  ]);
  answers.forEach((answer, i) => assert.deepEqual(answer, expected.get(asked[i]!.join(' ')), `read ${i}: ${asked[i]!.join(' ')}`));

  // Batches of every size up to the largest (on PostgreSQL the ids fill lists of a few fixed
  // lengths), each read answered with its own job.
  const many = Array.from({ length: 100 }, (_, i) => `k${String(i).padStart(3, '0')}`);
  for (const id of many) await jobs.insert(job(id, 't1'), [input(id, 0, 'a', true)]);
  for (const size of [2, 3, 4, 5, 15, 16, 17, 64, 99, 100]) {
    const ids = many.slice(0, size - 1).concat('j1');
    const read = await Promise.all(ids.map((id) => jobs.findWithFiles('t1', id)));
    assert.deepEqual(read.map((answer) => answer?.job.id), ids, `a batch of ${size}`);
    assert.deepEqual(read.map((answer) => answer?.inputs[0]?.object_key), ids.map((id) => `jobs/${id}/inputs/0`), `a batch of ${size}`);
  }
}

describe('one-statement job detail read', () => {
  it('matches the plain reads on SQLite', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mediaproof-detail-'));
    const db = await openDatabase({ databaseUrl: null, dataDir });
    try {
      await checkDetailRead(db);
    } finally {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('matches the plain reads on PostgreSQL, planning the statement once per connection', { skip: postgresSkip || false }, async () => {
    const database = await createTestDatabase();
    try {
      const db = await openDatabase({ databaseUrl: database.url, dataDir: tmpdir(), poolSize: 2 });
      try {
        await checkDetailRead(db);
      } finally {
        await db.close();
      }
      // Polls must not pay for planning: the detail statement is planned once per connection,
      // after PostgreSQL's five trial runs, however often it runs (one connection, so the
      // statements listed are the ones the reads used).
      const single = await openDatabase({ databaseUrl: database.url, dataDir: tmpdir(), poolSize: 1 });
      try {
        const jobs = new JobRepository(single.kysely);
        for (let i = 0; i < 30; i++) await jobs.findWithFiles('t1', i % 2 ? 'j1' : 'k001');
        const { rows } = await sql<{ custom_plans: string; generic_plans: string }>`select custom_plans, generic_plans from pg_prepared_statements where statement like '%job_inputs%'`.execute(single.kysely);
        assert.equal(rows.length, 1);
        assert.ok(Number(rows[0]!.custom_plans) <= 5, `planned ${rows[0]!.custom_plans} times`);
        assert.ok(Number(rows[0]!.generic_plans) >= 25, `reused the generic plan ${rows[0]!.generic_plans} times`);
      } finally {
        await single.close();
      }
    } finally {
      await database.drop();
    }
  });
});
