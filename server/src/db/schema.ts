/**
 * Kysely table types. Both dialects store the same shapes: text ids, ISO 8601 UTC timestamp
 * strings (they sort and compare as text), integers for credits, and JSON as text.
 */
export type JobStatus = 'waiting_for_finalize' | 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';
export type CreditState = 'none' | 'reserved' | 'captured' | 'released';
export type LedgerKind = 'grant' | 'reserve' | 'capture' | 'release';

export interface TenantTable {
  id: string;
  name: string;
  /** Credits available to reserve (may go negative only with pay-as-you-go). */
  balance: number;
  /** Credits held by finalized jobs that have not ended yet. */
  reserved: number;
  pay_as_you_go: number;
  created_at: string;
  /** Default webhook for the tenant's jobs, and the secret all its deliveries are signed with. */
  webhook_url: string | null;
  webhook_secret: string | null;
}

export interface ApiKeyTable {
  id: string;
  tenant_id: string;
  name: string;
  key_hash: string;
  /** First characters of the key, shown in listings so a user can tell keys apart. */
  prefix: string;
  permissions: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at?: string | null;
}

export interface MediaClientTable {
  id: string;
  tenant_id: string;
  secret_hash: string;
  permissions: string;
  query_quota: number | null;
  mutation_quota: number | null;
  quota_period_seconds: number;
  created_at: string;
  revoked_at?: string | null;
  last_used_at?: string | null;
}

export interface JobTable {
  id: string;
  tenant_id: string;
  task_type_id: number;
  status: JobStatus;
  cost: number;
  credit_state: CreditState;
  parameters: string;
  result: string | null;
  error_message: string | null;
  attempts: number;
  locked_by: string | null;
  lease_expires_at: string | null;
  run_after: string | null;
  created_at: string;
  updated_at: string;
  queued_at: string | null;
  started_at: string | null;
  completed_at: string | null;
  webhook_url: string | null;
}

export interface JobInputTable {
  job_id: string;
  slot_name: string;
  position: number;
  file_name: string;
  content_type: string;
  size_bytes: number;
  object_key: string;
  upload_nonce: string;
  uploaded_at: string | null;
  uploaded_size: number | null;
}

export interface JobArtifactTable {
  job_id: string;
  id: string;
  kind: string;
  slot_name: string | null;
  content_type: string;
  size_bytes: number;
  object_key: string;
  created_at: string;
}

export interface CreditLedgerTable {
  id: string;
  tenant_id: string;
  job_id: string | null;
  kind: LedgerKind;
  /** Change to `balance`. */
  amount: number;
  /** Change to `reserved`. */
  reserved_delta: number;
  note: string | null;
  created_at: string;
}

/** A task type's model code (catalogue.ts): DF-1, AC-1, FD-1 in the seed, every code since. */
export type MediaModelType = string;
export type MediaKind = 'Image' | 'Video' | 'Audio' | 'Document';

/** A record of the media-record API; its processing is an ordinary job (job_id). */
export interface MediaRecordTable {
  mid: string;
  tenant_id: string;
  client_id: string;
  job_id: string;
  name: string;
  content_type: string;
  size: number;
  type: MediaKind;
  model_type: MediaModelType;
  /** Why the record ended FAILED before its job could run (bad upload, no upload in time). */
  error_message: string | null;
  upload_expires_at: string;
  created_at: string;
}

export interface MediaQuotaUsageTable {
  client_id: string;
  kind: 'query' | 'mutation';
  period_start: string;
  count: number;
}

export interface WebhookDeliveryTable {
  id: string;
  tenant_id: string;
  job_id: string;
  event: string;
  url: string;
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export type ConsoleRole = 'member' | 'admin' | 'operator';

/** A person who signs in to the web console; belongs to one tenant (an operator sees all). */
export interface ConsoleUserTable {
  id: string;
  tenant_id: string;
  /** Lower-cased, unique across the service: the sign-in form asks for the email only. */
  email: string;
  /** `scrypt$N$r$p$salt$hash` (base64 parts). */
  password_hash: string;
  role: ConsoleRole;
  created_at: string;
}

/** A console sign-in; the cookie holds the token, the table only its SHA-256. */
export interface ConsoleSessionTable {
  token_hash: string;
  user_id: string;
  created_at: string;
  expires_at: string;
}

/** A person enrolled for 1:N face search (face indexing); their faces are `indexed_faces`. */
export interface FaceSubjectTable {
  id: string;
  tenant_id: string;
  created_at: string;
}

export type IndexedFaceStatus = 'pending' | 'processed' | 'failed';

/**
 * One enrolled photo. Its embedding is computed by an ordinary face-embedding job (job_id);
 * `status` is stored once it is final, until then it is read from the job.
 */
export interface IndexedFaceTable {
  id: string;
  subject_id: string;
  tenant_id: string;
  job_id: string;
  name: string;
  status: IndexedFaceStatus;
  /** Float32 little-endian, base64: 1,024 dimensions in 5.5 KB of text. */
  embedding: string | null;
  error: string | null;
  upload_expires_at: string;
  processed_at: string | null;
  created_at: string;
}

export interface Database {
  face_subjects: FaceSubjectTable;
  indexed_faces: IndexedFaceTable;
  console_users: ConsoleUserTable;
  console_sessions: ConsoleSessionTable;
  webhook_deliveries: WebhookDeliveryTable;
  media_records: MediaRecordTable;
  media_quota_usage: MediaQuotaUsageTable;
  tenants: TenantTable;
  api_keys: ApiKeyTable;
  media_clients: MediaClientTable;
  jobs: JobTable;
  job_inputs: JobInputTable;
  job_artifacts: JobArtifactTable;
  credit_ledger: CreditLedgerTable;
}
