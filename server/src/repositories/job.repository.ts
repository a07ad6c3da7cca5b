import type { Kysely } from 'kysely';
import type { CreditState, Database, JobArtifactTable, JobInputTable, JobStatus, JobTable } from '../db/schema.js';

export type JobRow = JobTable;

export interface JobPage {
  rows: JobRow[];
  total: number;
}

export class JobRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The connection or transaction this repository runs on (for queue statements in one transaction). */
  get executor(): Kysely<Database> {
    return this.db;
  }

  async insert(job: JobTable, inputs: JobInputTable[]): Promise<void> {
    await this.db.insertInto('jobs').values(job).execute();
    if (inputs.length) await this.db.insertInto('job_inputs').values(inputs).execute();
  }

  /** A job of the tenant; another tenant's job is indistinguishable from a missing one. */
  find(tenantId: string, jobId: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('id', '=', jobId).where('tenant_id', '=', tenantId).executeTakeFirst() as Promise<JobRow | undefined>;
  }

  findById(jobId: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst() as Promise<JobRow | undefined>;
  }

  async page(tenantId: string, options: { status?: JobStatus; offset: number; limit: number }): Promise<JobPage> {
    let base = this.db.selectFrom('jobs').where('tenant_id', '=', tenantId);
    if (options.status) base = base.where('status', '=', options.status);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).offset(options.offset).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows as JobRow[], total: Number(count.total) };
  }

  inputs(jobId: string): Promise<JobInputTable[]> {
    return this.db.selectFrom('job_inputs').selectAll().where('job_id', '=', jobId).orderBy('position').execute();
  }

  input(jobId: string, slotName: string): Promise<JobInputTable | undefined> {
    return this.db.selectFrom('job_inputs').selectAll().where('job_id', '=', jobId).where('slot_name', '=', slotName).executeTakeFirst();
  }

  /** Claims a slot for one upload: the first PUT with the URL's nonce wins, any later one fails. */
  async claimUpload(jobId: string, slotName: string, nonce: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('job_inputs')
      .set({ uploaded_at: at, uploaded_size: null })
      .where('job_id', '=', jobId)
      .where('slot_name', '=', slotName)
      .where('upload_nonce', '=', nonce)
      .where('uploaded_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async completeUpload(jobId: string, slotName: string, size: number): Promise<void> {
    await this.db.updateTable('job_inputs').set({ uploaded_size: size }).where('job_id', '=', jobId).where('slot_name', '=', slotName).execute();
  }

  /** Frees a slot whose upload failed half-way, so the same URL can be retried. */
  async releaseUpload(jobId: string, slotName: string): Promise<void> {
    await this.db.updateTable('job_inputs').set({ uploaded_at: null, uploaded_size: null }).where('job_id', '=', jobId).where('slot_name', '=', slotName).execute();
  }

  /** Moves a job between states only if it is still in one of `from`; returns whether it moved. */
  async transition(jobId: string, from: readonly JobStatus[], changes: Partial<JobTable>): Promise<boolean> {
    const result = await this.db
      .updateTable('jobs')
      .set(changes)
      .where('id', '=', jobId)
      .where('status', 'in', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async setCreditState(jobId: string, from: CreditState, to: CreditState): Promise<boolean> {
    const result = await this.db.updateTable('jobs').set({ credit_state: to }).where('id', '=', jobId).where('credit_state', '=', from).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async deleteUnlessProcessing(jobId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('jobs').where('id', '=', jobId).where('status', '!=', 'processing').executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async insertArtifacts(artifacts: JobArtifactTable[]): Promise<void> {
    if (artifacts.length) await this.db.insertInto('job_artifacts').values(artifacts).execute();
  }

  artifacts(jobId: string): Promise<JobArtifactTable[]> {
    return this.db.selectFrom('job_artifacts').selectAll().where('job_id', '=', jobId).orderBy('created_at').orderBy('id').execute();
  }
}
