/**
 * Opening a PDF encrypted by the standard security handler with an empty user password: ISO
 * 32000-2:2020 §7.6.4 (Algorithms 1, 2, 2.A, 2.B, 4, 5, 6; RC4 §7.6.3, AES-CBC with the IV first
 * §7.6.3.2). Bank statements, payslips and government forms are often "secured" so: they open
 * without a password and the owner password only restricts printing or copying, so every viewer
 * shows them, and so can the forensics. A document that needs a password to open, or another
 * security handler (certificates), is reported as not examined: there is no key to read it with.
 */
import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';
import { isDict, isName, isString, type PdfDict, type PdfValue } from './pdf-syntax.js';

/** Algorithm 2's padding string (§7.6.4.3.2, step a): the empty password padded to 32 bytes. */
export const PADDING = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');

type Cipher = 'rc4' | 'aes-128' | 'aes-256' | 'identity';

export interface Decryption {
  /** How the document was encrypted, e.g. "AES-256, standard security handler revision 6". */
  method: string;
  /** The decrypted bytes of a string or stream of object `num` `gen` (§7.6.2: each object its own key below AES-256). */
  string(bytes: Uint8Array, num: number, gen: number): Uint8Array;
  stream(bytes: Uint8Array, num: number, gen: number): Uint8Array;
  /** Whether streams of type Metadata are left in clear (EncryptMetadata false). */
  metadataInClear: boolean;
}

/** The decryption of a document whose Encrypt dictionary is `encrypt`, or why it cannot be opened without a password. */
export function openEncryption(encrypt: PdfDict, firstId: Uint8Array, resolve: (value: PdfValue | undefined) => PdfValue | undefined): Decryption | { reason: string } {
  const entry = (key: string) => resolve(encrypt.entries.get(key));
  const filter = entry('Filter');
  if (!isName(filter, 'Standard')) {
    return { reason: `it is encrypted by the ${isName(filter) ? filter.name : 'unnamed'} security handler (certificate-based), which needs the recipient's key` };
  }
  const version = numberOf(entry('V')) ?? 0, revision = numberOf(entry('R')) ?? 0;
  const owner = bytesOf(entry('O')), user = bytesOf(entry('U'));
  const permissions = numberOf(entry('P')) ?? 0;
  const metadataInClear = entry('EncryptMetadata') === false;
  if (!owner || !user) return { reason: 'its Encrypt dictionary lacks the O or U entry' };
  const streamCipher = cipherOf(version, entry('CF'), entry('StmF'));
  const stringCipher = cipherOf(version, entry('CF'), entry('StrF'));
  if (!streamCipher || !stringCipher) return { reason: `it uses an encryption this reader does not implement (V ${version}, R ${revision})` };
  const method = `${describe(streamCipher === 'identity' ? stringCipher : streamCipher)}, standard security handler revision ${revision}`;

  let fileKey: Buffer | null;
  if (revision === 5 || revision === 6) {
    const userEncrypted = bytesOf(entry('UE'));
    fileKey = userEncrypted && user.length >= 48 ? aes256Key(revision, user, userEncrypted) : null;
  } else if (revision >= 2 && revision <= 4) {
    const length = revision === 2 ? 5 : Math.max(5, Math.min(16, Math.floor((numberOf(entry('Length')) ?? 40) / 8)));
    fileKey = rc4Key(revision, length, owner, user, permissions, firstId, metadataInClear);
  } else {
    return { reason: `it uses security handler revision ${revision}, which this reader does not implement` };
  }
  if (!fileKey) return { reason: 'it needs a password to open (the empty user password does not open it)' };

  const key = fileKey;
  const apply = (cipher: Cipher, bytes: Uint8Array, num: number, gen: number): Uint8Array => {
    if (cipher === 'identity') return bytes;
    if (cipher === 'aes-256') return aesCbcDecrypt(key, bytes);
    const objectKey = objectKeyOf(key, num, gen, cipher === 'aes-128');
    return cipher === 'rc4' ? rc4(objectKey, bytes) : aesCbcDecrypt(objectKey, bytes);
  };
  return {
    method,
    metadataInClear,
    string: (bytes, num, gen) => apply(stringCipher, bytes, num, gen),
    stream: (bytes, num, gen) => apply(streamCipher, bytes, num, gen),
  };
}

function numberOf(value: PdfValue | undefined): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function bytesOf(value: PdfValue | undefined): Buffer | undefined {
  return isString(value) ? Buffer.from(value.bytes) : undefined;
}

/** The cipher of a crypt filter named `name` (V 4 and 5, §7.6.6), or the one cipher of V 1 and 2. */
function cipherOf(version: number, filters: PdfValue | undefined, name: PdfValue | undefined): Cipher | null {
  if (version === 1 || version === 2) return 'rc4';
  if (version !== 4 && version !== 5) return null;
  if (!isName(name) || name.name === 'Identity') return 'identity';
  const filter = isDict(filters) ? filters.entries.get(name.name) : undefined;
  const method = isDict(filter) ? filter.entries.get('CFM') : undefined;
  if (isName(method, 'V2')) return 'rc4';
  if (isName(method, 'AESV2')) return 'aes-128';
  if (isName(method, 'AESV3')) return 'aes-256';
  if (isName(method, 'None')) return 'identity';
  return null;
}

const describe = (cipher: Cipher) => ({ rc4: 'RC4', 'aes-128': 'AES-128', 'aes-256': 'AES-256', identity: 'no cipher' })[cipher];

