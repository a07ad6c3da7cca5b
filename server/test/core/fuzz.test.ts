/**
 * Bad input on every route: malformed JSON, wrong types, huge numbers, unicode and
 * path-traversal names, odd content types, oversized bodies. Whatever arrives, the answer
 * is never a 5xx, every error carries its API's error shape ({code, statusCode, message} on
 * the job API, {code, type, message} on the media-record API), and the server stays up.
 * The routes are read from the server's own OpenAPI document, so new routes are covered.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { client, declare, jpeg, startServer, submit, type TestServer } from '../helpers.js';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../scale/harness.js';

interface Answer {
  status: number;
  text: string;
}

/** A raw HTTP request: the path is sent as written (no URL normalisation of `..`). */
function raw(base: string, method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    // The server may answer (413) and close before it has read an oversized body.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? resolve({ status: 413, text: '' }) : reject(error)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** A small deterministic generator, so a failure reproduces. */
function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

const NASTY_STRINGS = [
  '', ' ', '../../etc/passwd', '..\\..\\windows\\system32', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', '/absolute/path', 'a/../../b', '....//....//',
  'nul\u0000byte', '\u202Eevil\u202Cgpj.exe', '😀🎉👩‍👩‍👧‍👦', '\uD800', '\uFFFF', 'x'.repeat(10_000), 'ﬁle.jpg', 'Ω≈ç√∫', '<script>alert(1)</script>',
  "' OR 1=1 --", '${jndi:ldap://x}', '\r\nX-Injected: 1', 'CON', '.', '..', '~', '%00', '%', '%%', '\t\n',
];
const NASTY_NUMBERS: unknown[] = [-1, 0, 1.5, 1e308, -1e308, 2 ** 53, 2 ** 64, Number.MAX_SAFE_INTEGER + 2, '1e999', 'NaN', 'Infinity', '-0', '0x10', '1'.repeat(400), true, null, [], {}];
const NASTY_VALUES: unknown[] = [...NASTY_NUMBERS, ...NASTY_STRINGS.slice(0, 12), { $ne: null }, [[[[[]]]]], { __proto__: { polluted: true } }, { constructor: { prototype: { polluted: true } } }];

function bodies(random: () => number, image: Buffer): Array<string | Buffer> {
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const valid = declare(image);
  const out: Array<string | Buffer> = [
    '{', '[', ']', '}', 'null', 'true', '"x"', '1e999', '-', '{"a":}', '{"inputs": [}', "{'single': 'quotes'}", '{"a":1,}', '\u0000', '\uFEFF{}',
    '['.repeat(5000) + ']'.repeat(5000), '{"a":'.repeat(3000) + '1' + '}'.repeat(3000),
    JSON.stringify({ inputs: 'not-an-array' }), JSON.stringify({ inputs: [] }), JSON.stringify({ inputs: Array(100).fill(valid) }), JSON.stringify({ inputs: [null] }),
    JSON.stringify({ inputs: [valid], taskTypeId: { $gt: 0 } }), JSON.stringify({ inputs: [valid], parameters: 'x' }),
    JSON.stringify({ inputs: [valid], parameters: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i])) }),
    JSON.stringify({ __proto__: { isAdmin: true }, inputs: [valid] }),
    JSON.stringify({ name: 'x', contentType: 'image/jpeg', size: -5, modelType: 'DF-1' }), JSON.stringify({ name: '../../x', contentType: 'image/jpeg', size: 1e308, modelType: 'XX-9' }),
    Buffer.alloc(300 * 1024, 'a'), JSON.stringify({ inputs: [valid], pad: 'x'.repeat(2 * 1024 * 1024) }),
    Buffer.from([0xff, 0xfe, 0xfd, 0x00, 0x80]),
  ];
  for (let i = 0; i < 40; i++) {
    const field = pick(['contentType', 'fileName', 'sizeBytes', 'slotName'] as const);
    const input: Record<string, unknown> = { ...valid, [field]: pick(NASTY_VALUES) };
    if (random() < 0.3) input.fileName = pick(NASTY_STRINGS);
    if (random() < 0.2) delete input[pick(['contentType', 'fileName', 'sizeBytes', 'slotName'])];
    const body: Record<string, unknown> = { inputs: [input] };
    if (random() < 0.5) body.taskTypeId = pick([1, '1', ...NASTY_VALUES]);
    if (random() < 0.3) Object.assign(body, { name: pick(NASTY_STRINGS), contentType: pick(NASTY_VALUES), size: pick(NASTY_NUMBERS), modelType: pick(NASTY_VALUES) });
    out.push(JSON.stringify(body));
  }
  return out;
}

