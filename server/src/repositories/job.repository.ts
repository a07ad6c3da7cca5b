import { PostgresAdapter, sql, type CompiledQuery, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import { jsonArrayFrom as postgresJsonArrayFrom } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArrayFrom } from 'kysely/helpers/sqlite';
import { keepPrepared } from '../db/prepared-statements.js';
import { ReadBatcher } from './read-batcher.js';
import { JOB_TRANSITIONS } from '../db/job-transitions.js';
import type { CreditState, Database, JobArtifactTable, JobInputTable, JobStatus, JobTable } from '../db/schema.js';

export type JobRow = JobTable;

// What the detail view of a job shows, and no more: every column read is a property built per request.
const DETAIL_JOB_COLUMNS = ['id', 'task_type_id', 'status', 'cost', 'result', 'error_message', 'created_at', 'updated_at', 'queued_at', 'completed_at'] as const;
const DETAIL_INPUT_COLUMNS = ['position', 'slot_name', 'file_name', 'content_type', 'size_bytes', 'object_key', 'uploaded_at', 'uploaded_size'] as const;
const DETAIL_ARTIFACT_COLUMNS = ['id', 'kind', 'slot_name', 'content_type', 'size_bytes', 'object_key', 'created_at'] as const;

export type JobDetailRow = Pick<JobRow, (typeof DETAIL_JOB_COLUMNS)[number]>;
export type InputDetailRow = Pick<JobInputTable, (typeof DETAIL_INPUT_COLUMNS)[number]>;
export type ArtifactDetailRow = Pick<JobArtifactTable, (typeof DETAIL_ARTIFACT_COLUMNS)[number]>;

/** A job with everything its detail view shows. */
export interface JobWithFiles {
  job: JobDetailRow;
  inputs: InputDetailRow[];
  artifacts: ArtifactDetailRow[];
}

type DetailStatementRow = JobDetailRow & { tenant_id: string; inputs_json: unknown; artifacts_json: unknown };

// Stands in for the ids while a detail statement is compiled once; replaced on every run.
const JOB_ID_PLACEHOLDER = '\u0000job-id';

/** SQLite hands JSON aggregates back as text, PostgreSQL as parsed values. */
const jsonRows = <T>(value: unknown): T[] => (typeof value === 'string' ? JSON.parse(value) : value) as T[];

function jobWithFiles(row: DetailStatementRow): JobWithFiles {
  const job: JobDetailRow = {
    id: row.id, task_type_id: row.task_type_id, status: row.status, cost: row.cost, result: row.result, error_message: row.error_message,
    created_at: row.created_at, updated_at: row.updated_at, queued_at: row.queued_at, completed_at: row.completed_at,
  };
  // In the order of the other reads of the same rows.
  const inputs = jsonRows<InputDetailRow>(row.inputs_json).sort((a, b) => a.position - b.position);
  const artifacts = jsonRows<ArtifactDetailRow>(row.artifacts_json).sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
  return { job, inputs, artifacts };
}

interface DetailReadKey {
  tenantId: string;
  jobId: string;
}
const detailReadKey = (key: DetailReadKey) => `${key.tenantId}\u0000${key.jobId}`;

/**
 * One statement out at a time: the reads that arrive while it runs go together in the next.
 * On PostgreSQL, allowing two out at once halved the batches (about 6 reads each instead of 15
 * with 16 polling connections) and cost 10 % more CPU per read, for no gain in latency.
 */
const DETAIL_READ_BATCHING = { maxInFlight: 1, maxBatch: 100 };

/**
 * On PostgreSQL the ids go in a list of one of these lengths, the last id repeated to fill it.
 * With a list of known length the generic plan of the prepared statement is as cheap as a
 * custom one, so PostgreSQL plans it once per connection. With `= any($1)` it guessed 10 ids,
 * and planned every run anew for the one it was given: 0.18 ms, half the statement's time
 * (measured). A few lengths keep the statements per connection few; btree drops the repeats.
 */
const POSTGRES_ID_LIST_LENGTHS = [1, 4, 16, DETAIL_READ_BATCHING.maxBatch];

export interface JobPage {
  rows: JobRow[];
  total: number;
}