/** Algorithm 2 (the file key from the empty password), checked by Algorithm 6 against U; null when it does not open. */
function rc4Key(revision: number, length: number, owner: Buffer, user: Buffer, permissions: number, firstId: Uint8Array, metadataInClear: boolean): Buffer | null {
  const key = fileKeyOf(PADDING, { revision, length, owner, permissions, firstId, metadataInClear });
  const expected = userEntryOf(key, revision, firstId);
  return expected.equals(user.subarray(0, expected.length)) ? key : null;
}

/** Algorithm 2: the file key (revisions 2-4) from a password padded to 32 bytes with PADDING. */
export function fileKeyOf(
  paddedPassword: Buffer,
  { revision, length, owner, permissions, firstId, metadataInClear }: { revision: number; length: number; owner: Buffer; permissions: number; firstId: Uint8Array; metadataInClear: boolean },
): Buffer {
  const permissionBytes = Buffer.alloc(4);
  permissionBytes.writeInt32LE(permissions | 0);
  const hash = createHash('md5').update(paddedPassword).update(owner.subarray(0, 32)).update(permissionBytes).update(firstId);
  if (revision >= 4 && metadataInClear) hash.update(Buffer.from([0xff, 0xff, 0xff, 0xff]));
  let key = hash.digest();
  if (revision >= 3) for (let i = 0; i < 50; i++) key = createHash('md5').update(key.subarray(0, length)).digest();
  return key.subarray(0, length);
}

/** Algorithms 4 and 5: what U holds for a file key (revision 2: all 32 bytes; 3 and later: the first 16, the rest arbitrary). */
export function userEntryOf(key: Buffer, revision: number, firstId: Uint8Array): Buffer {
  if (revision === 2) return Buffer.from(rc4(key, PADDING));
  let entry = Buffer.from(rc4(key, createHash('md5').update(PADDING).update(firstId).digest()));
  for (let i = 1; i <= 19; i++) entry = Buffer.from(rc4(key.map((byte) => byte ^ i), entry));
  return entry;
}

/** Algorithm 2.A for the empty user password: U's hash checked, then UE unwrapped into the file key. */
function aes256Key(revision: number, user: Buffer, userEncrypted: Buffer): Buffer | null {
  const hash = (salt: Buffer) => (revision === 6 ? hardenedHash(Buffer.alloc(0), salt) : createHash('sha256').update(salt).digest());
  if (!hash(user.subarray(32, 40)).equals(user.subarray(0, 32))) return null;
  if (userEncrypted.length < 32) return null;
  const decipher = createDecipheriv('aes-256-cbc', hash(user.subarray(40, 48)), Buffer.alloc(16)).setAutoPadding(false);
  return Buffer.concat([decipher.update(userEncrypted.subarray(0, 32)), decipher.final()]);
}

/** Algorithm 2.B (revision 6) of a password and salt; `userData` is U's first 48 bytes for the owner, none for the user. */
export function hardenedHash(password: Buffer, salt: Buffer, userData: Buffer = Buffer.alloc(0)): Buffer {
  let k = createHash('sha256').update(password).update(salt).update(userData).digest();
  for (let round = 0; ; round++) {
    const block = Buffer.concat([password, k, userData]);
    const repeated = Buffer.concat(Array.from({ length: 64 }, () => block));
    const cipher = createCipheriv('aes-128-cbc', k.subarray(0, 16), k.subarray(16, 32)).setAutoPadding(false);
    const e = Buffer.concat([cipher.update(repeated), cipher.final()]);
    let sum = 0;
    for (let i = 0; i < 16; i++) sum += e[i]!;
    k = createHash(['sha256', 'sha384', 'sha512'][sum % 3]!).update(e).digest();
    if (round >= 63 && e[e.length - 1]! <= round - 31) return k.subarray(0, 32);
  }
}

/** Algorithm 1: the key of one object, from the file key, its number and generation (and "sAlT" for AES). */
export function objectKeyOf(fileKey: Buffer, num: number, gen: number, aes: boolean): Buffer {
  const hash = createHash('md5').update(fileKey).update(Buffer.from([num & 255, (num >> 8) & 255, (num >> 16) & 255, gen & 255, (gen >> 8) & 255]));
  if (aes) hash.update(Buffer.from('sAlT', 'latin1'));
  return hash.digest().subarray(0, Math.min(fileKey.length + 5, 16));
}

/** RC4 (the stream cipher PDF's revisions 2-4 use; OpenSSL 3 no longer offers it by default). */
export function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = new Uint8Array(256);
  for (let i = 0; i < 256; i++) s[i] = i;
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = new Uint8Array(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 255]!;
  }
  return out;
}

/**
 * AES-CBC with the IV as the first 16 bytes and PKCS#5 padding (§7.6.3.2). A damaged ciphertext
 * (no whole block, bad padding) gives what could be decrypted, as viewers do, never an error.
 */
function aesCbcDecrypt(key: Buffer, bytes: Uint8Array): Uint8Array {
  const blocks = Math.floor((bytes.length - 16) / 16);
  if (blocks <= 0) return new Uint8Array(0);
  const decipher = createDecipheriv(key.length === 32 ? 'aes-256-cbc' : 'aes-128-cbc', key, bytes.subarray(0, 16)).setAutoPadding(false);
  const plain = Buffer.concat([decipher.update(bytes.subarray(16, 16 + blocks * 16)), decipher.final()]);
  const pad = plain[plain.length - 1]!;
  const padded = pad >= 1 && pad <= 16 && plain.subarray(plain.length - pad).every((byte) => byte === pad);
  return padded ? plain.subarray(0, plain.length - pad) : plain;
}
