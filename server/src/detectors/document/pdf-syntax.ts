/**
 * A small, defensive reader for PDF objects (ISO 32000-1:2008 §7.2 lexical conventions,
 * §7.3 objects, §7.4 filters).
 *
 * The forensics need to see what a viewer hides: every revision, every object version,
 * free-but-present objects. General-purpose libraries resolve those away, so this reader
 * works on raw bytes. Every input is untrusted: nesting depth, decoded sizes and the total
 * decoding budget are bounded, and the first overrun fails the job with a MediaError.
 */
import { inflateSync, constants as zlibConstants } from 'node:zlib';
import { MediaError } from '../types.js';

export interface PdfName {
  kind: 'name';
  name: string;
}
export interface PdfString {
  kind: 'string';
  bytes: Uint8Array;
}
export interface PdfRef {
  kind: 'ref';
  num: number;
  gen: number;
}
export interface PdfDict {
  kind: 'dict';
  entries: Map<string, PdfValue>;
}
export interface PdfOperator {
  kind: 'op';
  op: string;
}
export type PdfValue = null | boolean | number | PdfName | PdfString | PdfRef | PdfDict | PdfValue[];

/** Limits that keep a hostile file from exhausting the worker (DESIGN.md §6). */
export const PDF_LIMITS = {
  maxNesting: 128,
  maxStreamBytes: 64 * 1024 * 1024,
  maxTotalDecodedBytes: 768 * 1024 * 1024,
  /** Decoded/encoded ratio above which a large stream is treated as a decompression bomb. */
  maxInflateRatio: 1000,
};

const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITERS = new Set([0x28, 0x29, 0x3c, 0x3e, 0x5b, 0x5d, 0x7b, 0x7d, 0x2f, 0x25]);
const isRegular = (byte: number) => !WHITESPACE.has(byte) && !DELIMITERS.has(byte);

export const isName = (value: PdfValue | undefined, name?: string): value is PdfName =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  value.kind === 'name' &&
  (name === undefined || value.name === name);
export const isDict = (value: PdfValue | undefined): value is PdfDict =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && value.kind === 'dict';
export const isRef = (value: PdfValue | undefined): value is PdfRef =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && value.kind === 'ref';
export const isString = (value: PdfValue | undefined): value is PdfString =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && value.kind === 'string';