export class JobRepository {
  /** By the length of their id list (0: any number, SQLite). */
  private readonly detailStatements = new Map<number, CompiledQuery<DetailStatementRow>>();
  private detailReads?: ReadBatcher<DetailReadKey, JobWithFiles>;

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

  /**
   * A job of the tenant with its inputs and artifacts in one statement. GET /jobs/{id} is the
   * most frequent request (clients poll it), so the reads that arrive in one turn of the event
   * loop go out together as one statement for all their ids: on PostgreSQL one round trip
   * instead of many, on both one pass of the driver. Measured by bench/api.ts with 16 polling
   * connections, in one run: this process's CPU per GET fell from 160 to 65 µs (SQLite) and
   * from 275 to 88 µs (PostgreSQL). The SQL is built once; each run binds only the ids.
   */
  findWithFiles(tenantId: string, jobId: string): Promise<JobWithFiles | undefined> {
    this.detailReads ??= new ReadBatcher((keys) => this.findManyWithFiles(keys), detailReadKey, DETAIL_READ_BATCHING);
    return this.detailReads.read({ tenantId, jobId });
  }

  /** The jobs of several reads, keyed by `detailReadKey` of the row's own tenant and id. */
  private async findManyWithFiles(keys: DetailReadKey[]): Promise<Map<string, JobWithFiles>> {
    const jobIds = [...new Set(keys.map((key) => key.jobId))];
    const { rows } = await this.db.executeQuery(this.detailQuery(jobIds));
    // Keyed by the row's own tenant: a read of another tenant's job finds nothing under its key.
    return new Map(rows.map((row) => [detailReadKey({ tenantId: row.tenant_id, jobId: row.id }), jobWithFiles(row)]));
  }

  /** The detail statement for `jobIds`, with the ids bound. */
  private detailQuery(jobIds: string[]): CompiledQuery<DetailStatementRow> {
    if (!this.isPostgres) {
      const statement = this.detailStatement(0);
      const boundIds = JSON.stringify(jobIds);
      return { ...statement, parameters: statement.parameters.map((value) => (value === JOB_ID_PLACEHOLDER ? boundIds : value)) };
    }
    const statement = this.detailStatement(POSTGRES_ID_LIST_LENGTHS.find((n) => n >= jobIds.length)!);
    let next = 0;
    const parameters = statement.parameters.map((value) => (value === JOB_ID_PLACEHOLDER ? jobIds[Math.min(next++, jobIds.length - 1)] : value));
    return { ...statement, parameters };
  }

  /** Compiled once per list length (0: any number of ids, SQLite's json_each) and kept prepared. */
  private detailStatement(idCount: number): CompiledQuery<DetailStatementRow> {
    let statement = this.detailStatements.get(idCount);
    if (!statement) {
      statement = this.buildDetailStatement((eb) =>
        idCount === 0
          ? eb('jobs.id', 'in', sql<string>`(select value from json_each(${JOB_ID_PLACEHOLDER}))`)
          : eb('jobs.id', 'in', Array<string>(idCount).fill(JOB_ID_PLACEHOLDER)),
      );
      keepPrepared(statement.sql);
      this.detailStatements.set(idCount, statement);
    }
    return statement;
  }

  private buildDetailStatement(where: (eb: ExpressionBuilder<Database, 'jobs'>) => Expression<SqlBool>): CompiledQuery<DetailStatementRow> {
    const jsonArrayFrom = this.isPostgres ? postgresJsonArrayFrom : sqliteJsonArrayFrom;
    return this.db
      .selectFrom('jobs')
      .select(DETAIL_JOB_COLUMNS.map((column) => `jobs.${column}` as const))
      .select('jobs.tenant_id') // keys the rows of a batch
      .select((eb) => [
        // Unordered: aggregates do not promise to keep a subquery's order, so rows are sorted on reading.
        jsonArrayFrom(eb.selectFrom('job_inputs').select(DETAIL_INPUT_COLUMNS).whereRef('job_inputs.job_id', '=', 'jobs.id')).as('inputs_json'),
        jsonArrayFrom(eb.selectFrom('job_artifacts').select(DETAIL_ARTIFACT_COLUMNS).whereRef('job_artifacts.job_id', '=', 'jobs.id')).as('artifacts_json'),
      ])
      .where(where)
      .compile() as CompiledQuery<DetailStatementRow>;
  }

