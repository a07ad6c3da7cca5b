import type { Kysely } from 'kysely';
import type { Database, MediaRecordTable } from '../db/schema.js';
import type { JobRow } from './job.repository.js';

export type MediaRecordWithJob = MediaRecordTable & { job: JobRow | null };

export class MediaRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(record: MediaRecordTable): Promise<void> {
    await this.db.insertInto('media_records').values(record).execute();
  }

  find(tenantId: string, mid: string): Promise<MediaRecordTable | undefined> {
    return this.db.selectFrom('media_records').selectAll().where('mid', '=', mid).where('tenant_id', '=', tenantId).executeTakeFirst();
  }

  findByJob(jobId: string): Promise<MediaRecordTable | undefined> {
    return this.db.selectFrom('media_records').selectAll().where('job_id', '=', jobId).executeTakeFirst();
  }

  async page(tenantId: string, offset: number, limit: number): Promise<{ rows: MediaRecordTable[]; total: number }> {
    const base = this.db.selectFrom('media_records').where('tenant_id', '=', tenantId);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('created_at', 'desc').orderBy('mid', 'desc').limit(limit).offset(offset).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  async setError(mid: string, message: string): Promise<void> {
    await this.db.updateTable('media_records').set({ error_message: message }).where('mid', '=', mid).execute();
  }

  async delete(mid: string): Promise<void> {
    await this.db.deleteFrom('media_records').where('mid', '=', mid).execute();
  }

  /** Records still waiting for their file, oldest first (S3: uploads bypass the API). */
  waitingForUpload(limit = 200): Promise<MediaRecordTable[]> {
    return this.db
      .selectFrom('media_records')
      .innerJoin('jobs', 'jobs.id', 'media_records.job_id')
      .selectAll('media_records')
      .where('jobs.status', '=', 'waiting_for_finalize')
      .where('media_records.error_message', 'is', null)
      .orderBy('media_records.created_at')
      .limit(limit)
      .execute();
  }

  /** Records whose upload URL expired while their job still waits for the file. */
  expiredUploads(now: string, limit = 100): Promise<MediaRecordTable[]> {
    return this.db
      .selectFrom('media_records')
      .innerJoin('jobs', 'jobs.id', 'media_records.job_id')
      .selectAll('media_records')
      .where('jobs.status', '=', 'waiting_for_finalize')
      .where('media_records.upload_expires_at', '<', now)
      .limit(limit)
      .execute();
  }

  /** Counts one call against a client's quota for the period; returns the count so far. */
  async countCall(clientId: string, kind: 'query' | 'mutation', periodStart: string): Promise<number> {
    const row = await this.db
      .insertInto('media_quota_usage')
      .values({ client_id: clientId, kind, period_start: periodStart, count: 1 })
      .onConflict((oc) => oc.columns(['client_id', 'kind', 'period_start']).doUpdateSet((eb) => ({ count: eb('media_quota_usage.count', '+', 1) })))
      .returning('count')
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }
}
