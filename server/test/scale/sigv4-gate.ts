/**
 * A gate in front of s3rver that checks AWS Signature Version 4 as S3 does, because s3rver
 * itself accepts any V4 signature. Every request must be signed, by the Authorization header
 * or by a pre-signed URL's query; a request whose method, path, query or signed headers
 * (Content-Type, Content-Length, …) differ from what was signed, or whose URL has expired,
 * gets S3's 403 and never reaches the bucket.
 *
 * Written from the specification, not with the SDK's signer, so that it checks the SDK's
 * signing and mediaproof's use of it independently: "Create a signed AWS API request" and
 * "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)", AWS docs.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SigV4Gate {
  endpoint: string;
  /** Requests refused so far, by S3 error code. */
  refused: Map<string, number>;
  close(): Promise<void>;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/** RFC 3986 percent-encoding, as SigV4 requires (encodeURIComponent leaves !'()* alone). */
const uriEncode = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Signed {
  accessKeyId: string;
  scope: { date: string; region: string; service: string };
  amzDate: string;
  signedHeaders: string[];
  signature: string;
  payloadHash: string;
  query: Array<[string, string]>;
}

function parseQuery(rawQuery: string): Array<[string, string]> {
  if (!rawQuery) return [];
  return rawQuery.split('&').map((pair) => {
    const at = pair.indexOf('=');
    const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    return [decodeURIComponent(name), decodeURIComponent(value)];
  });
}

function parseCredential(credential: string): Pick<Signed, 'accessKeyId' | 'scope'> {
  const [accessKeyId, date, region, service, terminator] = credential.split('/');
  if (!accessKeyId || !date || !region || !service || terminator !== 'aws4_request') throw new Refusal(400, 'AuthorizationQueryParametersError', `malformed credential ${credential}`);
  return { accessKeyId, scope: { date, region, service } };
}

/** What the request says was signed, from its Authorization header or its query. */
function readSignature(req: IncomingMessage, query: Array<[string, string]>): Signed {
  const authorization = req.headers.authorization;
  if (authorization) {
    const match = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/.exec(authorization);
    if (!match) throw new Refusal(400, 'InvalidArgument', 'unsupported Authorization header');
    const payloadHash = req.headers['x-amz-content-sha256'];
    const amzDate = req.headers['x-amz-date'];
    if (typeof payloadHash !== 'string' || typeof amzDate !== 'string') throw new Refusal(400, 'InvalidRequest', 'x-amz-content-sha256 and x-amz-date are required');
    return { ...parseCredential(match[1]!), amzDate, signedHeaders: match[2]!.split(';'), signature: match[3]!, payloadHash, query };
  }
  const get = (name: string) => query.find(([key]) => key === name)?.[1];
  if (get('X-Amz-Algorithm') === undefined) throw new Refusal(403, 'AccessDenied', 'Access Denied (the request is not signed)');
  if (get('X-Amz-Algorithm') !== ALGORITHM) throw new Refusal(400, 'AuthorizationQueryParametersError', 'unsupported X-Amz-Algorithm');
  const [credential, amzDate, expires, signedHeaders, signature] = ['X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Signature'].map(get);
  if (!credential || !amzDate || !expires || !signedHeaders || !signature) throw new Refusal(400, 'AuthorizationQueryParametersError', 'missing X-Amz-* query parameters');
  const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (!Number.isFinite(signedAt)) throw new Refusal(400, 'AuthorizationQueryParametersError', `malformed X-Amz-Date ${amzDate}`);
  if (Date.now() > signedAt + Number(expires) * 1000) throw new Refusal(403, 'AccessDenied', 'Request has expired');
  return {
    ...parseCredential(credential),
    amzDate,
    signedHeaders: signedHeaders.split(';'),
    signature,
    payloadHash: get('X-Amz-Content-Sha256') ?? UNSIGNED_PAYLOAD,
    query: query.filter(([key]) => key !== 'X-Amz-Signature'),
  };
}

function canonicalRequest(req: IncomingMessage, path: string, signed: Signed): string {
  // S3 does not normalise the path: each segment is encoded once, as sent.
  const uri = path.split('/').map((segment) => uriEncode(decodeURIComponent(segment))).join('/');
  const query = signed.query
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  if (!signed.signedHeaders.includes('host')) throw new Refusal(400, 'InvalidRequest', 'the host header must be signed');
  const headers = [...signed.signedHeaders]
    .sort()
    .map((name) => {
      const value = req.headers[name];
      if (value === undefined) throw new Refusal(403, 'SignatureDoesNotMatch', `signed header ${name} is missing from the request`);
      return `${name}:${(Array.isArray(value) ? value.join(',') : value).trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  return [req.method, uri, query, headers, signed.signedHeaders.join(';'), signed.payloadHash].join('\n');
}

function verify(req: IncomingMessage, body: Buffer, secrets: Map<string, string>, region: string): void {
  const url = new URL(req.url ?? '/', 'http://gate');
  const rawQuery = (req.url ?? '').includes('?') ? req.url!.slice(req.url!.indexOf('?') + 1) : '';
  const signed = readSignature(req, parseQuery(rawQuery));
  const secret = secrets.get(signed.accessKeyId);
  if (secret === undefined) throw new Refusal(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  if (signed.scope.region !== region || signed.scope.service !== 's3' || !signed.amzDate.startsWith(signed.scope.date)) {
    throw new Refusal(403, 'SignatureDoesNotMatch', `credential scope ${signed.scope.date}/${signed.scope.region}/${signed.scope.service} does not match`);
  }
  if (/^[0-9a-f]{64}$/.test(signed.payloadHash) && sha256Hex(body) !== signed.payloadHash) {
    throw new Refusal(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.");
  }
  const stringToSign = [ALGORITHM, signed.amzDate, `${signed.scope.date}/${region}/s3/aws4_request`, sha256Hex(canonicalRequest(req, url.pathname, signed))].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, signed.scope.date), region), 's3'), 'aws4_request');
  const expected = Buffer.from(hmac(signingKey, stringToSign).toString('hex'));
  const given = Buffer.from(signed.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new Refusal(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
  }
}

function refuse(res: ServerResponse, refusal: Refusal): void {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${refusal.message}</Message></Error>`;
  res.writeHead(refusal.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml), connection: 'close' });
  res.end(xml);
}

/** Starts the gate on a free loopback port, forwarding what it accepts to `upstream`. */
export async function startSigV4Gate(upstream: string, credentials: { accessKeyId: string; secretAccessKey: string }, region: string): Promise<SigV4Gate> {
  const secrets = new Map([[credentials.accessKeyId, credentials.secretAccessKey]]);
  const target = new URL(upstream);
  const refused = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      try {
        verify(req, body, secrets, region);
      } catch (error) {
        // A request too malformed to check (a bad percent-escape, say) is refused like a forged one.
        const refusal = error instanceof Refusal ? error : new Refusal(400, 'InvalidRequest', String(error));
        refused.set(refusal.code, (refused.get(refusal.code) ?? 0) + 1);
        refuse(res, refusal);
        return;
      }
      const forwarded = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forwarded.on('error', (error) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
