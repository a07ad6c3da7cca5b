import type { Kysely } from 'kysely';
import type { Database, WebhookDeliveryTable } from '../db/schema.js';
import type { Dialect } from '../db/database.js';

export class WebhookRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(delivery: WebhookDeliveryTable): Promise<void> {
    await this.db.insertInto('webhook_deliveries').values(delivery).execute();
  }

  forJob(tenantId: string, jobId: string): Promise<WebhookDeliveryTable[]> {
    return this.db.selectFrom('webhook_deliveries').selectAll().where('tenant_id', '=', tenantId).where('job_id', '=', jobId).orderBy('created_at').execute();
  }

  /**
   * Claims one due delivery (the queue's claim pattern): pushing next_attempt_at forward by
   * the lease makes it invisible to other dispatchers while this one sends it.
   */
  async claimDue(dialect: Dialect, now: string, leaseUntil: string): Promise<WebhookDeliveryTable | undefined> {
    let next = this.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .limit(1);
    if (dialect === 'postgres') next = next.forUpdate().skipLocked();
    return this.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ next_attempt_at: leaseUntil, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', next)
      .returningAll()
      .executeTakeFirst();
  }

  async record(id: string, changes: Partial<WebhookDeliveryTable>): Promise<void> {
    await this.db.updateTable('webhook_deliveries').set(changes).where('id', '=', id).execute();
  }

  async setTenantWebhook(tenantId: string, url: string | null | undefined, secret: string): Promise<void> {
    await this.db
      .updateTable('tenants')
      .set({ webhook_secret: secret, ...(url !== undefined ? { webhook_url: url } : {}) })
      .where('id', '=', tenantId)
      .execute();
  }
}
