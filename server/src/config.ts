/**
 * Environment → typed Config, validated once at start. A bad value stops the process with a
 * message naming the variable, never a stack trace from deep inside.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readTrustAnchors } from './detectors/image/c2pa.js';

export interface TaskOverride {
  maxFileBytes?: number;
  timeoutSeconds?: number;
  basePrice?: number;
  pricePerMiB?: number;
}

export interface Config {
  host: string;
  port: number;
  publicUrl: string;
  dataDir: string;
  /** postgres://… switches to PostgreSQL; null means SQLite under dataDir. */
  databaseUrl: string | null;
  s3: { bucket: string; endpoint: string | null; region: string; forcePathStyle: boolean } | null;
  modelsDir: string | null;
  /** PEM bundle of CA certificates whose C2PA signers are trusted (passed to detectors with each job). */
  c2paTrustAnchors: string | null;
  /** Secret for upload / download URL signatures; generated and kept in dataDir when unset. */
  signingSecret: string;
  uploadUrlTtlSeconds: number;
  downloadUrlTtlSeconds: number;
  workerConcurrency: number;
  leaseSeconds: number;
  /** On SIGTERM/SIGINT, how long running jobs may go on before they are put back in the queue. */
  shutdownGraceSeconds: number;
  pollIntervalMs: number;
  maxAttempts: number;
  taskOverrides: Record<string, TaskOverride>;
  /** Default media-record API quotas per client and period (null = unlimited). */
  mediaQueryQuota: number | null;
  mediaMutationQuota: number | null;
  /** Allow webhooks to loopback and private addresses (off: SSRF protection). */
  webhookAllowPrivate: boolean;
  webhookFirstRetryMs: number;
  webhookTimeoutMs: number;
  logLevel: string;
  /** One log line per HTTP request (off by default: the reverse proxy usually keeps access logs). */
  logRequests: boolean;
  /** Testing aid for fault handling: block each detector run this long (ms), ignoring aborts. */
  debugDetectorDelayMs: number;
  /** Port of a small /metrics, /healthz, /readyz server (for `serve --role worker`, which has no API); null: none. */
  metricsPort: number | null;
  /** PostgreSQL: NOTIFY on finalize and LISTEN in workers (off behind a transaction-pooling PgBouncer, which cannot LISTEN). */
  queueNotify: boolean;
  /** How long a console sign-in lasts. */
  consoleSessionSeconds: number;
  /** Sign-in attempts allowed per email and client address per minute (the console's login). */
  consoleLoginAttemptsPerMinute: number;
  /** Face indexing: tenants with more searchable faces than this are searched through HNSW. */
  faceSearchExactMax: number;
  /** Trust X-Forwarded-For/-Proto from a reverse proxy in front (client address, https). */
  trustProxy: boolean;
  /** Directory of the built web console served at `/`; null when it was not built. */
  consoleDir: string | null;
}

