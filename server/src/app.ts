/**
 * buildApp: the HTTP application as a Fastify instance that never listens by itself.
 * Routes are thin; everything they do is in the services handed in here.
 */
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import swagger from '@fastify/swagger';
import { RESULT_SCHEMAS } from './schemas/result.schema.js';
import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import staticFiles from '@fastify/static';
import { Ajv } from 'ajv';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { AppError, jobApiErrorBody, mediaApiErrorBody } from './errors.js';
import type { Metrics } from './metrics.js';
import { ErrorBody } from './schemas/job.schema.js';
import { jobRoutes } from './routes/jobs.js';
import { storageRoutes } from './routes/storage.js';
import { consoleRoutes } from './routes/console.js';
import { faceIndexRoutes } from './routes/face-index.js';
import type { FaceIndexService } from './services/face-index.service.js';
import type { ConsoleAuthService } from './services/console-auth.service.js';
import type { AccountService } from './services/account.service.js';
import type { AudioPeaksService } from './services/audio-peaks.service.js';
import type { JobService } from './services/job.service.js';
import type { CredentialService } from './services/credential.service.js';
import type { StorageService } from './services/storage.service.js';
import type { ObjectStore } from './repositories/object-store.js';
import type { Config } from './config.js';

export interface AppDeps {
  config: Pick<Config, 'taskOverrides' | 'logRequests' | 'consoleDir' | 'consoleLoginAttemptsPerMinute' | 'publicUrl' | 'trustProxy'>;
  logger: Logger;
  metrics: Metrics;
  jobs: JobService;
  credentials: CredentialService;
  /** Behind the local store's signed URLs; null when clients upload to S3 directly. */
  storage: StorageService | null;
  store: ObjectStore;
  /** Throws when the database cannot answer (readiness). */
  checkDatabase: () => Promise<void>;
  /** Face indexing (1:N search); absent in apps built without it. */
  faces?: FaceIndexService;
  /** The web console's services; without them the console and its sessions are off. */
  console?: { sessions: ConsoleAuthService; accounts: AccountService; peaks: AudioPeaksService };
  /** Extra route plugins (e.g. the media-record API), registered after the core. */
  plugins?: Array<(app: FastifyInstance) => unknown>;
}

const JSON_BODY_LIMIT = 256 * 1024;

/** Connection-level failures of PostgreSQL (restart, failover) or the object store: transient. */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
function isBackendUnavailable(error: { code?: unknown; message?: unknown }): boolean {
  return (typeof error.code === 'string' && UNAVAILABLE_CODES.has(error.code)) || (typeof error.message === 'string' && /^Connection terminated|terminating connection|connection error and is not queryable/.test(error.message));
}

/**
 * The console's page loads only its own scripts and styles; media and uploads may come from
 * the object store's origin (S3), so images, media and connections allow other origins.
 */
const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: http: https:; media-src 'self' blob: http: https:; connect-src 'self' http: https:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** Deepest JSON accepted anywhere in a request (task parameters have their own, lower limit). */
export const MAX_JSON_DEPTH = 32;