  private get isPostgres(): boolean {
    return this.db.getExecutor().adapter instanceof PostgresAdapter;
  }

  findById(jobId: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst() as Promise<JobRow | undefined>;
  }

  async page(tenantId: string, options: { status?: JobStatus; taskTypeId?: number; offset: number; limit: number }): Promise<JobPage> {
    let base = this.db.selectFrom('jobs').where('tenant_id', '=', tenantId);
    if (options.status) base = base.where('status', '=', options.status);
    if (options.taskTypeId !== undefined) base = base.where('task_type_id', '=', options.taskTypeId);
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
  /**
   * Claims a slot for one upload. While the bytes arrive, `uploaded_at` is the claim's
   * heartbeat (renewUpload); a claim whose heartbeat is older than `staleBefore` belonged to a
   * process that died mid-upload and may be taken over. A completed upload (`uploaded_size`
   * set) is never claimed again.
   */
  async claimUpload(jobId: string, slotName: string, nonce: string, at: string, staleBefore: string): Promise<boolean> {
    const result = await this.db
      .updateTable('job_inputs')
      .set({ uploaded_at: at, uploaded_size: null })
      .where('job_id', '=', jobId)
      .where('slot_name', '=', slotName)
      .where('upload_nonce', '=', nonce)
      .where('uploaded_size', 'is', null)
      .where((eb) => eb.or([eb('uploaded_at', 'is', null), eb('uploaded_at', '<', staleBefore)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** What a file declared as generic bytes turned out to be (set at finalize, before processing). */
  async setInputContentType(jobId: string, slotName: string, contentType: string): Promise<void> {
    await this.db.updateTable('job_inputs').set({ content_type: contentType }).where('job_id', '=', jobId).where('slot_name', '=', slotName).execute();
  }

  /** Keeps an upload's claim alive; false when another request has taken it over. */
  async renewUpload(jobId: string, slotName: string, claimedAt: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('job_inputs')
      .set({ uploaded_at: at })
      .where('job_id', '=', jobId)
      .where('slot_name', '=', slotName)
      .where('uploaded_at', '=', claimedAt)
      .where('uploaded_size', 'is', null)
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
  /** Moves a job by one event of JOB_TRANSITIONS, if its status allows it now; false otherwise. */
  async transition(jobId: string, event: 'finalize' | 'cancel', changes: Omit<Partial<JobTable>, 'status'>): Promise<boolean> {
    const { from, to } = JOB_TRANSITIONS[event];
    const result = await this.db
      .updateTable('jobs')
      .set({ ...changes, status: to })
      .where('id', '=', jobId)
      .where('status', 'in', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Ends a job this worker holds; fenced by locked_by, so a worker that lost its lease changes nothing. */
  async finish(jobId: string, workerId: string, event: 'complete' | 'fail', changes: Omit<Partial<JobTable>, 'status'>): Promise<boolean> {
    const { from, to } = JOB_TRANSITIONS[event];
    const result = await this.db
      .updateTable('jobs')
      .set({ ...changes, status: to, locked_by: null, lease_expires_at: null })
      .where('id', '=', jobId)
      .where('status', 'in', from)
      .where('locked_by', '=', workerId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }


  async setCreditState(jobId: string, from: CreditState, to: CreditState): Promise<boolean> {
    const result = await this.db.updateTable('jobs').set({ credit_state: to }).where('id', '=', jobId).where('credit_state', '=', from).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async deleteUnlessProcessing(jobId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('jobs').where('id', '=', jobId).where('status', 'in', JOB_TRANSITIONS.delete.from).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async insertArtifacts(artifacts: JobArtifactTable[]): Promise<void> {
    if (artifacts.length) await this.db.insertInto('job_artifacts').values(artifacts).execute();
  }

  artifacts(jobId: string): Promise<JobArtifactTable[]> {
    return this.db.selectFrom('job_artifacts').selectAll().where('job_id', '=', jobId).orderBy('created_at').orderBy('id').execute();
  }
}
