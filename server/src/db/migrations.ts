/**
 * Migrations, listed in order (no directory scan). The same code runs on SQLite and
 * PostgreSQL: only portable column types are used. Kysely's Migrator takes a database lock
 * (an advisory lock on PostgreSQL), so several processes starting at once are safe.
 */
import type { Kysely, Migration } from 'kysely';

const initial: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('tenants')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('balance', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('reserved', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('pay_as_you_go', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('permissions', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();

    await db.schema
      .createTable('media_clients')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('permissions', 'text', (c) => c.notNull())
      .addColumn('query_quota', 'integer')
      .addColumn('mutation_quota', 'integer')
      .addColumn('quota_period_seconds', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
      .addColumn('task_type_id', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('cost', 'integer', (c) => c.notNull())
      .addColumn('credit_state', 'text', (c) => c.notNull().defaultTo('none'))
      .addColumn('parameters', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('result', 'text')
      .addColumn('error_message', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('locked_by', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('run_after', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('queued_at', 'text')
      .addColumn('started_at', 'text')
      .addColumn('completed_at', 'text')
      .execute();
    await db.schema.createIndex('jobs_tenant_created').on('jobs').columns(['tenant_id', 'created_at']).execute();
    await db.schema.createIndex('jobs_tenant_status').on('jobs').columns(['tenant_id', 'status']).execute();
    await db.schema.createIndex('jobs_claimable').on('jobs').columns(['status', 'run_after', 'queued_at']).execute();
    await db.schema.createIndex('jobs_leases').on('jobs').columns(['status', 'lease_expires_at']).execute();

    await db.schema
      .createTable('job_inputs')
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('slot_name', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('file_name', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('size_bytes', 'integer', (c) => c.notNull())
      .addColumn('object_key', 'text', (c) => c.notNull())
      .addColumn('upload_nonce', 'text', (c) => c.notNull())
      .addColumn('uploaded_at', 'text')
      .addColumn('uploaded_size', 'integer')
      .addPrimaryKeyConstraint('job_inputs_pk', ['job_id', 'slot_name'])
      .execute();

    await db.schema
      .createTable('job_artifacts')
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('slot_name', 'text')
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('size_bytes', 'integer', (c) => c.notNull())
      .addColumn('object_key', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('job_artifacts_pk', ['job_id', 'id'])
      .execute();

    // Ledger rows outlive deleted jobs: job_id is a plain column, not a foreign key.
    await db.schema
      .createTable('credit_ledger')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
      .addColumn('job_id', 'text')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('amount', 'integer', (c) => c.notNull())
      .addColumn('reserved_delta', 'integer', (c) => c.notNull())
      .addColumn('note', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('credit_ledger_tenant').on('credit_ledger').columns(['tenant_id', 'created_at']).execute();
    await db.schema.createIndex('credit_ledger_job').on('credit_ledger').column('job_id').execute();
  },
};

const media: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('media_records')
      .addColumn('mid', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('model_type', 'text', (c) => c.notNull())
      .addColumn('error_message', 'text')
      .addColumn('upload_expires_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('media_records_tenant_created').on('media_records').columns(['tenant_id', 'created_at']).execute();
    await db.schema.createIndex('media_records_job').on('media_records').column('job_id').execute();

    await db.schema
      .createTable('media_quota_usage')
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('period_start', 'text', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('media_quota_usage_pk', ['client_id', 'kind', 'period_start'])
      .execute();
  },
};

const webhooks: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('tenants').addColumn('webhook_url', 'text').execute();
    await db.schema.alterTable('tenants').addColumn('webhook_secret', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('webhook_url', 'text').execute();
    // Deliveries outlive deleted jobs (they are the delivery log): no foreign key to jobs.
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('delivered_at', 'text')
      .execute();
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_deliveries_job').on('webhook_deliveries').column('job_id').execute();
  },
};

/** Keys and media clients can be listed (with when they were last used) and revoked. */
const credentialLifecycle: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('api_keys').addColumn('last_used_at', 'text').execute();
    await db.schema.alterTable('media_clients').addColumn('last_used_at', 'text').execute();
    await db.schema.alterTable('media_clients').addColumn('revoked_at', 'text').execute();
    await db.schema.createIndex('api_keys_tenant').on('api_keys').column('tenant_id').execute();
    await db.schema.createIndex('media_clients_tenant').on('media_clients').column('tenant_id').execute();
  },
};

/** Console users and their sessions (the web console signs in with email and password). */
const consoleUsers: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('console_users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('console_sessions')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('console_users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('console_sessions_expiry').on('console_sessions').column('expires_at').execute();
  },
};

/** Face indexing: enrolled subjects and their faces (embeddings for 1:N search). */
const faceIndex: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('face_subjects')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('face_subjects_tenant').on('face_subjects').column('tenant_id').execute();
    await db.schema
      .createTable('indexed_faces')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('subject_id', 'text', (c) => c.notNull().references('face_subjects.id').onDelete('cascade'))
      .addColumn('tenant_id', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('embedding', 'text')
      .addColumn('error', 'text')
      .addColumn('upload_expires_at', 'text', (c) => c.notNull())
      .addColumn('processed_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('indexed_faces_tenant_status').on('indexed_faces').columns(['tenant_id', 'status']).execute();
    await db.schema.createIndex('indexed_faces_job').on('indexed_faces').column('job_id').execute();
  },
};

export const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_media': media,
  '0003_webhooks': webhooks,
  '0004_credential_lifecycle': credentialLifecycle,
  '0005_console_users': consoleUsers,
  '0006_face_index': faceIndex,
};