/** Why a decoded request value is refused (a NUL character, or nesting too deep), or null. */
export function hostileValue(value: unknown): string | null {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [item, depth] = stack.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return 'contains a NUL character';
    } else if (item !== null && typeof item === 'object') {
      if (depth >= MAX_JSON_DEPTH) return `is nested more than ${MAX_JSON_DEPTH} levels deep`;
      for (const [key, child] of Object.entries(item)) {
        if (key.includes('\u0000')) return 'contains a NUL character';
        stack.push([child, depth + 1]);
      }
    }
  }
  return null;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    // Errors and job events are always logged; per-request lines only when asked for.
    logController: new LogController({ disableRequestLogging: !deps.config.logRequests }),
    bodyLimit: JSON_BODY_LIMIT,
    // Behind a reverse proxy: the client's address (sign-in rate limits) and https (Secure cookies).
    trustProxy: deps.config.trustProxy,
    // Node's HTTP parser refuses some requests before Fastify sees them (NUL in a header,
    // Transfer-Encoding with Content-Length): they too get the API's error shape.
    clientErrorHandler: (error, socket) => {
      if (!socket.writable) return socket.destroy();
      const status = (error as { code?: string }).code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
      const body = JSON.stringify({ code: 'VALIDATION_ERROR', statusCode: status, message: 'The HTTP request is malformed and was refused' });
      socket.end(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    },
    // Errors raised before routing (undecodable URL, oversized path parameter) answer in the
    // error shape of the API the URL belongs to, like every other error.
    frameworkErrors: (error, request, anyReply) => {
      const reply = anyReply as unknown as FastifyReply;
      const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
      const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path parameter is too long' : 'The URL is malformed';
      const refused = new AppError('VALIDATION_ERROR', message, status);
      return reply.code(status).send(request.url.startsWith('/api/media') ? mediaApiErrorBody(refused) : jobApiErrorBody(refused));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Query strings and paths are text, so their numbers are coerced from strings; JSON bodies
  // are typed already and are taken as sent: `sizeBytes: true` or `[1]` is refused, not read as 1.
  const validators = {
    coercing: new Ajv({ coerceTypes: true, useDefaults: true, removeAdditional: false, allErrors: false, strict: false }),
    exact: new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false }),
  };
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? validators.exact : validators.coercing).compile(schema));

  // Real clients send Content-Type: application/json with an empty body on finalize and
  // DELETE (DESIGN.md §2); Fastify's default parser rejects that, so parse it ourselves.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim();
    if (!text) return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new AppError('VALIDATION_ERROR', 'The request body is not valid JSON'), undefined);
    }
  });

  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof AppError) {
      if (error.statusCode >= 500) request.log.error({ err: error, code: error.code }, 'request failed');
      else request.log.info({ code: error.code, jobId: (request.params as { id?: string })?.id }, error.message);
      if (error.retryAfterSeconds) reply.header('retry-after', String(error.retryAfterSeconds));
      return reply.code(error.statusCode).send(jobApiErrorBody(error));
    }
    if (error.validation) {
      const message = `Invalid request: ${error.message}`;
      return reply.code(400).send({ code: 'VALIDATION_ERROR', statusCode: 400, message });
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send({ code: 'PAYLOAD_TOO_LARGE', statusCode: 413, message: `Request bodies are limited to ${JSON_BODY_LIMIT} bytes` });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ code: 'VALIDATION_ERROR', statusCode: status, message: error.message });
    }
    if (isBackendUnavailable(error)) {
      request.log.warn({ err: error, code: 'SERVICE_UNAVAILABLE' }, 'database or object store unreachable');
      return reply.code(503).header('retry-after', '1').send({ code: 'SERVICE_UNAVAILABLE', statusCode: 503, message: 'The service is temporarily unavailable; retry shortly' });
    }
    request.log.error({ err: error, code: 'INTERNAL_ERROR' }, 'unhandled error');
    return reply.code(500).send({ code: 'INTERNAL_ERROR', statusCode: 500, message: 'Internal server error' });
  });

  app.setNotFoundHandler((request, reply) => {
    // The console is a single-page app: its own paths (/jobs/…, /settings) load its page.
    if (deps.config.consoleDir && request.method === 'GET' && !/^\/(api|console\/api|uploads|downloads)\//.test(request.url) && request.headers.accept?.includes('text/html')) {
      return reply.header('cache-control', 'no-cache').header('content-security-policy', CONSOLE_CSP).sendFile('index.html');
    }
    const message = `No route ${request.method} ${request.url.split('?')[0]!.slice(0, 200)}`;
    const error = new AppError('NOT_FOUND', message);
    return reply.code(404).send(request.url.startsWith('/api/media') ? mediaApiErrorBody(error) : jobApiErrorBody(error));
  });

  // Strings reach PostgreSQL, which refuses NUL in text (SQLite would store it), and nesting
  // deep enough overflows the stack of JSON.stringify: both are refused here, the same in both
  // modes, before any handler or query sees them.
  app.addHook('preValidation', (request, _reply, done) => {
    for (const [part, value] of [['path', request.params], ['query', request.query], ['body', request.body]] as const) {
      const problem = hostileValue(value);
      if (problem) return done(new AppError('VALIDATION_ERROR', `Invalid request: the ${part} ${problem}`));
    }
    done();
  });

  // Ajv coerces an overflowing number ("page=1e999") to Infinity and then skips its bounds
  // checks (they only run on finite numbers): refuse such values before a handler sees them.
  app.addHook('preHandler', (request, _reply, done) => {
    for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
      if (typeof value === 'number' && !Number.isFinite(value)) return done(new AppError('VALIDATION_ERROR', `Invalid request: querystring/${name} must be a finite number`));
    }
    done();
  });

  // Clients log this beside an error's code (SPEC.md §7.4); it matches the server's log line.
  // Callback-style hooks: on every request, an async hook costs a promise and a microtask turn.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });

  app.addHook('onResponse', (request, reply, done) => {
    deps.metrics.httpRequests.inc({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) });
    done();
  });

  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: {
      info: { title: 'mediaproof', version: '1.0.0', description: 'Self-hostable media authenticity detection: job API (/api/v1) and media-record API (/api/media).' },
      // Each task type's result document, by the name its task type gives (GET /task-types: resultSchema).
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key, prefix api_' } }, schemas: RESULT_SCHEMAS },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}` },
  });

  await app.register(cookie);
  await app.register(rateLimit, { global: false });
  await app.register(jobRoutes, { prefix: '/api/v1', jobs: deps.jobs, auth: { credentials: deps.credentials, sessions: deps.console?.sessions }, config: deps.config });
  if (deps.faces) {
    await app.register(faceIndexRoutes, { prefix: '/api/v1/facesim/v1', faces: deps.faces, auth: { credentials: deps.credentials, sessions: deps.console?.sessions } });
  }
  if (deps.console) {
    await app.register(consoleRoutes, {
      prefix: '/console/api',
      ...deps.console,
      credentials: deps.credentials,
      loginAttemptsPerMinute: deps.config.consoleLoginAttemptsPerMinute,
      secureCookies: deps.config.publicUrl.startsWith('https:') ? true : 'auto',
    });
  }
  if (deps.config.consoleDir) {
    await app.register(staticFiles, {
      root: deps.config.consoleDir,
      wildcard: false,
      // The headers below decide caching (the plugin's default would add public, max-age=0).
      cacheControl: false,
      // Vite names built assets by their content hash: they never change under their name.
      setHeaders: (res, path) => {
        if (path.includes('/assets/')) res.setHeader('cache-control', 'public, max-age=31536000, immutable');
        else res.setHeader('cache-control', 'no-cache');
        if (path.endsWith('.html')) res.setHeader('content-security-policy', CONSOLE_CSP);
      },
    });
  }
  if (deps.storage) await app.register(storageRoutes, { storage: deps.storage });
  for (const addRoutes of deps.plugins ?? []) await addRoutes(app as unknown as FastifyInstance);

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const checks: Record<string, string> = {};
    for (const [name, check] of [['database', deps.checkDatabase], ['objectStore', () => deps.store.check()]] as const) {
      checks[name] = await check().then(() => 'ok', (error: Error) => `failing: ${error.message}`);
    }
    const ready = Object.values(checks).every((value) => value === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics()),
  );
  return app as unknown as FastifyInstance;
}