/** Tokenises and parses PDF values from a byte buffer, starting at `pos`. */
export class PdfLexer {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    readonly end = bytes.length,
  ) {
    this.pos = start;
  }

  skipWhitespaceAndComments(): void {
    const { bytes } = this;
    while (this.pos < this.end) {
      const byte = bytes[this.pos]!;
      if (WHITESPACE.has(byte)) this.pos++;
      else if (byte === 0x25) {
        while (this.pos < this.end && bytes[this.pos] !== 0x0a && bytes[this.pos] !== 0x0d) this.pos++;
      } else break;
    }
  }

  /** Reads a bare keyword or number token (regular characters only). */
  readRegular(): string {
    const start = this.pos;
    while (this.pos < this.end && isRegular(this.bytes[this.pos]!)) this.pos++;
    return latin1(this.bytes, start, this.pos);
  }

  /**
   * Parses one value. Keywords that are not values (`obj`, `stream`, content operators)
   * come back as PdfOperator so content streams can share this parser.
   */
  parse(depth = 0): PdfValue | PdfOperator | undefined {
    if (depth > PDF_LIMITS.maxNesting)
      throw new MediaError(`PDF objects nested deeper than ${PDF_LIMITS.maxNesting} levels: refusing a likely malicious file`);
    this.skipWhitespaceAndComments();
    if (this.pos >= this.end) return undefined;
    const byte = this.bytes[this.pos]!;
    if (byte === 0x2f) return this.parseName();
    if (byte === 0x28) return this.parseLiteralString();
    if (byte === 0x3c) {
      if (this.bytes[this.pos + 1] === 0x3c) return this.parseDict(depth);
      return this.parseHexString();
    }
    if (byte === 0x5b) return this.parseArray(depth);
    if (byte === 0x5d || byte === 0x3e || byte === 0x29 || byte === 0x7b || byte === 0x7d) {
      this.pos++;
      return { kind: 'op', op: String.fromCharCode(byte) };
    }
    const token = this.readRegular();
    if (token === '') {
      this.pos++;
      return { kind: 'op', op: '' };
    }
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(token)) {
      const number = Number(token);
      // `num gen R` is an indirect reference (§7.3.10).
      if (/^\d+$/.test(token)) {
        const save = this.pos;
        this.skipWhitespaceAndComments();
        const genStart = this.pos;
        const gen = this.readRegular();
        if (/^\d+$/.test(gen) && this.pos > genStart) {
          this.skipWhitespaceAndComments();
          if (this.bytes[this.pos] === 0x52 && (this.pos + 1 >= this.end || !isRegular(this.bytes[this.pos + 1]!))) {
            this.pos++;
            return { kind: 'ref', num: number, gen: Number(gen) };
          }
        }
        this.pos = save;
      }
      return number;
    }
    if (token === 'true') return true;
    if (token === 'false') return false;
    if (token === 'null') return null;
    return { kind: 'op', op: token };
  }

  /** Parses a value and rejects operators (used for object bodies). */
  parseValue(depth = 0): PdfValue {
    const value = this.parse(depth);
    if (value === undefined) return null;
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && value.kind === 'op') return null;
    return value as PdfValue;
  }

  private parseName(): PdfName {
    this.pos++;
    const start = this.pos;
    while (this.pos < this.end && isRegular(this.bytes[this.pos]!)) this.pos++;
    // #xx escapes (§7.3.5)
    const raw = latin1(this.bytes, start, this.pos);
    return {
      kind: 'name',
      name: raw.includes('#') ? raw.replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : raw,
    };
  }

  private parseLiteralString(): PdfString {
    const out: number[] = [];
    let nesting = 1;
    this.pos++;
    const { bytes } = this;
    while (this.pos < this.end) {
      const byte = bytes[this.pos++]!;
      if (byte === 0x5c) {
        const next = bytes[this.pos++];
        if (next === undefined) break;
        const escapes: Record<number, number> = { 0x6e: 10, 0x72: 13, 0x74: 9, 0x62: 8, 0x66: 12, 0x28: 0x28, 0x29: 0x29, 0x5c: 0x5c };
        if (escapes[next] !== undefined) out.push(escapes[next]!);
        else if (next >= 0x30 && next <= 0x37) {
          let octal = next - 0x30;
          for (let i = 0; i < 2 && bytes[this.pos]! >= 0x30 && bytes[this.pos]! <= 0x37; i++)
            octal = octal * 8 + (bytes[this.pos++]! - 0x30);
          out.push(octal & 0xff);
        } else if (next === 0x0d) {
          if (bytes[this.pos] === 0x0a) this.pos++;
        } else if (next !== 0x0a) out.push(next);
      } else if (byte === 0x28) {
        nesting++;
        out.push(byte);
      } else if (byte === 0x29) {
        if (--nesting === 0) break;
        out.push(byte);
      } else out.push(byte);
    }
    return { kind: 'string', bytes: Uint8Array.from(out) };
  }

  private parseHexString(): PdfString {
    this.pos++;
    const digits: number[] = [];
    while (this.pos < this.end && this.bytes[this.pos] !== 0x3e) {
      const value = hexValue(this.bytes[this.pos++]!);
      if (value >= 0) digits.push(value);
    }
    this.pos++;
    if (digits.length % 2) digits.push(0);
    const out = new Uint8Array(digits.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = digits[2 * i]! * 16 + digits[2 * i + 1]!;
    return { kind: 'string', bytes: out };
  }

  private parseArray(depth: number): PdfValue[] {
    this.pos++;
    const items: PdfValue[] = [];
    for (;;) {
      this.skipWhitespaceAndComments();
      if (this.pos >= this.end) return items;
      if (this.bytes[this.pos] === 0x5d) {
        this.pos++;
        return items;
      }
      const value = this.parse(depth + 1);
      if (value === undefined) return items;
      if (typeof value === 'object' && value !== null && !Array.isArray(value) && value.kind === 'op') {
        if (value.op === 'endobj' || value.op === 'stream') return items;
        continue;
      }
      items.push(value as PdfValue);
    }
  }

  private parseDict(depth: number): PdfDict {
    this.pos += 2;
    const entries = new Map<string, PdfValue>();
    for (;;) {
      this.skipWhitespaceAndComments();
      if (this.pos >= this.end) return { kind: 'dict', entries };
      if (this.bytes[this.pos] === 0x3e && this.bytes[this.pos + 1] === 0x3e) {
        this.pos += 2;
        return { kind: 'dict', entries };
      }
      const key = this.parse(depth + 1);
      if (key === undefined) return { kind: 'dict', entries };
      if (!isName(key as PdfValue)) {
        if (
          typeof key === 'object' &&
          key !== null &&
          !Array.isArray(key) &&
          key.kind === 'op' &&
          (key.op === 'endobj' || key.op === 'stream')
        ) {
          return { kind: 'dict', entries };
        }
        continue;
      }
      const value = this.parse(depth + 1);
      if (value === undefined) return { kind: 'dict', entries };
      if (typeof value === 'object' && value !== null && !Array.isArray(value) && value.kind === 'op') continue;
      entries.set((key as PdfName).name, value as PdfValue);
    }
  }
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

export function latin1(bytes: Uint8Array, start = 0, end = bytes.length): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, Math.max(0, end - start)).toString('latin1');
}