const PATH_VALUES = [
  'doesnotexist', '..%2f..%2fetc%2fpasswd', '%2e%2e', '..', '%00', '%ff%fe', '%E2%80%AE', encodeURIComponent('😀'), 'x'.repeat(5000), '1e999', '-1', '%20', '%25', 'a%2fb', "%27%20OR%201%3D1",
];
const QUERIES = [
  '', '?page=-1', '?page=0', '?page=1e999', '?page=abc', '?limit=100000', '?limit=-5', '?limit=1.5', '?pageSize=x', '?status=bogus', '?status=', '?taskTypeId=1&taskTypeId=2',
  '?taskTypeId=%00', '?taskTypeId=' + '9'.repeat(400), '?page[$gt]=1', '?expires=1e999&sig=' + 'a'.repeat(200), '?expires=-1&sig=%00', '?ct=..%2f&sig=x&expires=1', '?offset=-1&limit=abc', '?%=%',
];
const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-16', 'text/plain', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'image/jpeg', '*/*', 'application/json\u0001'.replace('\u0001', '')];

// PostgreSQL refuses what SQLite stores (NUL in text, for one): both modes are walked.
for (const mode of ['SQLite', 'PostgreSQL'] as const) describe(`fuzz (${mode}): every route answers bad input with a 4xx in its error shape, never a 5xx`, { skip: mode === 'PostgreSQL' ? await postgresSkipReason() : false }, () => {
  let server: TestServer;
  let database: TestDatabase | undefined;
  let headersFor: (path: string) => Record<string, string>[];
  let routes: Array<{ method: string; path: string }>;
  let image: Buffer;
  let jobId: string;

  before(async () => {
    database = mode === 'PostgreSQL' ? await createTestDatabase() : undefined;
    server = await startServer(database ? { DATABASE_URL: database.url } : {});
    const { tenantId } = await server.tenant(10_000);
    const key = await server.apiKey(tenantId);
    const media = await server.runtime.credentials.createMediaClient(tenantId, ['media:read', 'media:write', 'media:delete'], { query: null, mutation: null, periodSeconds: 86_400 });
    headersFor = (path): Record<string, string>[] =>
      path.startsWith('/api/media')
        ? [{ 'x-client-id': media.clientId, 'x-client-secret': media.clientSecret }, {}, { 'x-client-id': media.clientId, 'x-client-secret': 's\u00e9cret\u00ff' }]
        : [{ authorization: `Bearer ${key}` }, {}, { authorization: 'Bearer api_\u00e9' }, { authorization: 'Basic Og==' }];
    image = await jpeg(32, 24);
    jobId = await submit(client(server.url, key), 1, image, 'image/jpeg', false);

    const spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(spec.paths).flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((method) => ['get', 'post', 'put', 'delete', 'patch'].includes(method))
        .map((method) => ({ method: method.toUpperCase(), path })),
    );
    routes.push({ method: 'GET', path: '/downloads/{key}' });
    assert.ok(routes.length >= 9, `routes found: ${routes.map((r) => `${r.method} ${r.path}`).join(', ')}`);
  });
  after(async () => {
    await server.close();
    await database?.drop();
  });

  test('malformed and hostile requests to every route', { timeout: 120_000 }, async () => {
    const random = rng(20261122);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const fuzzBodies = bodies(random, image);
    const failures: string[] = [];
    let sent = 0;
    const statuses = new Map<number, number>();

    const check = async (method: string, path: string, headers: Record<string, string>, body?: string | Buffer) => {
      const answer = await raw(server.url, method, path, headers, body);
      sent++;
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const where = `${method} ${path.slice(0, 100)} [${Object.keys(headers).join(',')}] body=${JSON.stringify(String(body ?? '').slice(0, 80))}`;
      if (answer.status >= 500) return void failures.push(`${answer.status} for ${where}: ${answer.text.slice(0, 200)}`);
      if (answer.status < 400) return;
      if (answer.status === 413 && !answer.text) return; // closed before the oversized body was read
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(answer.text) as Record<string, unknown>;
      } catch {
        return void failures.push(`non-JSON ${answer.status} for ${where}: ${answer.text.slice(0, 120)}`);
      }
      const expected = path.startsWith('/api/media') ? ['code', 'message', 'type'] : ['code', 'message', 'statusCode'];
      if (JSON.stringify(Object.keys(parsed).sort()) !== JSON.stringify(expected)) failures.push(`shape ${JSON.stringify(parsed).slice(0, 200)} for ${where}`);
      else if (!path.startsWith('/api/media') && parsed.statusCode !== answer.status) failures.push(`statusCode ${String(parsed.statusCode)} ≠ ${answer.status} for ${where}`);
    };

    for (const route of routes) {
      const fill = (value: string) => route.path.replace(/\{[^}]+\}/g, value).replace('/downloads/{key}', `/downloads/${value}`);
      const hasBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method);
      // Path parameters: hostile ids (plus a real job id for the routes that take one).
      for (const value of [...PATH_VALUES, jobId]) {
        for (const headers of headersFor(route.path)) await check(route.method, fill(value), headers);
      }
      // Literal traversal in the raw path, which fetch would normalise away.
      await check(route.method, fill('..') + '/../../etc/passwd', headersFor(route.path)[0]!);
      for (const query of QUERIES) await check(route.method, fill(jobId) + query, headersFor(route.path)[0]!);
      if (!hasBody) continue;
      for (const body of fuzzBodies) {
        const contentType = random() < 0.8 ? 'application/json' : pick(CONTENT_TYPES);
        await check(route.method, fill(pick([jobId, 'doesnotexist'])) + (random() < 0.5 ? '?taskTypeId=1' : ''), { ...headersFor(route.path)[0]!, 'content-type': contentType }, body);
      }
      // Auth is checked before the body is trusted.
      await check(route.method, fill(jobId), { 'content-type': 'application/json' }, fuzzBodies[0]);
    }

    // A method no route has, and a path no route has.
    await check('PATCH', '/api/v1/jobs', headersFor('/api/v1')[0]!, '{}');
    await check('GET', '/api/v1/' + 'x/'.repeat(2000), {});

    console.log(`# fuzz (${mode}): ${sent} requests to ${routes.length} routes; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`);
    assert.ok(sent > 1000);
  });

  test('the server is still up and serves a whole job afterwards', async () => {
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    const { tenantId } = await server.tenant(100);
    const api = client(server.url, await server.apiKey(tenantId));
    const id = await submit(api, 1, image);
    assert.equal((await api.waitFor(id)).status, 'completed');
  });
});
