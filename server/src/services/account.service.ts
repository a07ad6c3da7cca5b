/**
 * A tenant's account as the console shows it: balance, ledger and spending, and for operators
 * every tenant and credit grants. Grants go through the same ledger as the API's credits.
 */
import { TASK_TYPES } from '../detectors/catalogue.js';
import { AppError } from '../errors.js';
import type { Repositories, RunInTransaction } from '../repositories/index.js';
import { systemClock, type Clock } from '../repositories/clock.js';
import { grantCredits } from './credit.service.js';

/** Days of spending shown beside the balance. */
const USAGE_DAYS = 30;
const slugOf = (taskTypeId: number | null) => TASK_TYPES.find((t) => t.id === taskTypeId)?.slug ?? null;

export class AccountService {
  constructor(private readonly deps: { repos: Pick<Repositories, 'tenants' | 'ledger'>; transaction: RunInTransaction; clock?: Clock }) {}

  private async tenant(tenantId: string) {
    const row = await this.deps.repos.tenants.find(tenantId);
    if (!row) throw new AppError('NOT_FOUND', `no tenant ${tenantId}`);
    return row;
  }

  async summary(tenantId: string): Promise<{ id: string; name: string }> {
    const tenant = await this.tenant(tenantId);
    return { id: tenant.id, name: tenant.name };
  }

  async credits(tenantId: string, page: number, pageSize: number) {
    const tenant = await this.tenant(tenantId);
    const since = new Date((this.deps.clock ?? systemClock).now() - USAGE_DAYS * 86_400_000).toISOString().slice(0, 10);
    const [ledger, usage] = await Promise.all([
      this.deps.repos.ledger.page(tenantId, pageSize, (page - 1) * pageSize),
      this.deps.repos.ledger.spentSince(tenantId, since),
    ]);
    return {
      tenant: { id: tenant.id, name: tenant.name },
      balance: tenant.balance,
      reserved: tenant.reserved,
      payAsYouGo: tenant.pay_as_you_go === 1,
      ledger: {
        items: ledger.rows.map((row) => ({
          id: row.id,
          kind: row.kind,
          amount: row.amount,
          reservedDelta: row.reserved_delta,
          jobId: row.job_id,
          taskType: slugOf(row.task_type_id),
          note: row.note,
          createdAt: row.created_at,
        })),
        total: ledger.total,
        page,
        pageSize,
      },
      usage: usage.map((row) => ({ day: row.day, taskType: slugOf(row.taskTypeId), credits: row.credits, jobs: row.jobs })),
    };
  }

  async tenants() {
    return (await this.deps.repos.tenants.list()).map((row) => ({
      id: row.id,
      name: row.name,
      balance: row.balance,
      reserved: row.reserved,
      payAsYouGo: row.pay_as_you_go === 1,
      createdAt: row.created_at,
    }));
  }

  /** Adds credits (a negative amount removes them) in one transaction with its ledger row. */
  async grant(tenantId: string, amount: number, note: string): Promise<{ balance: number; reserved: number }> {
    return this.deps.transaction(async (repos) => {
      if (!(await repos.tenants.find(tenantId))) throw new AppError('NOT_FOUND', `no tenant ${tenantId}`);
      await grantCredits(repos, tenantId, amount, note);
      const row = (await repos.tenants.find(tenantId))!;
      return { balance: row.balance, reserved: row.reserved };
    });
  }
}
