import type { Kysely } from 'kysely';
import type { Database, FaceSubjectTable, IndexedFaceTable } from '../db/schema.js';

/** Enrolled subjects and faces of face indexing; every query is scoped by tenant. */
export class FaceIndexRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertSubject(row: FaceSubjectTable): Promise<void> {
    await this.db.insertInto('face_subjects').values(row).execute();
  }

  async insertFace(row: IndexedFaceTable): Promise<void> {
    await this.db.insertInto('indexed_faces').values(row).execute();
  }

  findSubject(tenantId: string, subjectId: string): Promise<FaceSubjectTable | undefined> {
    return this.db.selectFrom('face_subjects').selectAll().where('tenant_id', '=', tenantId).where('id', '=', subjectId).executeTakeFirst();
  }

  findFace(tenantId: string, faceId: string): Promise<IndexedFaceTable | undefined> {
    return this.db.selectFrom('indexed_faces').selectAll().where('tenant_id', '=', tenantId).where('id', '=', faceId).executeTakeFirst();
  }

  findFaceByJob(jobId: string): Promise<IndexedFaceTable | undefined> {
    return this.db.selectFrom('indexed_faces').selectAll().where('job_id', '=', jobId).executeTakeFirst();
  }

  subjects(tenantId: string): Promise<FaceSubjectTable[]> {
    return this.db.selectFrom('face_subjects').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
  }

  /** Every face of a tenant without its embedding (listings read it only for processed faces). */
  faces(tenantId: string, subjectId?: string): Promise<IndexedFaceTable[]> {
    let query = this.db.selectFrom('indexed_faces').selectAll().where('tenant_id', '=', tenantId);
    if (subjectId) query = query.where('subject_id', '=', subjectId);
    return query.orderBy('created_at').orderBy('id').execute();
  }

  /** Faces whose job has not been settled yet (any tenant when tenantId is null: the sweeper). */
  pending(tenantId: string | null): Promise<IndexedFaceTable[]> {
    let query = this.db.selectFrom('indexed_faces').selectAll().where('status', '=', 'pending');
    if (tenantId) query = query.where('tenant_id', '=', tenantId);
    return query.limit(1000).execute();
  }

  /** Settles a pending face once (a concurrent settle of the same face is a no-op). */
  async settle(faceId: string, fields: Pick<IndexedFaceTable, 'status' | 'embedding' | 'error' | 'processed_at'>): Promise<void> {
    await this.db.updateTable('indexed_faces').set(fields).where('id', '=', faceId).where('status', '=', 'pending').execute();
  }

  /**
   * What a cached search index must match: how many faces are searchable and when the last
   * one was settled. Any enrolment or deletion changes one of the two.
   */
  async searchableVersion(tenantId: string): Promise<string> {
    const row = await this.db
      .selectFrom('indexed_faces')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('processed_at').as('last')])
      .where('tenant_id', '=', tenantId)
      .where('status', '=', 'processed')
      .executeTakeFirstOrThrow();
    return `${Number(row.n)}:${row.last ?? ''}`;
  }

  /** The tenant's searchable faces, without their embeddings. */
  searchable(tenantId: string) {
    return this.db
      .selectFrom('indexed_faces')
      .select(['id', 'subject_id', 'job_id', 'name'])
      .where('tenant_id', '=', tenantId)
      .where('status', '=', 'processed')
      .orderBy('id')
      .execute();
  }

  /** Embeddings of the given faces (a search index loads them in batches). */
  embeddings(tenantId: string, faceIds: string[]) {
    return this.db.selectFrom('indexed_faces').select(['id', 'embedding']).where('tenant_id', '=', tenantId).where('id', 'in', faceIds).execute();
  }

  async deleteFace(faceId: string): Promise<void> {
    await this.db.deleteFrom('indexed_faces').where('id', '=', faceId).execute();
  }

  async deleteSubject(subjectId: string): Promise<void> {
    await this.db.deleteFrom('indexed_faces').where('subject_id', '=', subjectId).execute();
    await this.db.deleteFrom('face_subjects').where('id', '=', subjectId).execute();
  }
}
