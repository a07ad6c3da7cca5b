/**
 * The mediaproof client: configuration, one `request` path with timeouts, retries
 * (network errors, timeouts and 5xx only, exponential backoff with jitter; SPEC.md §7.4),
 * and the resources hanging off it.
 */
import {
  APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, MediaproofError, errorFromResponse,
} from './errors.js';
import { sleep } from './internal.js';
import { Jobs } from './resources/jobs.js';
import { TaskTypes } from './resources/task-types.js';
import { Media } from './resources/media.js';
import { Faces } from './resources/faces.js';
import { analyze, type AnalyzeInput, type AnalyzeOptions } from './analyze.js';
import type { CompletedJob, ResultFor, TaskTypeSlug } from './types.js';

export interface ClientOptions {
  /** API key of the job API (`api_…`). Default: `MEDIAPROOF_API_KEY` where `process.env` exists. */
  apiKey?: string;
  /** Host of the service, e.g. `http://localhost:8080` (a trailing `/api/v1` is accepted). Default: `MEDIAPROOF_URL` or `http://127.0.0.1:8080`. */
  baseUrl?: string;
  /** Retries after the first attempt, for network errors, timeouts and 5xx. Default 2. */
  maxRetries?: number;
  /** Milliseconds per attempt before it counts as a timeout. Default 60 000. */
  timeout?: number;
  /** Media-record API credentials (`x-client-id` / `x-client-secret`). */
  clientId?: string;
  clientSecret?: string;
  /** A fetch implementation; default the global one. */
  fetch?: typeof fetch;
  /** Extra headers sent with every request to the service. */
  defaultHeaders?: Record<string, string>;
  /**
   * In a browser page served by mediaproof (the web console): authenticate the job API with
   * the signed-in console session (an HttpOnly cookie) instead of an API key.
   */
  session?: boolean;
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeout?: number;
  maxRetries?: number;
  headers?: Record<string, string>;
}

export interface RequestParams extends RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path below the host, e.g. `/api/v1/jobs`, or an absolute URL (pre-signed uploads). */
  path: string;
  query?: Record<string, string | number | undefined>;
  /** JSON body (serialised), or raw bytes for uploads. */
  body?: unknown;
  /** Builds a fresh raw body for each attempt (streams can be read only once). */
  rawBody?: () => BodyInit;
  /** Which credentials to send. */
  auth?: 'bearer' | 'client' | 'none';
  /** Job the call is about, copied into errors. */
  jobId?: string;
}

