/**
 * C2PA trust anchors through the job API: a capture claim signed by a certificate of one's own
 * is reported but decides nothing (anyone can make one with openssl); the same file decides
 * `authentic` on a server whose C2PA_TRUST_ANCHORS holds the signer's CA. A wrong anchors file
 * stops the process at start-up with its name, instead of failing every job.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { loadConfig, ConfigError } from '../../src/config.js';
import type { C2paEvidence } from '../../src/detectors/image/c2pa.js';
import type { VerdictResult } from '../../src/detectors/result.js';
import type { Signal } from '../../src/detectors/types.js';
import { c2paSigningSkipReason, makeTestSigner, signWithC2pa, type TestSigner } from '../c2pa-signing.js';
import { client, startServer, submit, type TestServer } from '../helpers.js';
import { texturedRgb } from './helpers.js';

let dir: string;
let skip: string | null;
let signer: TestSigner;
let anchors: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mediaproof-c2pa-trust-'));
  skip = await c2paSigningSkipReason();
  if (skip) return;
  signer = await makeTestSigner();
  anchors = join(dir, 'anchors.pem');
  await writeFile(anchors, new X509Certificate(signer.chain[1]!).toString());
});
after(() => rm(dir, { recursive: true, force: true }));

async function analyse(server: TestServer, bytes: Uint8Array) {
  const { tenantId } = await server.tenant(50);
  const api = client(server.url, await server.apiKey(tenantId));
  return api.waitFor(await submit(api, 1, bytes));
}

/** The c2pa signal; its evidence carries the manifest's validation state and signer trust (provenance.ts). */
const c2paSignal = (result: VerdictResult) =>
  result.analysisDetails.signals.find((s) => s.id === 'c2pa') as Signal & { evidence: Pick<C2paEvidence, 'validationState' | 'signerTrusted'> & { note?: string } };

test('a capture claim decides authentic only when its signer is under the operator\'s trust anchors', async (t) => {
  if (skip) return t.skip(skip);
  const photo = await sharp(texturedRgb(320, 240, 4), { raw: { width: 320, height: 240, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
  const signed = await signWithC2pa(photo, 'image/jpeg', { sourceType: 'digitalCapture', softwareAgent: 'Camera app' }, signer);

  const plain = await startServer();
  try {
    const job = await analyse(plain, signed);
    assert.equal(job.status, 'completed', job.errorMessage);
    const c2pa = c2paSignal(job.result);
    assert.equal(c2pa.evidence.validationState, 'Valid');
    assert.equal(c2pa.evidence.signerTrusted, false);
    assert.equal(c2pa.weight, 0);
    assert.match(c2pa.evidence.note!, /not under a trust anchor/);
    assert.doesNotMatch(job.result.analysisDetails.basis, /digital capture/);
  } finally {
    await plain.close();
  }

  const trusting = await startServer({ C2PA_TRUST_ANCHORS: anchors });
  try {
    const job = await analyse(trusting, signed);
    assert.equal(job.status, 'completed', job.errorMessage);
    const c2pa = c2paSignal(job.result);
    assert.equal(c2pa.evidence.validationState, 'Trusted');
    assert.equal(c2pa.evidence.signerTrusted, true);
    assert.equal(c2pa.weight, 1);
    assert.equal(job.result.verdict, 'authentic');
    assert.equal(job.result.isAiGenerated, false);
    assert.match(job.result.analysisDetails.basis, /trusted anchor declares a digital capture/);
  } finally {
    await trusting.close();
  }
});

test('C2PA_TRUST_ANCHORS that cannot be read or holds no certificate stops start-up with a clear message', async () => {
  const base = { DATA_DIR: dir };
  assert.throws(() => loadConfig({ ...base, C2PA_TRUST_ANCHORS: join(dir, 'missing.pem') }), (error: unknown) => error instanceof ConfigError && /C2PA_TRUST_ANCHORS: cannot read .*missing\.pem/.test(error.message));
  const notPem = join(dir, 'not.pem');
  await writeFile(notPem, 'hello');
  assert.throws(() => loadConfig({ ...base, C2PA_TRUST_ANCHORS: notPem }), /holds no PEM certificate/);
  const broken = join(dir, 'broken.pem');
  await writeFile(broken, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
  assert.throws(() => loadConfig({ ...base, C2PA_TRUST_ANCHORS: broken }), /does not parse/);
});
