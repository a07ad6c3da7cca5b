/**
 * Credits (DESIGN.md §5). Finalize reserves a job's cost against the tenant's balance in the
 * same transaction that queues the job; completion captures it; cancel, delete and failure
 * release it. Each move is guarded by the job's credit_state, so it happens at most once,
 * and each writes a ledger row whose sums must equal the tenant's balance and reserved.
 */
import { insufficientBalance } from '../errors.js';
import type { Repositories } from '../repositories/index.js';

/** What moving a job's credits touches. */
type CreditRepositories = Pick<Repositories, 'jobs' | 'tenants' | 'ledger'>;

interface JobCredit {
  id: string;
  tenant_id: string;
  cost: number;
}

/** Throws INSUFFICIENT_BALANCE (and the caller's transaction rolls back) when not covered. */
export async function reserveCredits(repos: CreditRepositories, job: JobCredit): Promise<void> {
  if (!(await repos.jobs.setCreditState(job.id, 'none', 'reserved'))) return;
  if (!(await repos.tenants.adjust(job.tenant_id, -job.cost, job.cost, true))) throw insufficientBalance();
  await repos.ledger.append({ tenantId: job.tenant_id, jobId: job.id, kind: 'reserve', amount: -job.cost, reservedDelta: job.cost });
}

export async function captureCredits(repos: CreditRepositories, job: JobCredit): Promise<void> {
  if (!(await repos.jobs.setCreditState(job.id, 'reserved', 'captured'))) return;
  await repos.tenants.adjust(job.tenant_id, 0, -job.cost, false);
  await repos.ledger.append({ tenantId: job.tenant_id, jobId: job.id, kind: 'capture', amount: 0, reservedDelta: -job.cost });
}

export async function releaseCredits(repos: CreditRepositories, job: JobCredit, note: string): Promise<void> {
  if (!(await repos.jobs.setCreditState(job.id, 'reserved', 'released'))) return;
  await repos.tenants.adjust(job.tenant_id, job.cost, -job.cost, false);
  await repos.ledger.append({ tenantId: job.tenant_id, jobId: job.id, kind: 'release', amount: job.cost, reservedDelta: -job.cost, note });
}

export async function grantCredits(repos: Pick<Repositories, 'tenants' | 'ledger'>, tenantId: string, amount: number, note?: string): Promise<void> {
  await repos.tenants.adjust(tenantId, amount, 0, false);
  await repos.ledger.append({ tenantId, jobId: null, kind: 'grant', amount, reservedDelta: 0, note });
}
