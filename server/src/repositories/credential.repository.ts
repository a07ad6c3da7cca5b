import type { Kysely } from 'kysely';
import type { ApiKeyTable, Database, MediaClientTable } from '../db/schema.js';

/** API keys (job API) and media clients (media-record API); secrets are stored only as hashes. */
export class CredentialRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertApiKey(row: ApiKeyTable): Promise<void> {
    await this.db.insertInto('api_keys').values(row).execute();
  }

  findApiKeyByHash(keyHash: string): Promise<ApiKeyTable | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).where('revoked_at', 'is', null).executeTakeFirst();
  }

  async insertMediaClient(row: MediaClientTable): Promise<void> {
    await this.db.insertInto('media_clients').values(row).execute();
  }

  findMediaClient(id: string): Promise<MediaClientTable | undefined> {
    return this.db.selectFrom('media_clients').selectAll().where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  }

  listApiKeys(tenantId: string): Promise<ApiKeyTable[]> {
    return this.db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
  }

  listMediaClients(tenantId: string): Promise<MediaClientTable[]> {
    return this.db.selectFrom('media_clients').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
  }

  /** Revokes a key once (of `tenantId` only, when given); returns the row as it is afterwards (undefined when there is none). */
  async revokeApiKey(id: string, at: string, tenantId?: string): Promise<ApiKeyTable | undefined> {
    let update = this.db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null);
    let select = this.db.selectFrom('api_keys').selectAll().where('id', '=', id);
    if (tenantId !== undefined) {
      update = update.where('tenant_id', '=', tenantId);
      select = select.where('tenant_id', '=', tenantId);
    }
    await update.execute();
    return select.executeTakeFirst();
  }

  async revokeMediaClient(id: string, at: string, tenantId?: string): Promise<MediaClientTable | undefined> {
    let update = this.db.updateTable('media_clients').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null);
    let select = this.db.selectFrom('media_clients').selectAll().where('id', '=', id);
    if (tenantId !== undefined) {
      update = update.where('tenant_id', '=', tenantId);
      select = select.where('tenant_id', '=', tenantId);
    }
    await update.execute();
    return select.executeTakeFirst();
  }

  /** Marks a key used; written at most once a minute per key (see CredentialService). */
  async touchApiKey(id: string, at: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  async touchMediaClient(id: string, at: string): Promise<void> {
    await this.db.updateTable('media_clients').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