const env = (name: string): string | undefined =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name] || undefined;

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export class Mediaproof {
  readonly apiKey: string | undefined;
  /** The host, without a trailing slash or API prefix. */
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeout: number;
  readonly clientId: string | undefined;
  readonly clientSecret: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly defaultHeaders: Record<string, string>;
  readonly session: boolean;

  readonly jobs: Jobs;
  readonly taskTypes: TaskTypes;
  readonly media: Media;
  readonly faces: Faces;

  constructor(options: ClientOptions = {}) {
    this.apiKey = options.apiKey ?? env('MEDIAPROOF_API_KEY');
    this.baseUrl = (options.baseUrl ?? env('MEDIAPROOF_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    this.maxRetries = options.maxRetries ?? 2;
    this.timeout = options.timeout ?? 60_000;
    this.clientId = options.clientId ?? env('MEDIAPROOF_CLIENT_ID');
    this.clientSecret = options.clientSecret ?? env('MEDIAPROOF_CLIENT_SECRET');
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.defaultHeaders = options.defaultHeaders ?? {};
    this.session = options.session ?? false;
    this.jobs = new Jobs(this);
    this.taskTypes = new TaskTypes(this);
    this.media = new Media(this);
    this.faces = new Faces(this);
  }

  /**
   * Uploads the file(s), runs the job and waits for its result: the common case in one call.
   * Resolves with the completed job; throws JobFailedError when it ends failed or cancelled.
   */
  analyze<T extends TaskTypeSlug | number | (string & {})>(input: AnalyzeInput, options: AnalyzeOptions & { taskType: T }): Promise<CompletedJob<ResultFor<T>>> {
    return analyze(this, input, options);
  }

  /** Sends one request, retrying where SPEC.md §7.4 allows; returns the parsed JSON (or undefined for an empty body). */
  async request<T>(params: RequestParams): Promise<T> {
    const maxRetries = params.maxRetries ?? this.maxRetries;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attempt<T>(params);
      } catch (error) {
        if (attempt >= maxRetries || !isRetryable(error)) throw error;
        await sleep(retryDelay(attempt, error), params.signal);
      }
    }
  }

  private async attempt<T>(params: RequestParams): Promise<T> {
    const url = this.urlFor(params.path, params.query);
    const headers: Record<string, string> = { accept: 'application/json', ...this.defaultHeaders, ...params.headers };
    const auth = params.auth ?? 'bearer';
    if (auth === 'bearer' && this.session) {
      // The cookie goes with same-origin requests; the header proves the page is the console's.
      headers['x-mediaproof-console'] = '1';
    } else if (auth === 'bearer') {
      if (!this.apiKey) throw new MediaproofError('No API key: pass apiKey or set MEDIAPROOF_API_KEY', { code: 'MISSING_API_KEY' });
      headers.authorization = `Bearer ${this.apiKey}`;
    } else if (auth === 'client') {
      if (!this.clientId || !this.clientSecret) throw new MediaproofError('No media client credentials: pass clientId and clientSecret', { code: 'MISSING_CLIENT_CREDENTIALS' });
      headers['x-client-id'] = this.clientId;
      headers['x-client-secret'] = this.clientSecret;
    }
    let body: BodyInit | undefined;
    if (params.rawBody) body = params.rawBody();
    else if (params.body !== undefined) {
      body = JSON.stringify(params.body);
      headers['content-type'] = 'application/json';
    }

    const timeout = params.timeout ?? this.timeout;
    const timer = new AbortController();
    const timeoutId = setTimeout(() => timer.abort(), timeout);
    const signal = params.signal ? AbortSignal.any([params.signal, timer.signal]) : timer.signal;
    let response: Response;
    let text: string;
    try {
      const init: RequestInit & { duplex?: 'half' } = { method: params.method, headers, body, signal, credentials: this.session ? 'same-origin' : 'omit' };
      if (body instanceof ReadableStream) init.duplex = 'half';
      response = await this.fetchImpl(url, init);
      text = await response.text();
    } catch (error) {
      if (params.signal?.aborted) throw new APIUserAbortError(undefined, { jobId: params.jobId });
      if (timer.signal.aborted) throw new APIConnectionTimeoutError(`No answer from ${new URL(url).origin} within ${timeout} ms`, { jobId: params.jobId });
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new APIConnectionError(`Cannot reach ${new URL(url).origin}: ${detail}`, { jobId: params.jobId }, { cause: error });
    } finally {
      clearTimeout(timeoutId);
    }
    const requestId = response.headers.get('x-request-id') ?? response.headers.get('request-id') ?? undefined;
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!response.ok) {
      const error = errorFromResponse(response.status, parsed, { jobId: params.jobId, requestId });
      (error as { retryAfterMs?: number }).retryAfterMs = retryAfterMs(response.headers.get('retry-after'));
      throw error;
    }
    return parsed as T;
  }

  private urlFor(path: string, query?: Record<string, string | number | undefined>): string {
    const url = new URL(/^https?:\/\//.test(path) ? path : `${this.baseUrl}${path}`);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.toString();
  }
}

/** Network errors, timeouts and 5xx; never 4xx (so never INSUFFICIENT_BALANCE, FORBIDDEN, INVALID_API_KEY). */
export function isRetryable(error: unknown): boolean {
  if (error instanceof APIUserAbortError) return false;
  if (error instanceof APIConnectionError) return true;
  return error instanceof APIError && error.statusCode >= 500;
}

/** Exponential backoff from 0.5 s up to 8 s, with up to 25 % jitter; a Retry-After header wins. */
export function retryDelay(attempt: number, error?: unknown): number {
  const hinted = (error as { retryAfterMs?: number } | undefined)?.retryAfterMs;
  if (hinted !== undefined && hinted <= 60_000) return hinted;
  const base = Math.min(500 * 2 ** attempt, 8_000);
  return base * (1 - Math.random() * 0.25);
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

