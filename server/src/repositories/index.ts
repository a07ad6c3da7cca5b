import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Db } from '../db/database.js';
import { ConsoleRepository } from './console.repository.js';
import { FaceIndexRepository } from './face-index.repository.js';
import { CredentialRepository } from './credential.repository.js';
import { JobRepository } from './job.repository.js';
import { MediaRepository } from './media.repository.js';
import { WebhookRepository } from './webhook.repository.js';
import { CreditLedgerRepository, TenantRepository } from './tenant.repository.js';

export interface Repositories {
  tenants: TenantRepository;
  ledger: CreditLedgerRepository;
  credentials: CredentialRepository;
  jobs: JobRepository;
  media: MediaRepository;
  webhooks: WebhookRepository;
  console: ConsoleRepository;
  faces: FaceIndexRepository;
}

export function repositoriesFor(executor: Kysely<Database>): Repositories {
  return {
    tenants: new TenantRepository(executor),
    ledger: new CreditLedgerRepository(executor),
    credentials: new CredentialRepository(executor),
    jobs: new JobRepository(executor),
    media: new MediaRepository(executor),
    webhooks: new WebhookRepository(executor),
    console: new ConsoleRepository(executor),
    faces: new FaceIndexRepository(executor),
  };
}

/** Runs `work` in one database transaction with repositories bound to it. */
export type RunInTransaction = <T>(work: (repos: Repositories) => Promise<T>) => Promise<T>;

export function transactionRunner(db: Db): RunInTransaction {
  return (work) => db.kysely.transaction().execute((trx) => work(repositoriesFor(trx)));
}
