/**
 * Harness for the scale-out tests: a throwaway database on a private PostgreSQL cluster that
 * the test process starts itself (private-postgres.ts; the machine's own PostgreSQL is never
 * touched), an S3-compatible server (s3rver behind a gate that checks SigV4 signatures) on
 * loopback, and mediaproof processes spawned in their roles.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import S3rver from 's3rver';
import { openDatabase, type Db } from '../../src/db/database.js';
import { repositoriesFor, transactionRunner, type Repositories, type RunInTransaction } from '../../src/repositories/index.js';
import { CredentialService } from '../../src/services/credential.service.js';
import { grantCredits } from '../../src/services/credit.service.js';
import { freePort, sleep, spawnMediaproof } from '../helpers.js';
import { privatePostgres, privatePostgresSkipReason } from './private-postgres.js';
import { startSigV4Gate } from './sigv4-gate.js';

/** null when a private PostgreSQL cluster runs; otherwise the reason to skip, for `describe(…, { skip })`. */
export const postgresSkipReason = privatePostgresSkipReason;

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: (await privatePostgres()).url() });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh database `mediaproof_test_<random>`, dropped (with its connections) afterwards. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `mediaproof_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`create database ${name}`));
  return {
    name,
    url: (await privatePostgres()).url(name),
    async drop() {
      for (let attempt = 0; ; attempt++) {
        try {
          await admin((client) => client.query(`drop database if exists ${name} with (force)`));
          return;
        } catch (error) {
          if (attempt >= 10) throw error;
          await sleep(500);
        }
      }
    },
  };
}

export interface TestS3 {
  /** Where clients go: the SigV4 gate. */
  endpoint: string;
  /** s3rver itself, which takes any signature: for planting objects the gate would refuse. */
  unguardedEndpoint: string;
  bucket: string;
  env: Record<string, string>;
  /** Requests the gate refused, by S3 error code. */
  refused: Map<string, number>;
  close(): Promise<void>;
}

/**
 * s3rver on a free loopback port with one bucket, behind a gate that checks every request's
 * SigV4 signature as S3 does (s3rver checks none): a pre-signed PUT with another
 * Content-Type or Content-Length than it was signed for is refused, as S3 refuses it.
 */
export async function startS3(): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'mediaproof-s3-'));
  const bucket = 'mediaproof-test';
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const unguardedEndpoint = `http://127.0.0.1:${port}`;
  const gate = await startSigV4Gate(unguardedEndpoint, credentials, 'us-east-1');
  return {
    endpoint: gate.endpoint,
    unguardedEndpoint,
    bucket,
    refused: gate.refused,
    env: {
      S3_BUCKET: bucket,
      S3_ENDPOINT: gate.endpoint,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
    async close() {
      await gate.close();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Direct database access from the test process (tenants, keys, ledger checks). */
export interface Direct {
  db: Db;
  repos: Repositories;
  transaction: RunInTransaction;
  tenant(credits: number): Promise<string>;
  apiKey(tenantId: string): Promise<string>;
  close(): Promise<void>;
}

export async function direct(databaseUrl: string): Promise<Direct> {
  const db = await openDatabase({ databaseUrl, dataDir: tmpdir(), poolSize: 4 });
  const repos = repositoriesFor(db.kysely);
  const transaction = transactionRunner(db);
  return {
    db,
    repos,
    transaction,
    async tenant(credits) {
      return transaction(async (trx) => {
        const row = await trx.tenants.insert('scale-test', false);
        await grantCredits(trx, row.id, credits);
        return row.id;
      });
    },
    async apiKey(tenantId) {
      return (await new CredentialService(repos).createApiKey(tenantId, 'scale-test', ['jobs:read', 'jobs:write', 'jobs:delete'])).key;
    },
    close: () => db.close(),
  };
}

export interface Proc {
  role: 'api' | 'worker' | 'all';
  child: ChildProcess;
  /** API url for api/all; the METRICS_PORT url for workers. */
  url: string;
  output(): string;
  /** What matters when a process died: lines that are not warnings (errors, crash traces). */
  problems(): string;
  exited: Promise<number | null>;
  /** Resolves with the exit code; SIGKILL after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
}

export const SIGNING_SECRET = 'scale-test-signing-secret-0123456789abcdef';

/** Spawns `mediaproof serve --role <role>` and waits until it answers /readyz. */
export async function spawnRole(role: 'api' | 'worker' | 'all', env: Record<string, string>, timeoutMs = 60_000): Promise<Proc> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `mediaproof-${role}-`));
  const fullEnv: Record<string, string> = {
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    SIGNING_SECRET,
    LOG_LEVEL: 'warn',
    POLL_INTERVAL_MS: '250',
    WORKER_CONCURRENCY: '1',
    ...(role === 'worker' ? { METRICS_PORT: String(port) } : { PORT: String(port) }),
    ...env,
  };
  const child = spawnMediaproof(['serve', '--role', role], fullEnv);
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-5_000_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    rmSync(dataDir, { recursive: true, force: true });
    resolve(code);
  }));
  const url = `http://127.0.0.1:${port}`;
  const proc: Proc = {
    role,
    child,
    url,
    output: () => log,
    problems: () =>
      log
        .split('\n')
        .filter((line) => line && !/"level":(10|20|30|40),/.test(line))
        .join('\n')
        .slice(-4000),
    exited,
    async stop(signal = 'SIGTERM', graceMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${role} process exited with ${child.exitCode} before it was ready:\n${log}`);
    const ready = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) return proc;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${role} process not ready after ${timeoutMs} ms:\n${log}`);
    }
    await sleep(100);
  }
}

/** Sums a Prometheus counter's samples (optionally only those whose labels include `match`). */
export async function scrapeCounter(url: string, name: string, match = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const [series, value] = [line.slice(0, line.lastIndexOf(' ')), line.slice(line.lastIndexOf(' ') + 1)];
    if (series !== name && !series.startsWith(`${name}{`)) continue;
    if (match && !series.includes(match)) continue;
    total += Number(value);
  }
  return total;
}

/** Runs `work` over `items` with at most `limit` in flight. */
export async function pool<T, R>(items: T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
      }
    }),
  );
  return results;
}
