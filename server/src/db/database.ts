/**
 * Opens the database: embedded SQLite (better-sqlite3, WAL) under DATA_DIR by default,
 * PostgreSQL when DATABASE_URL is set. Runs the migrations before anything else uses it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import type { Database } from './schema.js';
import { MIGRATIONS } from './migrations.js';
import { PreparingClient } from './prepared-statements.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** A pg pool (PostgreSQL only), for LISTEN/NOTIFY. */
  pool: pg.Pool | null;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | null;
  dataDir: string;
  poolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Db> {
  let db: Db;
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10, Client: PreparingClient });
    // A client that loses its server (restart, failover) must not crash the process: idle
    // ones report to the pool, and a checked-out one (between the statements of a
    // transaction) would otherwise emit an unhandled 'error'. Its next query fails instead,
    // and the pool discards it on release.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    db = { kysely, dialect: 'postgres', pool, close: () => kysely.destroy() };
  } else {
    mkdirSync(options.dataDir, { recursive: true });
    const sqlite = new SQLite(join(options.dataDir, 'mediaproof.sqlite'));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    // Several processes (api, workers, the operator CLI) may share the file.
    sqlite.pragma('busy_timeout = 10000');
    sqlite.pragma('foreign_keys = ON');
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingStatements(sqlite) }) });
    db = { kysely, dialect: 'sqlite', pool: null, close: () => kysely.destroy() };
  }
  await migrate(db.kysely);
  return db;
}

async function migrate(kysely: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db: kysely, provider: { getMigrations: async () => MIGRATIONS } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`database migration ${failed ?? ''} failed: ${(error as Error).message ?? error}`);
  }
}

/**
 * Kysely prepares every SQLite query anew; preparing is a good part of a small query's cost.
 * Statements are reused by SQL text (the set is small: queries are built from fixed shapes),
 * bounded in case a caller builds many distinct texts. Safe because better-sqlite3 runs each
 * statement to completion synchronously (nothing here streams with iterate()).
 */
function cachingStatements(sqlite: SQLite.Database, limit = 500) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(text: string) {
      let statement = cache.get(text);
      if (!statement) {
        statement = sqlite.prepare(text);
        if (cache.size >= limit) cache.delete(cache.keys().next().value!);
        cache.set(text, statement);
      }
      return statement;
    },
    close() {
      cache.clear();
      sqlite.close();
    },
  };
}
