import type { Kysely } from 'kysely';
import type { ConsoleSessionTable, ConsoleUserTable, Database } from '../db/schema.js';

/** Console users and their sessions; session tokens are stored only as hashes. */
export class ConsoleRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertUser(row: ConsoleUserTable): Promise<void> {
    await this.db.insertInto('console_users').values(row).execute();
  }

  findUserByEmail(email: string): Promise<ConsoleUserTable | undefined> {
    return this.db.selectFrom('console_users').selectAll().where('email', '=', email).executeTakeFirst();
  }

  async insertSession(row: ConsoleSessionTable): Promise<void> {
    await this.db.insertInto('console_sessions').values(row).execute();
  }

  /** The user of a session that has not expired at `now`. */
  findSessionUser(tokenHash: string, now: string): Promise<ConsoleUserTable | undefined> {
    return this.db
      .selectFrom('console_sessions')
      .innerJoin('console_users', 'console_users.id', 'console_sessions.user_id')
      .selectAll('console_users')
      .where('console_sessions.token_hash', '=', tokenHash)
      .where('console_sessions.expires_at', '>', now)
      .executeTakeFirst();
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.db.deleteFrom('console_sessions').where('token_hash', '=', tokenHash).execute();
  }

  async deleteExpiredSessions(now: string): Promise<void> {
    await this.db.deleteFrom('console_sessions').where('expires_at', '<=', now).execute();
  }
}
