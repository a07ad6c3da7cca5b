import { sql, type Kysely } from 'kysely';
import type { Database, LedgerKind, TenantTable } from '../db/schema.js';
import { newId, nowIso } from './clock.js';

export class TenantRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(name: string, payAsYouGo: boolean): Promise<TenantTable> {
    const tenant: TenantTable = { id: newId(), name, balance: 0, reserved: 0, pay_as_you_go: payAsYouGo ? 1 : 0, created_at: nowIso(), webhook_url: null, webhook_secret: null };
    await this.db.insertInto('tenants').values(tenant).execute();
    return tenant;
  }

  list(): Promise<TenantTable[]> {
    return this.db.selectFrom('tenants').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  find(id: string): Promise<TenantTable | undefined> {
    return this.db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Applies a balance change in one statement. With `requireCover`, the row changes only if
   * the balance covers the debit (or the tenant is pay-as-you-go): the database, not the
   * application, decides, so concurrent reservations can never overdraw.
   */
  async adjust(tenantId: string, amount: number, reservedDelta: number, requireCover: boolean): Promise<boolean> {
    let query = this.db
      .updateTable('tenants')
      .set((eb) => ({ balance: eb('balance', '+', amount), reserved: eb('reserved', '+', reservedDelta) }))
      .where('id', '=', tenantId);
    if (requireCover) {
      query = query.where((eb) => eb.or([eb('balance', '>=', -amount), eb('pay_as_you_go', '=', 1)]));
    }
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

export class CreditLedgerRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async append(entry: { tenantId: string; jobId: string | null; kind: LedgerKind; amount: number; reservedDelta: number; note?: string }): Promise<void> {
    await this.db
      .insertInto('credit_ledger')
      .values({
        id: newId(),
        tenant_id: entry.tenantId,
        job_id: entry.jobId,
        kind: entry.kind,
        amount: entry.amount,
        reserved_delta: entry.reservedDelta,
        note: entry.note ?? null,
        created_at: nowIso(),
      })
      .execute();
  }

  /** Sums of the ledger for a tenant; they must equal the tenant's balance and reserved. */
  async totals(tenantId: string): Promise<{ balance: number; reserved: number }> {
    const row = await this.db
      .selectFrom('credit_ledger')
      .select((eb) => [eb.fn.sum<number>('amount').as('balance'), eb.fn.sum<number>('reserved_delta').as('reserved')])
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    return { balance: Number(row.balance ?? 0), reserved: Number(row.reserved ?? 0) };
  }

  /** A tenant's ledger, newest first, with the task type of each entry's job (null once deleted). */
  async page(tenantId: string, limit: number, offset: number) {
    const [rows, count] = await Promise.all([
      this.db
        .selectFrom('credit_ledger')
        .leftJoin('jobs', 'jobs.id', 'credit_ledger.job_id')
        .select(['credit_ledger.id', 'credit_ledger.job_id', 'credit_ledger.kind', 'credit_ledger.amount', 'credit_ledger.reserved_delta', 'credit_ledger.note', 'credit_ledger.created_at', 'jobs.task_type_id'])
        .where('credit_ledger.tenant_id', '=', tenantId)
        .orderBy('credit_ledger.created_at', 'desc')
        .orderBy('credit_ledger.id', 'desc')
        .limit(limit)
        .offset(offset)
        .execute(),
      this.db.selectFrom('credit_ledger').select((eb) => eb.fn.countAll<number>().as('n')).where('tenant_id', '=', tenantId).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  /** Credits spent (captured) since `since`, per UTC day and task type. */
  async spentSince(tenantId: string, since: string) {
    const day = sql<string>`substr(credit_ledger.created_at, 1, 10)`;
    const rows = await this.db
      .selectFrom('credit_ledger')
      .leftJoin('jobs', 'jobs.id', 'credit_ledger.job_id')
      .select((eb) => [day.as('day'), 'jobs.task_type_id', eb.fn.sum<number>(eb.neg(eb.ref('credit_ledger.reserved_delta'))).as('credits'), eb.fn.countAll<number>().as('jobs')])
      .where('credit_ledger.tenant_id', '=', tenantId)
      .where('credit_ledger.kind', '=', 'capture')
      .where('credit_ledger.created_at', '>=', since)
      .groupBy([day, 'jobs.task_type_id'])
      .orderBy(day)
      .execute();
    return rows.map((row) => ({ day: row.day, taskTypeId: row.task_type_id, credits: Number(row.credits), jobs: Number(row.jobs) }));
  }

  entriesForJob(jobId: string) {
    return this.db.selectFrom('credit_ledger').selectAll().where('job_id', '=', jobId).orderBy('created_at').execute();
  }
}
