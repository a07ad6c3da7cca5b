/** SDK tests run against a real mediaproof server started by the server's own harness. */
export { startServer, jpeg, freePort, sleep, type TestServer } from '../../server/test/helpers.js';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FlakyProxy {
  url: string;
  /** Requests seen, as "METHOD /path". */
  seen: string[];
  /** The next `n` requests (matching `match`) get `behaviour`; then requests are proxied. */
  failNext(n: number, behaviour: 'status-503' | 'reset' | 'hang', match?: (method: string, path: string) => boolean): void;
  close(): Promise<void>;
}

/** A loopback HTTP proxy to `target` that can fail transiently: 503s, dropped connections or silence. */
export async function flakyProxy(target: string): Promise<FlakyProxy> {
  const upstream = new URL(target);
  let failures = 0;
  let behaviour: 'status-503' | 'reset' | 'hang' = 'status-503';
  let matcher: (method: string, path: string) => boolean = () => true;
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    seen.push(`${req.method} ${path.split('?')[0]}`);
    if (failures > 0 && matcher(req.method ?? 'GET', path)) {
      failures--;
      if (behaviour === 'reset') return req.socket.destroy();
      if (behaviour === 'hang') return; // never answers; the client's timeout must fire
      res.writeHead(503, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ code: 'SERVICE_UNAVAILABLE', statusCode: 503, message: 'try again' }));
    }
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    failNext(n, kind, match = () => true) {
      failures = n;
      behaviour = kind;
      matcher = match;
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
