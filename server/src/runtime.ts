/**
 * Wires a process together from its Config: database, object store, services, the HTTP app
 * (role api), the queue worker (role worker), or both (the embedded default).
 */
import { pino, type Logger } from 'pino';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { openDatabase, type Db } from './db/database.js';
import { assertCatalogueConsistent } from './detectors/catalogue.js';
import { repositoriesFor, transactionRunner, type Repositories, type RunInTransaction } from './repositories/index.js';
import { SYSTEM_SOURCES, type Sources } from './repositories/clock.js';
import { LocalObjectStore } from './repositories/local-object-store.js';
import { S3ObjectStore } from './repositories/s3-object-store.js';
import type { ObjectStore } from './repositories/object-store.js';
import { UrlSigner } from './services/url-signer.js';
import { JobService } from './services/job.service.js';
import { DownloadUrls } from './services/download-urls.js';
import { CredentialService } from './services/credential.service.js';
import { StorageService } from './services/storage.service.js';
import { MediaService } from './services/media.service.js';
import { WebhookDispatcher } from './services/webhook.service.js';
import { mediaRoutes } from './routes/media.js';
import { ConsoleAuthService } from './services/console-auth.service.js';
import { AccountService } from './services/account.service.js';
import { AudioPeaksService } from './services/audio-peaks.service.js';
import { FaceIndexService } from './services/face-index.service.js';
import { JobQueue } from './queue/job-queue.js';
import { QueueWorker } from './queue/worker.js';
import { CREDENTIALS_CHANNEL, JOBS_CHANNEL, PgListener, notifyCredentialRevoked, notifyJobQueued, type ChannelHandlers } from './queue/notify.js';
import { createMetrics, type Metrics } from './metrics.js';
import { buildApp } from './app.js';

export type Role = 'all' | 'api' | 'worker';

export interface Runtime {
  config: Config;
  db: Db;
  repos: Repositories;
  transaction: RunInTransaction;
  store: ObjectStore;
  credentials: CredentialService;
  jobs: JobService;
  media: MediaService;
  logger: Logger;
  metrics: Metrics;
  app: FastifyInstance | null;
  worker: QueueWorker | null;
  close(): Promise<void>;
}

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { service: 'mediaproof' } });
}

export async function createStore(config: Config): Promise<ObjectStore> {
  if (config.s3) return new S3ObjectStore(config.s3);
  return new LocalObjectStore(config.dataDir, config.publicUrl, new UrlSigner(config.signingSecret));
}

/**
 * `sources` is the clock and id source every service uses: the system's, except in service
 * tests that hold time still or move it on.
 */
export async function createRuntime(config: Config, role: Role, logger = createLogger(config), sources: Sources = SYSTEM_SOURCES): Promise<Runtime> {
  const { clock } = sources;
  assertCatalogueConsistent();
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const repos = repositoriesFor(db.kysely);
  const transaction = transactionRunner(db);
  const store = await createStore(config);
  const queue = new JobQueue(db.kysely, db.dialect);
  const metrics = createMetrics(() => queue.depth());
  // Other API processes hear of a revoked key through NOTIFY (PostgreSQL only).
  const credentials = new CredentialService(repos, async (keyId) => {
    if (db.pool) await notifyCredentialRevoked(db.pool, keyId).catch((error) => logger.warn({ err: error }, 'NOTIFY of a revoked key failed; other processes drop it within 5 s'));
  }, sources);
  // One cache of signed download URLs for both APIs' views of the same files.
  const downloadUrls = new DownloadUrls(store, config.downloadUrlTtlSeconds);

  // The worker ends jobs through the job service, which wakes the worker: made in that order.
  let worker: QueueWorker | null = null;
  const jobs = new JobService({
    repos,
    transaction,
    store,
    downloadUrls,
    config,
    sources,
    onJobQueued: (cost) => {
      metrics.creditsReserved.inc(cost);
      worker?.wake();
      // Workers in other processes hear of it through NOTIFY (PostgreSQL only).
      if (db.pool && config.queueNotify) void notifyJobQueued(db.pool, logger);
    },
  });

  worker = role === 'api' ? null : new QueueWorker({ queue, jobs, repos, store, config, logger: logger.child({ role: 'worker' }), metrics });
  const media = new MediaService({ repos, jobs, store, downloadUrls, config, clock });
  const faces = new FaceIndexService({ repos, jobs, store, downloadUrls, exactSearchMaxFaces: config.faceSearchExactMax, sources });
  let app: FastifyInstance | null = null;
  let mediaSweeper: NodeJS.Timeout | null = null;
  if (role !== 'worker') {
    app = await buildApp({
      config,
      logger,
      metrics,
      jobs,
      credentials,
      storage: store.urlRoutes && new StorageService({
        repos,
        local: store.urlRoutes,
        store,
        signer: new UrlSigner(config.signingSecret),
        clock,
        // Media records and enrolled faces start processing once their file has arrived.
        onUploaded: async (jobId) => {
          await media.onUploaded(jobId);
          await faces.onUploaded(jobId);
        },
      }),
      faces,
      store,
      console: {
        sessions: new ConsoleAuthService(repos, config.consoleSessionSeconds, sources),
        accounts: new AccountService({ repos, transaction, clock }),
        peaks: new AudioPeaksService({ repos, store }),
      },
      checkDatabase: async () => {
        await sql`select 1`.execute(db.kysely);
      },
      plugins: [(instance) => instance.register(mediaRoutes, { prefix: '/api', media })],
    });
    // Media records: start those whose file reached the bucket (S3), fail those whose file
    // never came and release their credits.
    mediaSweeper = setInterval(() => {
      media
        .sweepArrivedUploads()
        .then(() => media.sweepExpiredUploads())
        .then(() => faces.sweep())
        .catch((error) => logger.warn({ err: error }, 'media sweep failed'));
    }, store.uploadsBypassApi ? 5_000 : 30_000);
    mediaSweeper.unref();
  }
  const channels: ChannelHandlers = {};
  if (worker) channels[JOBS_CHANNEL] = () => worker.wake();
  if (app) channels[CREDENTIALS_CHANNEL] = (keyId) => credentials.forgetKey(keyId);
  // QUEUE_NOTIFY=false (behind a transaction-pooling PgBouncer, which cannot LISTEN): polling
  // finds jobs, and a revoked key is dropped when the verified-key cache expires (5 s).
  const listener = config.databaseUrl && config.queueNotify && Object.keys(channels).length ? new PgListener(config.databaseUrl, channels, logger.child({ role: 'listener' })) : null;
  listener?.start();
  worker?.start();
  // Webhooks are sent by the processes that end jobs (workers); an API-only process sends none.
  const webhooks = worker
    ? new WebhookDispatcher({
        repos,
        webhooks: repos.webhooks,
        dialect: db.dialect,
        logger: logger.child({ role: 'webhooks' }),
        options: { allowPrivate: config.webhookAllowPrivate, firstRetryMs: config.webhookFirstRetryMs, timeoutMs: config.webhookTimeoutMs, pollIntervalMs: Math.min(config.pollIntervalMs, 1000) },
        clock,
      })
    : null;
  webhooks?.start();

  return {
    config, db, repos, transaction, store, credentials, jobs, media, logger, metrics, app, worker,
    async close() {
      if (mediaSweeper) clearInterval(mediaSweeper);
      await app?.close();
      await listener?.stop();
      await worker?.stop(config.shutdownGraceSeconds * 1000);
      await webhooks?.stop();
      await db.close();
    },
  };
}
