/**
 * The operations endpoints of a process without the HTTP API (`serve --role worker`):
 * GET /metrics (Prometheus), /healthz (the process lives) and /readyz (database and object
 * store answer), on METRICS_PORT. A plain node:http server: it serves three fixed paths,
 * and main.ts is the one that makes it listen.
 */
import { createServer, type Server } from 'node:http';
import { sql } from 'kysely';
import type { Runtime } from './runtime.js';

export function createOpsServer(runtime: Pick<Runtime, 'db' | 'store' | 'metrics'>): Server {
  return createServer((request, response) => {
    const send = (status: number, body: string, contentType = 'application/json') => {
      response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
      response.end(body);
    };
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET') return send(405, JSON.stringify({ code: 'METHOD_NOT_ALLOWED', statusCode: 405, message: 'Only GET is served here' }));
    if (path === '/healthz') return send(200, JSON.stringify({ status: 'ok' }));
    if (path === '/metrics') {
      runtime.metrics.registry.metrics().then(
        (text) => send(200, text, runtime.metrics.registry.contentType),
        () => send(500, JSON.stringify({ code: 'INTERNAL_ERROR', statusCode: 500, message: 'metrics collection failed' })),
      );
      return;
    }
    if (path === '/readyz') {
      const checks: Record<string, string> = {};
      const probe = (name: string, check: () => Promise<unknown>) =>
        check().then(
          () => void (checks[name] = 'ok'),
          (error: Error) => void (checks[name] = `failing: ${error.message}`),
        );
      Promise.all([probe('database', () => sql`select 1`.execute(runtime.db.kysely)), probe('objectStore', () => runtime.store.check())]).then(() => {
        const ready = Object.values(checks).every((value) => value === 'ok');
        send(ready ? 200 : 503, JSON.stringify({ status: ready ? 'ready' : 'not ready', checks }));
      });
      return;
    }
    send(404, JSON.stringify({ code: 'NOT_FOUND', statusCode: 404, message: `No route GET ${path}` }));
  });
}
