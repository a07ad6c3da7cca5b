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
    return this.db.selectFrom('media_clients').selectAll().where('id', '=', id).executeTakeFirst();
  }
}
