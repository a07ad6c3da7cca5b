/**
 * API keys and media-client credentials (DESIGN.md §6): random secrets shown once and
 * stored as SHA-256 hashes (they are high-entropy, so a fast hash is the right tool).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Repositories } from '../repositories/index.js';
import { isoAt, SYSTEM_SOURCES, type Sources } from '../repositories/clock.js';
import { AppError } from '../errors.js';

export const JOB_PERMISSIONS = ['jobs:read', 'jobs:write', 'jobs:delete'] as const;
export const MEDIA_PERMISSIONS = ['media:read', 'media:write', 'media:delete'] as const;
/** Face indexing: search and list (read), enrol (write), forget a person or a face (delete). */
export const FACE_PERMISSIONS = ['faces:read', 'faces:write', 'faces:delete'] as const;
/** What an API key may be given. */
export const API_KEY_PERMISSIONS = [...JOB_PERMISSIONS, ...FACE_PERMISSIONS] as const;
export type ApiKeyPermission = (typeof API_KEY_PERMISSIONS)[number];
export type JobPermission = (typeof JOB_PERMISSIONS)[number];
export type MediaPermission = (typeof MEDIA_PERMISSIONS)[number];

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Base62 of `bytes` random bytes (as a big number, so every character is uniform). */
export function randomBase62(bytes: number): string {
  let value = BigInt(`0x${randomBytes(bytes).toString('hex')}`);
  let text = '';
  const length = Math.ceil((bytes * 8) / Math.log2(62));
  for (let i = 0; i < length; i++) {
    text = BASE62[Number(value % 62n)] + text;
    value /= 62n;
  }
  return text;
}

export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

export function parsePermissions<T extends string>(text: string, allowed: readonly T[]): T[] {
  const permissions = text.split(',').map((p) => p.trim()).filter(Boolean);
  const unknown = permissions.filter((p) => !allowed.includes(p as T));
  if (unknown.length) throw new Error(`unknown permission ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`);
  if (!permissions.length) throw new Error(`at least one permission is required: ${allowed.join(', ')}`);
  return [...new Set(permissions)] as T[];
}

export interface ApiKeyPrincipal {
  keyId: string;
  tenantId: string;
  permissions: ReadonlySet<string>;
}

/** How long a verified key is trusted without asking the database again. */
const KEY_CACHE_MS = 5_000;
const KEY_CACHE_MAX = 10_000;