/** Text strings (§7.9.2.2): UTF-16BE with a byte order mark, else PDFDocEncoding (≈ Latin-1). */
export function decodeTextString(value: PdfValue | undefined): string | undefined {
  if (!isString(value)) return isName(value) ? value.name : typeof value === 'number' ? String(value) : undefined;
  const { bytes } = value;
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    let text = '';
    for (let i = 2; i + 1 < bytes.length; i += 2) text += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
    return text;
  }
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return Buffer.from(bytes.subarray(3)).toString('utf8');
  return latin1(bytes);
}

/** Tracks the decoding budget of one document so many medium streams cannot add up to a bomb. */
export class DecodeBudget {
  used = 0;
  charge(bytes: number): void {
    this.used += bytes;
    if (this.used > PDF_LIMITS.maxTotalDecodedBytes) {
      throw new MediaError(
        `PDF streams decode to more than ${PDF_LIMITS.maxTotalDecodedBytes / 1024 / 1024} MiB in total: refusing a likely decompression bomb`,
      );
    }
  }
}

export interface DecodedStream {
  data: Uint8Array;
  /** Image data left in its own compression (DCT, JPX, JBIG2, CCITT): not decoded here. */
  imageFilter?: string;
  /** A filter this reader does not implement, or a corrupt stream. */
  undecodable?: string;
}

/**
 * Applies the stream's filter chain (§7.4). Flate is inflated with an output cap; a stream
 * that inflates past the cap, or far past a plausible ratio, is a decompression bomb.
 */
export function decodeStream(
  dict: PdfDict,
  raw: Uint8Array,
  budget: DecodeBudget,
  resolve: (value: PdfValue | undefined) => PdfValue | undefined,
): DecodedStream {
  const filterValue = resolve(dict.entries.get('Filter'));
  const filters = (Array.isArray(filterValue) ? filterValue : filterValue ? [filterValue] : []).map((f) => (isName(f) ? f.name : ''));
  const parmsValue = resolve(dict.entries.get('DecodeParms'));
  const parmsList = Array.isArray(parmsValue) ? parmsValue : [parmsValue];
  let data = raw;
  for (let i = 0; i < filters.length; i++) {
    const filter = filters[i]!;
    const parms = resolve(parmsList[i] ?? null);
    switch (filter) {
      case 'FlateDecode':
      case 'Fl':
        data = inflateBounded(data, budget);
        if (isDict(parms)) data = applyPredictor(data, parms);
        break;
      case 'ASCIIHexDecode':
      case 'AHx':
        data = decodeAsciiHex(data);
        break;
      case 'ASCII85Decode':
      case 'A85':
        data = decodeAscii85(data);
        break;
      case 'DCTDecode':
      case 'DCT':
      case 'JPXDecode':
      case 'JBIG2Decode':
      case 'CCITTFaxDecode':
      case 'CCF':
        return { data, imageFilter: filter };
      default:
        return { data, undecodable: filter };
    }
  }
  return { data };
}

