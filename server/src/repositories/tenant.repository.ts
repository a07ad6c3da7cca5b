import type { Kysely } from 'kysely';
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

  entriesForJob(jobId: string) {
    return this.db.selectFrom('credit_ledger').selectAll().where('job_id', '=', jobId).orderBy('created_at').execute();
  }
}