export interface ApiKeyView {
  keyId: string;
  name: string;
  prefix: string;
  permissions: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface MediaClientView {
  clientId: string;
  permissions: string[];
  queryQuota: number | null;
  mutationQuota: number | null;
  quotaPeriodSeconds: number;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export class CredentialService {
  private readonly verifiedKeys = new Map<string, { principal: ApiKeyPrincipal; until: number }>();

  /**
   * `onRevoked` tells other processes (NOTIFY on PostgreSQL); this process forgets the key at
   * once. Elsewhere a revoked key works at most KEY_CACHE_MS longer (the cache's lifetime).
   */
  constructor(
    private readonly repos: Pick<Repositories, 'credentials' | 'tenants'>,
    private readonly onRevoked: (keyId: string) => Promise<void> = async () => {},
    private readonly sources: Sources = SYSTEM_SOURCES,
  ) {}

  private now(): string {
    return isoAt(this.sources.clock.now());
  }

  /** Drops a key from the verified-key cache; an empty id drops every key. */
  forgetKey(keyId: string): void {
    if (!keyId) return this.verifiedKeys.clear();
    for (const [key, entry] of this.verifiedKeys) if (entry.principal.keyId === keyId) this.verifiedKeys.delete(key);
  }

  async listApiKeys(tenantId: string): Promise<ApiKeyView[]> {
    if (!(await this.repos.tenants.find(tenantId))) throw new Error(`no tenant ${tenantId}`);
    return (await this.repos.credentials.listApiKeys(tenantId)).map((row) => ({
      keyId: row.id,
      name: row.name,
      prefix: row.prefix,
      permissions: row.permissions.split(','),
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at ?? null,
      revokedAt: row.revoked_at,
    }));
  }

  /** Revokes a key (again is a no-op that reports the first revocation); throws for an unknown id, or one of another tenant. */
  async revokeApiKey(keyId: string, tenantId?: string): Promise<{ keyId: string; revokedAt: string }> {
    const row = await this.repos.credentials.revokeApiKey(keyId, this.now(), tenantId);
    if (!row) throw new AppError('NOT_FOUND', `no API key ${keyId}`);
    this.forgetKey(keyId);
    await this.onRevoked(keyId);
    return { keyId, revokedAt: row.revoked_at! };
  }

  async listMediaClients(tenantId: string): Promise<MediaClientView[]> {
    if (!(await this.repos.tenants.find(tenantId))) throw new Error(`no tenant ${tenantId}`);
    return (await this.repos.credentials.listMediaClients(tenantId)).map((row) => ({
      clientId: row.id,
      permissions: row.permissions.split(','),
      queryQuota: row.query_quota,
      mutationQuota: row.mutation_quota,
      quotaPeriodSeconds: row.quota_period_seconds,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at ?? null,
      revokedAt: row.revoked_at ?? null,
    }));
  }

  /** Media clients are checked against the database on every call: revocation is immediate. */
  async revokeMediaClient(clientId: string, tenantId?: string): Promise<{ clientId: string; revokedAt: string }> {
    const row = await this.repos.credentials.revokeMediaClient(clientId, this.now(), tenantId);
    if (!row) throw new AppError('NOT_FOUND', `no media client ${clientId}`);
    return { clientId, revokedAt: row.revoked_at! };
  }

  async createApiKey(tenantId: string, name: string, permissions: ApiKeyPermission[]): Promise<{ id: string; key: string }> {
    if (!(await this.repos.tenants.find(tenantId))) throw new Error(`no tenant ${tenantId}`);
    const key = `api_${randomBase62(32)}`;
    const id = this.sources.ids();
    await this.repos.credentials.insertApiKey({
      id,
      tenant_id: tenantId,
      name,
      key_hash: hashSecret(key),
      prefix: key.slice(0, 10),
      permissions: permissions.join(','),
      created_at: this.now(),
      revoked_at: null,
    });
    return { id, key };
  }

  async authenticateApiKey(key: string): Promise<ApiKeyPrincipal | null> {
    if (!key.startsWith('api_') || key.length > 200) return null;
    // Keyed by the key itself, so a cached key costs no hash (it is in this process's memory
    // while its requests are anyway); the database is asked again after KEY_CACHE_MS.
    const cached = this.verifiedKeys.get(key);
    if (cached && cached.until > this.sources.clock.now()) return cached.principal;
    const row = await this.repos.credentials.findApiKeyByHash(hashSecret(key));
    if (!row) return null;
    // Written on a cache miss only: `lastUsedAt` is exact to the cache's lifetime, and costs
    // one write per key every few seconds, not one per request.
    void this.repos.credentials.touchApiKey(row.id, this.now()).catch(() => {});
    const principal = { keyId: row.id, tenantId: row.tenant_id, permissions: new Set(row.permissions.split(',')) };
    // Only found keys are cached (unknown ones would let a caller fill memory); bounded.
    if (this.verifiedKeys.size >= KEY_CACHE_MAX) this.verifiedKeys.clear();
    this.verifiedKeys.set(key, { principal, until: this.sources.clock.now() + KEY_CACHE_MS });
    return principal;
  }

  async createMediaClient(
    tenantId: string,
    permissions: MediaPermission[],
    quotas: { query: number | null; mutation: number | null; periodSeconds: number },
  ): Promise<{ clientId: string; clientSecret: string }> {
    if (!(await this.repos.tenants.find(tenantId))) throw new Error(`no tenant ${tenantId}`);
    const clientId = randomBytes(12).toString('hex');
    const clientSecret = randomBase62(32);
    await this.repos.credentials.insertMediaClient({
      id: clientId,
      tenant_id: tenantId,
      secret_hash: hashSecret(clientSecret),
      permissions: permissions.join(','),
      query_quota: quotas.query,
      mutation_quota: quotas.mutation,
      quota_period_seconds: quotas.periodSeconds,
      created_at: this.now(),
    });
    return { clientId, clientSecret };
  }
}