function inflateBounded(data: Uint8Array, budget: DecodeBudget): Uint8Array {
  let out: Buffer;
  try {
    out = inflateSync(data, { maxOutputLength: PDF_LIMITS.maxStreamBytes, finishFlush: zlibConstants.Z_SYNC_FLUSH });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || /maxOutputLength|Cannot create a Buffer larger/i.test(String((error as Error).message))) {
      throw new MediaError(
        `a PDF stream of ${data.length} bytes inflates past ${PDF_LIMITS.maxStreamBytes / 1024 / 1024} MiB: refusing a decompression bomb`,
      );
    }
    // A truncated or corrupt deflate stream: keep what inflated, as viewers do.
    out = Buffer.alloc(0);
  }
  if (out.length > 16 * 1024 * 1024 && out.length / Math.max(1, data.length) > PDF_LIMITS.maxInflateRatio) {
    throw new MediaError(
      `a PDF stream of ${data.length} bytes inflates to ${out.length} bytes (ratio ${Math.round(out.length / data.length)}:1): refusing a decompression bomb`,
    );
  }
  budget.charge(out.length);
  return out;
}

/** PNG predictors (§7.4.4.4), used by cross-reference streams. */
function applyPredictor(data: Uint8Array, parms: PdfDict): Uint8Array {
  const predictor = parms.entries.get('Predictor');
  if (typeof predictor !== 'number' || predictor < 10) return data;
  const columns = typeof parms.entries.get('Columns') === 'number' ? (parms.entries.get('Columns') as number) : 1;
  const colors = typeof parms.entries.get('Colors') === 'number' ? (parms.entries.get('Colors') as number) : 1;
  const bpc = typeof parms.entries.get('BitsPerComponent') === 'number' ? (parms.entries.get('BitsPerComponent') as number) : 8;
  const bytesPerPixel = Math.max(1, Math.ceil((colors * bpc) / 8));
  const rowLength = Math.ceil((columns * colors * bpc) / 8);
  if (rowLength <= 0 || rowLength > 1 << 20) return data;
  const rows = Math.floor(data.length / (rowLength + 1));
  const out = new Uint8Array(rows * rowLength);
  for (let row = 0; row < rows; row++) {
    const type = data[row * (rowLength + 1)]!;
    const src = row * (rowLength + 1) + 1;
    const dst = row * rowLength;
    for (let i = 0; i < rowLength; i++) {
      const raw = data[src + i]!;
      const left = i >= bytesPerPixel ? out[dst + i - bytesPerPixel]! : 0;
      const up = row > 0 ? out[dst - rowLength + i]! : 0;
      const upLeft = row > 0 && i >= bytesPerPixel ? out[dst - rowLength + i - bytesPerPixel]! : 0;
      let value: number;
      if (type === 1) value = raw + left;
      else if (type === 2) value = raw + up;
      else if (type === 3) value = raw + ((left + up) >> 1);
      else if (type === 4) {
        const p = left + up - upLeft;
        const pa = Math.abs(p - left),
          pb = Math.abs(p - up),
          pc = Math.abs(p - upLeft);
        value = raw + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
      } else value = raw;
      out[dst + i] = value & 0xff;
    }
  }
  return out;
}

function decodeAsciiHex(data: Uint8Array): Uint8Array {
  const digits: number[] = [];
  for (const byte of data) {
    if (byte === 0x3e) break;
    const value = hexValue(byte);
    if (value >= 0) digits.push(value);
  }
  if (digits.length % 2) digits.push(0);
  const out = new Uint8Array(digits.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = digits[2 * i]! * 16 + digits[2 * i + 1]!;
  return out;
}

function decodeAscii85(data: Uint8Array): Uint8Array {
  const out: number[] = [];
  let group: number[] = [];
  for (let i = 0; i < data.length; i++) {
    const byte = data[i]!;
    if (byte === 0x7e) break; // "~>"
    if (WHITESPACE.has(byte)) continue;
    if (byte === 0x7a && group.length === 0) {
      out.push(0, 0, 0, 0);
      continue;
    }
    if (byte < 0x21 || byte > 0x75) continue;
    group.push(byte - 0x21);
    if (group.length === 5) {
      let value = 0;
      for (const digit of group) value = value * 85 + digit;
      out.push((value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
      group = [];
    }
  }
  if (group.length > 1) {
    const missing = 5 - group.length;
    while (group.length < 5) group.push(84);
    let value = 0;
    for (const digit of group) value = value * 85 + digit;
    const bytes = [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
    out.push(...bytes.slice(0, 4 - missing));
  }
  return Uint8Array.from(out);
}
