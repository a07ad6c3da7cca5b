/**
 * Test harness: a real mediaproof process (in this process, or spawned) on a free loopback
 * port with its own temporary data directory, driven over real HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { loadConfig } from '../src/config.js';
import { createRuntime, type Runtime, type Role } from '../src/runtime.js';
import { grantCredits } from '../src/services/credit.service.js';
import { taskTypeById } from '../src/detectors/catalogue.js';
import type { ApiKeyPermission } from '../src/services/credential.service.js';
import { pino } from 'pino';

export const SERVER_DIR = resolve(import.meta.dirname, '..');

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

export interface TestServer {
  url: string;
  runtime: Runtime;
  dataDir: string;
  env: Record<string, string>;
  tenant(credits?: number, options?: { payAsYouGo?: boolean }): Promise<{ tenantId: string }>;
  apiKey(tenantId: string, permissions?: ApiKeyPermission[]): Promise<string>;
  close(): Promise<void>;
}

export async function startServer(env: Record<string, string> = {}, role: Role = 'all'): Promise<TestServer> {
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'mediaproof-test-'));
  const port = await freePort();
  const fullEnv = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', POLL_INTERVAL_MS: '100', WORKER_CONCURRENCY: '1', LOG_LEVEL: 'silent', ...env };
  const config = loadConfig(fullEnv);
  const runtime = await createRuntime(config, role, pino({ level: 'silent' }));
  await runtime.app?.listen({ host: '127.0.0.1', port });
  return {
    url: `http://127.0.0.1:${port}`,
    runtime,
    dataDir,
    env: fullEnv,
    async tenant(credits = 100, options = {}) {
      const tenant = await runtime.transaction(async (repos) => {
        const row = await repos.tenants.insert('test', Boolean(options.payAsYouGo));
        if (credits) await grantCredits(repos, row.id, credits);
        return row;
      });
      return { tenantId: tenant.id };
    },
    async apiKey(tenantId, permissions = ['jobs:read', 'jobs:write', 'jobs:delete']) {
      return (await runtime.credentials.createApiKey(tenantId, 'test', permissions)).key;
    },
    async close() {
      await runtime.close();
      if (!env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A client of the job API that returns status and parsed body. */
export function client(baseUrl: string, apiKey?: string) {
  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: {
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, body: (text ? JSON.parse(text) : null) as any, headers: response.headers };
  }
  return {
    call,
    createJob: (taskTypeId: number | string, inputs: unknown[], extra: Record<string, unknown> = {}) =>
      call('POST', `/jobs?taskTypeId=${taskTypeId}`, { inputs, ...extra }),
    finalize: (jobId: string) => call('POST', `/jobs/${jobId}/finalize`),
    get: (jobId: string) => call('GET', `/jobs/${jobId}`),
    cancel: (jobId: string) => call('POST', `/jobs/${jobId}/cancel`),
    remove: (jobId: string) => call('DELETE', `/jobs/${jobId}`),
    list: (query = '') => call('GET', `/jobs${query}`),
    /** Polls until the job is in a terminal state (or `until` matches). */
    async waitFor(jobId: string, until = (status: string) => ['completed', 'failed', 'cancelled'].includes(status), timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const job = await call('GET', `/jobs/${jobId}`);
        if (until(job.body.status)) return job.body;
        if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.body.status} after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

export async function put(url: string, data: Uint8Array, contentType: string) {
  const response = await fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body: new Uint8Array(data) });
  const text = await response.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: response.status, body: (text ? JSON.parse(text) : null) as any };
}

/** A small real JPEG (gradient, so it is not trivially uniform). */
export async function jpeg(width = 96, height = 64): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = (x * 255) / width;
      raw[i + 1] = (y * 255) / height;
      raw[i + 2] = ((x + y) * 7) % 256;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
}

export const declare = (data: Uint8Array, contentType = 'image/jpeg', slotName = 'original', fileName = 'photo.jpg') => ({
  contentType,
  fileName,
  sizeBytes: data.byteLength,
  slotName,
});

/** Creates, uploads and (optionally) finalizes one job of one file. */
export async function submit(api: ReturnType<typeof client>, taskTypeId: number, data: Uint8Array, contentType = 'image/jpeg', finalize = true) {
  const created = await api.createJob(taskTypeId, [declare(data, contentType)]);
  if (created.status !== 200) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  const uploaded = await put(created.body.inputs[0].uploadUrl, data, contentType);
  if (uploaded.status !== 200) throw new Error(`upload failed: ${JSON.stringify(uploaded.body)}`);
  if (finalize) {
    const finalized = await api.finalize(created.body.jobId);
    if (finalized.status !== 200) throw new Error(`finalize failed: ${JSON.stringify(finalized.body)}`);
  }
  return created.body.jobId as string;
}

/** Spawns `mediaproof <args>` as its own process (tsx), for multi-process and CLI tests. */
export function spawnMediaproof(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: SERVER_DIR,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export async function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: SERVER_DIR, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once a spawned process prints a line matching `pattern` on stdout or stderr. */
export function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${seen}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
  });
}

/**
 * Runs `work` while the in-process catalogue says task type `id` has no detector (every task
 * type has one in this build; the refusal of one that does not is still tested).
 */
export async function withoutDetector<T>(id: number, work: () => Promise<T>): Promise<T> {
  const taskType = taskTypeById(id)!;
  const detector = taskType.detector;
  taskType.detector = null;
  try {
    return await work();
  } finally {
    taskType.detector = detector;
  }
}

/**
 * Reads until `done` holds or `timeoutMs` passes, then returns the last read. For what the
 * service writes after answering (a key's last use is recorded without holding up the request).
 */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(50);
  }
}
