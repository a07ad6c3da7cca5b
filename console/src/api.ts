/**
 * How the console talks to the service: the SDK for the job API (authenticated by the session
 * cookie, never an API key) and `consoleApi` for the console's own routes. A 401 from either
 * means the session ended: the app shows the sign-in over the page, keeping its state.
 */
import { Mediaproof, MediaproofError } from '@mediaproof/sdk';

export const client = new Mediaproof({ baseUrl: window.location.origin, session: true, maxRetries: 1, timeout: 30_000 });

export class ConsoleApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const SIGNED_OUT_EVENT = 'mediaproof:signed-out';

/** Tells the app when a request found the session gone. */
export function noticeSignedOut(error: unknown): void {
  const status = error instanceof ConsoleApiError || error instanceof MediaproofError ? error.statusCode : undefined;
  if (status === 401) window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
}

export async function consoleApi<T>(path: string, init: { method?: 'GET' | 'POST' | 'DELETE'; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = { 'x-mediaproof-console': '1', accept: 'application/json' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`/console/api${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    credentials: 'same-origin',
  });
  if (response.status === 204) return undefined as T;
  const body = (await response.json().catch(() => null)) as { code?: string; message?: string } | null;
  if (!response.ok) throw new ConsoleApiError(response.status, body?.code ?? 'ERROR', body?.message ?? response.statusText);
  return body as T;
}

export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export interface ConsoleUser {
  email: string;
  role: 'member' | 'admin' | 'operator';
  permissions: string[];
  tenant: { id: string; name: string };
}

export interface ApiKey {
  keyId: string;
  name: string;
  prefix: string;
  permissions: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface MediaClient {
  clientId: string;
  permissions: string[];
  queryQuota: number | null;
  mutationQuota: number | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface Credits {
  tenant: { id: string; name: string };
  balance: number;
  reserved: number;
  payAsYouGo: boolean;
  ledger: {
    items: { id: string; kind: string; amount: number; reservedDelta: number; jobId: string | null; taskType: string | null; note: string | null; createdAt: string }[];
    total: number;
    page: number;
    pageSize: number;
  };
  usage: { day: string; taskType: string | null; credits: number; jobs: number }[];
}

export interface Tenant {
  id: string;
  name: string;
  balance: number;
  reserved: number;
  payAsYouGo: boolean;
  createdAt: string;
}

export const formatDate = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}
