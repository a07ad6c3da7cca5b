/**
 * The jobs table is the queue (DESIGN.md §1). A claim is one UPDATE … WHERE id = (SELECT …
 * LIMIT 1 [FOR UPDATE SKIP LOCKED]) RETURNING statement, the shape graphile-worker and
 * pg-boss use: on PostgreSQL concurrent claimers skip each other's rows; on SQLite the
 * statement runs under the database's single write lock. A claimed job carries a lease that
 * its worker renews; a lease that runs out (the worker died) makes the job claimable again.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { JOB_TRANSITIONS } from '../db/job-transitions.js';
import type { Dialect } from '../db/database.js';
import type { JobRow } from '../repositories/job.repository.js';

export class JobQueue {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async claim(workerId: string, leaseMs: number): Promise<JobRow | undefined> {
    const now = new Date();
    const nowIso = now.toISOString();
    const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
    let next = this.db
      .selectFrom('jobs')
      .select('id')
      .where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'queued'), eb.or([eb('run_after', 'is', null), eb('run_after', '<=', nowIso)])]),
          eb.and([eb('status', '=', 'processing'), eb('lease_expires_at', '<', nowIso)]),
        ]),
      )
      .orderBy('queued_at')
      .limit(1);
    if (this.dialect === 'postgres') next = next.forUpdate().skipLocked();
    const row = await this.db
      .updateTable('jobs')
      .set((eb) => ({
        status: JOB_TRANSITIONS.claim.to,
        locked_by: workerId,
        lease_expires_at: leaseUntil,
        attempts: eb('attempts', '+', 1),
        started_at: eb.fn.coalesce('started_at', eb.val(nowIso)),
        updated_at: nowIso,
      }))
      .where('id', '=', next)
      .returningAll()
      .executeTakeFirst();
    return row as JobRow | undefined;
  }

  /** Extends the lease; false means the job is no longer ours (reclaimed, or deleted). */
  async heartbeat(jobId: string, workerId: string, leaseMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable('jobs')
      .set({ lease_expires_at: new Date(Date.now() + leaseMs).toISOString() })
      .where('id', '=', jobId)
      .where('status', '=', 'processing')
      .where('locked_by', '=', workerId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Puts a job we hold back in the queue (transient failure or shutdown). */
  async requeue(jobId: string, workerId: string, runAfter: Date | null, countAttempt: boolean): Promise<boolean> {
    const result = await this.db
      .updateTable('jobs')
      .set((eb) => ({
        status: JOB_TRANSITIONS.requeue.to,
        locked_by: null,
        lease_expires_at: null,
        run_after: runAfter?.toISOString() ?? null,
        updated_at: new Date().toISOString(),
        ...(countAttempt ? {} : { attempts: eb('attempts', '-', 1) }),
      }))
      .where('id', '=', jobId)
      .where('status', 'in', JOB_TRANSITIONS.requeue.from)
      .where('locked_by', '=', workerId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async depth(): Promise<number> {
    const row = await this.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('depth'))
      .where('status', '=', 'queued')
      .executeTakeFirstOrThrow();
    return Number(row.depth);
  }
}
