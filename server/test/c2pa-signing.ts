/**
 * Signs test media with real C2PA manifests, so provenance tests read files built here rather
 * than downloaded fixtures. A throwaway CA and an ES256 signing certificate are made with the
 * system's `openssl`; the manifest is built and embedded by c2pa-rs (the same
 * @contentauth/c2pa-wasm the service reads with), and the claim signature is a COSE_Sign1
 * (RFC 9052 §4.2; C2PA Technical Specification 2.1 §14.5) written here, because the wasm
 * builder leaves the whole COSE structure to its signer callback.
 */
import { execFile } from 'node:child_process';
import { createPrivateKey, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { WasmBuilder } from '@contentauth/c2pa-wasm';
import { initC2pa } from '../src/detectors/image/c2pa.js';

const run = promisify(execFile);

/** Why C2PA signing cannot run here, or null when it can (it needs the `openssl` command). */
export async function c2paSigningSkipReason(): Promise<string | null> {
  return run('openssl', ['version']).then(
    () => null,
    () => 'the openssl command is not installed: C2PA-signed fixtures cannot be made',
  );
}

export interface TestSigner {
  /** The signing certificate and its CA, DER. */
  chain: Buffer[];
  key: KeyObject;
}

/** A CA and an end-entity certificate with the C2PA signing profile (digitalSignature, emailProtection). */
export async function makeTestSigner(): Promise<TestSigner> {
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-c2pa-'));
  try {
    const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
    await writeFile(join(dir, 'leaf.ext'), 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=emailProtection\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n');
    await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca.key');
    await openssl('req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=mediaproof test CA/O=mediaproof tests', '-days', '7', '-sha256', '-out', 'ca.pem',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
    await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'leaf.key');
    await openssl('req', '-new', '-key', 'leaf.key', '-subj', '/CN=mediaproof test signer/O=mediaproof tests', '-out', 'leaf.csr');
    await openssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '7', '-sha256', '-extfile', 'leaf.ext', '-out', 'leaf.pem');
    const der = async (file: string) => new X509Certificate(await readFile(join(dir, file))).raw;
    return { chain: [await der('leaf.pem'), await der('ca.pem')], key: createPrivateKey(await readFile(join(dir, 'leaf.key'))) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// The few CBOR items (RFC 8949) a COSE_Sign1 needs.
type Cbor = number | string | Uint8Array | null | Cbor[] | Map<Cbor, Cbor> | { tag: number; value: Cbor };

function cborHead(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
  const head = Buffer.alloc(5);
  head[0] = (major << 5) | 26;
  head.writeUInt32BE(length, 1);
  return head;
}

function cbor(value: Cbor): Buffer {
  if (value === null) return Buffer.from([0xf6]);
  if (typeof value === 'number') return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value);
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([cborHead(3, text.length), text]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([cborHead(4, value.length), ...value.map(cbor)]);
  if (value instanceof Map) return Buffer.concat([cborHead(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
  return Buffer.concat([cborHead(6, value.tag), cbor(value.value)]);
}

/** Room for the signature box: two certificates, the signature and padding. */
const RESERVE_BYTES = 12_000;
const ES256 = -7;
const X5CHAIN = 33;

/** COSE_Sign1 over the claim with a detached payload, padded to exactly the reserved size as c2pa-rs requires. */
function coseSign1(claim: Uint8Array, signer: TestSigner): Uint8Array {
  const protectedHeader = cbor(new Map<Cbor, Cbor>([[1, ES256], [X5CHAIN, signer.chain]]));
  const signature = sign('sha256', cbor(['Signature1', protectedHeader, new Uint8Array(0), claim]), { key: signer.key, dsaEncoding: 'ieee-p1363' });
  const build = (pad: number) => cbor({ tag: 18, value: [protectedHeader, new Map<Cbor, Cbor>([['pad', new Uint8Array(pad)]]), null, signature] });
  let pad = RESERVE_BYTES - build(0).length;
  while (pad > 0 && build(pad).length > RESERVE_BYTES) pad--;
  return build(pad);
}

/** The wasm builder reads its source through the browser's FileReaderSync: bytes in memory stand in for a Blob. */
class BytesBlob {
  constructor(readonly bytes: Uint8Array) {}
  get size() {
    return this.bytes.length;
  }
  slice(start = 0, end = this.bytes.length) {
    return new BytesBlob(this.bytes.subarray(start, end));
  }
}
const globals = globalThis as { FileReaderSync?: unknown };
globals.FileReaderSync ??= class {
  readAsArrayBuffer(blob: BytesBlob) {
    return blob.bytes.slice().buffer;
  }
};

export interface ManifestOptions {
  /** IPTC digital source type of the `c2pa.created` action, e.g. `trainedAlgorithmicMedia`, `digitalCapture`. */
  sourceType: string;
  softwareAgent: string;
}

/** The file with a C2PA manifest embedded and signed (JUMBF in the container: MP4 `uuid` box, JPEG APP11). */
export async function signWithC2pa(bytes: Uint8Array, mime: 'video/mp4' | 'image/jpeg', options: ManifestOptions, signer: TestSigner): Promise<Buffer> {
  initC2pa();
  const manifest = {
    claim_generator_info: [{ name: 'mediaproof tests', version: '1.0' }],
    title: mime === 'video/mp4' ? 'clip.mp4' : 'photo.jpg',
    assertions: [
      {
        label: 'c2pa.actions.v2',
        data: { actions: [{ action: 'c2pa.created', digitalSourceType: `http://cv.iptc.org/newscodes/digitalsourcetype/${options.sourceType}`, softwareAgent: { name: options.softwareAgent } }] },
      },
    ],
  };
  const builder = WasmBuilder.fromJson(JSON.stringify(manifest));
  try {
    const signed = await builder.sign(
      { sign: async (claim: Uint8Array) => coseSign1(claim, signer) as Uint8Array<ArrayBuffer>, reserveSize: RESERVE_BYTES, alg: 'es256' },
      [],
      mime,
      new BytesBlob(bytes) as unknown as Blob,
    );
    return Buffer.from(signed);
  } finally {
    builder.free();
  }
}