/** The console's build (`npm run build --workspace console`), or CONSOLE_DIR; null when absent. */
/** C2PA_TRUST_ANCHORS is checked at start-up so that a wrong path fails the process, not every job. */
function c2paTrustAnchors(env: Env): string | null {
  if (!env.C2PA_TRUST_ANCHORS) return null;
  try {
    readTrustAnchors(env.C2PA_TRUST_ANCHORS);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return resolve(env.C2PA_TRUST_ANCHORS);
}

function consoleDir(env: Env): string | null {
  const dir = env.CONSOLE_DIR ? resolve(env.CONSOLE_DIR) : fileURLToPath(new URL('../../console/dist', import.meta.url));
  if (existsSync(`${dir}/index.html`)) return dir;
  if (env.CONSOLE_DIR) throw new ConfigError(`CONSOLE_DIR has no index.html: ${dir}`);
  return null;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function url(name: string, raw: string): string {
  try {
    return new URL(raw).toString().replace(/\/$/, '');
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
}

/** Reads the signing secret from SIGNING_SECRET, else from (or into) DATA_DIR/secret. */
function signingSecret(env: Env, dataDir: string): string {
  if (env.SIGNING_SECRET) {
    if (env.SIGNING_SECRET.length < 32) throw new ConfigError('SIGNING_SECRET must be at least 32 characters');
    return env.SIGNING_SECRET;
  }
  const file = resolve(dataDir, 'signing-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
  return secret;
}

export function loadConfig(env: Env = process.env): Config {
  const host = env.HOST || '127.0.0.1';
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const dataDir = resolve(env.DATA_DIR || './data');
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// (leave it unset for embedded SQLite)');
  }
  const s3 = env.S3_BUCKET
    ? {
        bucket: env.S3_BUCKET,
        endpoint: env.S3_ENDPOINT ? url('S3_ENDPOINT', env.S3_ENDPOINT) : null,
        region: env.S3_REGION || 'us-east-1',
        forcePathStyle: boolean(env, 'S3_FORCE_PATH_STYLE', Boolean(env.S3_ENDPOINT)),
      }
    : null;
  let taskOverrides: Record<string, TaskOverride> = {};
  if (env.TASK_OVERRIDES) {
    try {
      taskOverrides = JSON.parse(env.TASK_OVERRIDES) as Record<string, TaskOverride>;
    } catch {
      throw new ConfigError('TASK_OVERRIDES must be JSON: {"<slug>": {"maxFileBytes": n, "timeoutSeconds": n, "basePrice": n, "pricePerMiB": n}}');
    }
  }
  const publicUrl = env.PUBLIC_URL ? url('PUBLIC_URL', env.PUBLIC_URL) : `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    host,
    port,
    publicUrl,
    dataDir,
    databaseUrl,
    s3,
    modelsDir: env.MODELS_DIR ? resolve(env.MODELS_DIR) : null,
    c2paTrustAnchors: c2paTrustAnchors(env),
    signingSecret: signingSecret(env, dataDir),
    uploadUrlTtlSeconds: integer(env, 'UPLOAD_URL_TTL_SECONDS', 3600, 1, 7 * 24 * 3600),
    downloadUrlTtlSeconds: integer(env, 'DOWNLOAD_URL_TTL_SECONDS', 3600, 1, 7 * 24 * 3600),
    workerConcurrency: integer(env, 'WORKER_CONCURRENCY', Math.max(1, availableParallelism()), 1, 256),
    leaseSeconds: integer(env, 'LEASE_SECONDS', 30, 1, 3600),
    shutdownGraceSeconds: integer(env, 'SHUTDOWN_GRACE_SECONDS', 10, 0, 24 * 3600),
    pollIntervalMs: integer(env, 'POLL_INTERVAL_MS', 1000, 10, 60_000),
    maxAttempts: integer(env, 'MAX_ATTEMPTS', 3, 1, 100),
    taskOverrides,
    mediaQueryQuota: env.MEDIA_QUERY_QUOTA === 'unlimited' ? null : integer(env, 'MEDIA_QUERY_QUOTA', 100_000, 0),
    mediaMutationQuota: env.MEDIA_MUTATION_QUOTA === 'unlimited' ? null : integer(env, 'MEDIA_MUTATION_QUOTA', 10_000, 0),
    webhookAllowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    webhookFirstRetryMs: integer(env, 'WEBHOOK_FIRST_RETRY_MS', 10_000, 10),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    logLevel: env.LOG_LEVEL || 'info',
    logRequests: boolean(env, 'LOG_REQUESTS', false),
    debugDetectorDelayMs: integer(env, 'DEBUG_DETECTOR_DELAY_MS', 0, 0),
    metricsPort: env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 0, 65535) : null,
    queueNotify: boolean(env, 'QUEUE_NOTIFY', true),
    consoleSessionSeconds: integer(env, 'CONSOLE_SESSION_SECONDS', 12 * 3600, 10, 30 * 24 * 3600),
    consoleLoginAttemptsPerMinute: integer(env, 'CONSOLE_LOGIN_ATTEMPTS_PER_MINUTE', 10, 1, 10_000),
    consoleDir: consoleDir(env),
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    faceSearchExactMax: integer(env, 'FACE_SEARCH_EXACT_MAX', 20_000, 0),
  };
}
