/**
 * The raw file structure of a PDF, revision by revision (ISO 32000-1:2008 §7.5: header,
 * body, cross-reference table §7.5.4, trailer §7.5.5, incremental updates §7.5.6, object
 * streams §7.5.7, cross-reference streams §7.5.8; linearisation, Annex F).
 *
 * Unlike a viewer, this reader does not trust the cross-reference table: it scans the body
 * for every `n g obj`, assigns each object version to the revision (the bytes up to a
 * `%%EOF`) it was written in, and keeps the versions that later revisions replaced or
 * freed. That history is what incremental-saving attacks (Mladenov et al., "1 Trillion
 * Dollar Refund", CCS 2019) and shadow attacks (Mainka et al., NDSS 2021) leave behind.
 */
import { MediaError } from '../types.js';
import {
  DecodeBudget,
  PdfLexer,
  decodeStream,
  isDict,
  isName,
  isRef,
  isString,
  latin1,
  type DecodedStream,
  type PdfDict,
  type PdfValue,
} from './pdf-syntax.js';
import { openEncryption, type Decryption } from './pdf-decrypt.js';

export interface ObjectRecord {
  num: number;
  gen: number;
  /** Byte offset of `n g obj` (of the containing object stream for compressed objects). */
  offset: number;
  /** Index (0-based) of the revision whose bytes hold this version. */
  revision: number;
  value: PdfValue;
  stream?: { dict: PdfDict; start: number; end: number };
  inObjectStream?: number;
}

export interface Revision {
  index: number;
  /** Byte range [start, end) of the revision: from the previous `%%EOF` to just after its own. */
  start: number;
  end: number;
  trailer: PdfDict | null;
  xrefKind: 'table' | 'stream' | 'none';
  objects: ObjectRecord[];
  /** Object numbers the revision's cross-reference section marks free (deleted). */
  freed: number[];
  /** Entries whose offset does not point at the object they name. */
  xrefMismatches: number;
  /** True for an update appended after the last `%%EOF` without its own terminator. */
  unterminated: boolean;
}

const MAX_OBJECTS = 2_000_000;
const OBJECT_HEADER = /(?<![0-9])(\d{1,10})[\x00\t\n\f\r ]+(\d{1,5})[\x00\t\n\f\r ]+obj(?![A-Za-z0-9])/g;

export class PdfFile {
  readonly revisions: Revision[] = [];
  readonly records: ObjectRecord[] = [];
  readonly version: string;
  readonly linearized: boolean;
  /** Byte offsets of a linearised file's hint streams (its /H array, Annex F.2.2): named by offset, never by reference. */
  readonly hintStreamOffsets: number[];
  /** Bytes after the final `%%EOF` that are not an update (ignored by viewers). */
  readonly trailingBytes: number;
  readonly budget = new DecodeBudget();
  /** How the document is encrypted (null: it is not), and either how to decrypt it or why it cannot be. */
  readonly encryption: Decryption | { reason: string } | null;
  private readonly text: string;
  private readonly tables = new Map<number, Map<number, ObjectRecord>>();
  private readonly decoded = new WeakMap<ObjectRecord, DecodedStream>();

  constructor(
    readonly bytes: Uint8Array,
    private readonly checkAbort: () => void = () => {},
  ) {
    this.text = latin1(bytes);
    const headerAt = this.text.slice(0, 1024).indexOf('%PDF-');
    if (headerAt < 0) throw new MediaError('not a PDF: the %PDF- header is missing from the first 1024 bytes');
    this.version = this.text.slice(headerAt + 5, headerAt + 8).replace(/[^0-9.]/g, '');

    const eofEnds: number[] = [];
    for (let at = this.text.indexOf('%%EOF'); at >= 0; at = this.text.indexOf('%%EOF', at + 5)) {
      let end = at + 5;
      if (this.text[end] === '\r') end++;
      if (this.text[end] === '\n') end++;
      eofEnds.push(end);
    }
    this.scanObjects();
    if (this.records.length === 0) throw new MediaError('broken PDF: no indirect objects could be found in the file');

    const firstValue = [...this.records].sort((a, b) => a.offset - b.offset)[0]?.value;
    this.linearized = isDict(firstValue) && firstValue.entries.has('Linearized');
    const hints = this.linearized && isDict(firstValue) ? firstValue.entries.get('H') : undefined;
    this.hintStreamOffsets = Array.isArray(hints) ? hints.filter((value, i): value is number => i % 2 === 0 && typeof value === 'number') : [];
    // A linearised file's first-page section ends in its own %%EOF: it is not an update.
    if (this.linearized && eofEnds.length >= 2) eofEnds.shift();

    const lastEnd = eofEnds.at(-1) ?? 0;
    let lastObjectEnd = 0;
    for (const record of this.records) if (record.offset > lastObjectEnd) lastObjectEnd = record.offset;
    const updateAfterEof = lastObjectEnd >= lastEnd && eofEnds.length > 0;
    const bounds = [...eofEnds];
    if (eofEnds.length === 0 || updateAfterEof) bounds.push(bytes.length);
    this.trailingBytes = updateAfterEof ? 0 : Math.max(0, bytes.length - lastEnd - countTrailingWhitespace(this.text, lastEnd));

    let start = 0;
    for (const [index, end] of bounds.entries()) {
      this.revisions.push({
        index,
        start,
        end,
        trailer: null,
        xrefKind: 'none',
        objects: [],
        freed: [],
        xrefMismatches: 0,
        unterminated: end === bytes.length && !eofEnds.includes(end),
      });
      start = end;
    }
    const revisionOf = (offset: number) => {
      const found = this.revisions.find((revision) => offset < revision.end);
      return found ? found.index : this.revisions.length - 1;
    };
    for (const record of this.records) {
      record.revision = revisionOf(record.offset);
      this.revisions[record.revision]!.objects.push(record);
    }
    // Cross-reference streams are never encrypted (§7.6.2), so the trailers come first, and with them the Encrypt dictionary.
    for (const revision of this.revisions) this.readCrossReference(revision);
    this.encryption = this.readEncryption();
    if (this.encryption && 'method' in this.encryption) this.decryptStrings(this.encryption);
    for (const record of this.expandObjectStreams(revisionOf)) this.revisions[record.revision]!.objects.push(record);
    // Tables resolved while object streams were still unpacked are incomplete.
    this.tables.clear();
  }

  /** The document's encryption, when its trailer names one: how to decrypt it, or why it cannot be opened. */
  private readEncryption(): Decryption | { reason: string } | null {
    const trailer = this.trailer;
    if (!trailer?.entries.has('Encrypt')) return null;
    const encrypt = this.dictOf(trailer.entries.get('Encrypt'));
    if (!encrypt) return { reason: 'its Encrypt dictionary cannot be read' };
    const ids = this.resolve(trailer.entries.get('ID'));
    const firstId = Array.isArray(ids) && isString(ids[0]) ? ids[0].bytes : new Uint8Array(0);
    return openEncryption(encrypt, firstId, (value) => this.resolve(value));
  }

  /**
   * Strings are encrypted object by object (§7.6.2), except in the Encrypt dictionary, a
   * cross-reference stream's dictionary and a signature's Contents; strings inside object streams
   * are decrypted with their stream.
   */
  private decryptStrings(decryption: Decryption): void {
    const encrypt = this.trailer?.entries.get('Encrypt');
    const encryptNum = isRef(encrypt) ? encrypt.num : -1;
    const visit = (value: PdfValue, record: ObjectRecord, depth: number): void => {
      if (depth > 128) return;
      if (isString(value)) value.bytes = decryption.string(value.bytes, record.num, record.gen);
      else if (Array.isArray(value)) for (const item of value) visit(item, record, depth + 1);
      else if (isDict(value)) {
        const signature = isName(value.entries.get('Type'), 'Sig') || value.entries.has('ByteRange');
        for (const [key, item] of value.entries) if (!(signature && key === 'Contents')) visit(item, record, depth + 1);
      }
    };
    for (const record of this.records) {
      if (record.num !== encryptNum && !isName(record.stream?.dict.entries.get('Type'), 'XRef')) visit(record.value, record, 0);
    }
  }

  /** Finds every `n g obj … endobj` in file order, skipping over stream data. */
  private scanObjects(): void {
    const { text, bytes } = this;
    OBJECT_HEADER.lastIndex = 0;
    let match: RegExpExecArray | null;
    let count = 0;
    while ((match = OBJECT_HEADER.exec(text))) {
      if (++count > MAX_OBJECTS) throw new MediaError(`PDF declares more than ${MAX_OBJECTS} objects: refusing a likely malicious file`);
      if (count % 5000 === 0) this.checkAbort();
      const lexer = new PdfLexer(bytes, match.index + match[0].length);
      let value: PdfValue;
      try {
        value = lexer.parseValue();
      } catch (error) {
        if (error instanceof MediaError) throw error;
        continue;
      }
      const record: ObjectRecord = { num: Number(match[1]), gen: Number(match[2]), offset: match.index, revision: 0, value };
      lexer.skipWhitespaceAndComments();
      if (isDict(value) && text.startsWith('stream', lexer.pos)) {
        let dataStart = lexer.pos + 6;
        if (text[dataStart] === '\r') dataStart++;
        if (text[dataStart] === '\n') dataStart++;
        const declared = value.entries.get('Length');
        let dataEnd = -1;
        if (typeof declared === 'number' && declared >= 0 && dataStart + declared <= bytes.length) {
          const after = text.slice(dataStart + declared, dataStart + declared + 32);
          if (/^\s*endstream/.test(after)) dataEnd = dataStart + declared;
        }
        if (dataEnd < 0) {
          const endstream = text.indexOf('endstream', dataStart);
          dataEnd = endstream < 0 ? bytes.length : endstream;
          if (text[dataEnd - 1] === '\n') dataEnd--;
          if (text[dataEnd - 1] === '\r') dataEnd--;
        }
        record.stream = { dict: value, start: dataStart, end: Math.max(dataStart, dataEnd) };
        OBJECT_HEADER.lastIndex = Math.max(OBJECT_HEADER.lastIndex, dataEnd);
      } else {
        OBJECT_HEADER.lastIndex = Math.max(OBJECT_HEADER.lastIndex, lexer.pos);
      }
      this.records.push(record);
    }
  }

  /** Objects stored compressed inside object streams (§7.5.7), added to the records and returned. */
  private expandObjectStreams(revisionOf: (offset: number) => number): ObjectRecord[] {
    const expanded: ObjectRecord[] = [];
    const containers = this.records.filter((r) => r.stream && isName(r.stream.dict.entries.get('Type'), 'ObjStm'));
    for (const container of containers) {
      this.checkAbort();
      const count = container.stream!.dict.entries.get('N');
      const first = container.stream!.dict.entries.get('First');
      if (typeof count !== 'number' || typeof first !== 'number' || count < 0 || count > 1_000_000) continue;
      const { data, undecodable, imageFilter } = this.streamData(container);
      if (undecodable || imageFilter) continue;
      const header = new PdfLexer(data, 0, Math.min(first, data.length));
      for (let i = 0; i < count; i++) {
        const num = header.parseValue();
        const offset = header.parseValue();
        if (typeof num !== 'number' || typeof offset !== 'number') break;
        const lexer = new PdfLexer(data, first + offset);
        expanded.push({
          num,
          gen: 0,
          offset: container.offset,
          revision: revisionOf(container.offset),
          value: lexer.parseValue(),
          inObjectStream: container.num,
        });
      }
    }
    this.records.push(...expanded);
    return expanded;
  }

  /**
   * Reads the revision's trailer and cross-reference sections (tables or streams). A linearised
   * file's first revision has two of each (Annex F.3): the first-page section, whose trailer names
   * Root, Info and Encrypt, and the main one at the end, whose trailer may hold only Size. Both are
   * read, and the trailer is the first-page one completed by the main one.
   */
  private readCrossReference(revision: Revision): void {
    const linearizedSections = this.linearized && revision.index === 0;
    const segment = this.text.slice(revision.start, revision.end);
    const trailerAt = segment.lastIndexOf('trailer');
    if (trailerAt >= 0) revision.trailer = this.trailerAt(revision, trailerAt);
    const firstTrailerAt = segment.indexOf('trailer');
    if (linearizedSections && firstTrailerAt >= 0 && firstTrailerAt !== trailerAt) {
      revision.trailer = mergedTrailer(this.trailerAt(revision, firstTrailerAt), revision.trailer);
    }
    const xrefStreams = revision.objects.filter((r) => r.stream && isName(r.stream.dict.entries.get('Type'), 'XRef'));
    if (xrefStreams.length > 0) {
      revision.xrefKind = 'stream';
      const read = linearizedSections ? xrefStreams : xrefStreams.slice(-1);
      if (!revision.trailer) revision.trailer = read.reduce<PdfDict | null>((trailer, record) => mergedTrailer(trailer, record.stream!.dict), null);
      for (const record of read) this.readXrefStream(revision, record);
    }
    const tableMatches = [...segment.matchAll(/(?:^|[\r\n])xref[\t ]*[\r\n]/g)];
    if (tableMatches.length > 0) {
      revision.xrefKind = 'table';
      for (const match of linearizedSections ? tableMatches : tableMatches.slice(0, 1)) {
        this.readXrefTable(revision, revision.start + match.index + match[0].length);
      }
    }
  }

  private trailerAt(revision: Revision, at: number): PdfDict | null {
    const trailer = new PdfLexer(this.bytes, revision.start + at + 7, revision.end).parseValue();
    return isDict(trailer) ? trailer : null;
  }

  private readXrefTable(revision: Revision, from: number): void {
    const lexer = new PdfLexer(this.bytes, from, revision.end);
    for (let sections = 0; sections < 100_000; sections++) {
      lexer.skipWhitespaceAndComments();
      const save = lexer.pos;
      const first = Number(lexer.readRegular());
      lexer.skipWhitespaceAndComments();
      const count = Number(lexer.readRegular());
      if (!Number.isInteger(first) || !Number.isInteger(count) || lexer.pos === save) return;
      for (let i = 0; i < count; i++) {
        lexer.skipWhitespaceAndComments();
        const offset = Number(lexer.readRegular());
        lexer.skipWhitespaceAndComments();
        lexer.readRegular();
        lexer.skipWhitespaceAndComments();
        const type = lexer.readRegular();
        const num = first + i;
        if (type === 'f') {
          if (num !== 0) revision.freed.push(num);
        } else if (type === 'n') {
          if (!this.objectStartsAt(offset, num)) revision.xrefMismatches++;
        } else return;
      }
    }
  }

  private readXrefStream(revision: Revision, record: ObjectRecord): void {
    const dict = record.stream!.dict;
    const widths = dict.entries.get('W');
    if (!Array.isArray(widths) || widths.length !== 3 || !widths.every((w) => typeof w === 'number' && w >= 0 && w <= 8)) return;
    const [w0, w1, w2] = widths as number[];
    const size = dict.entries.get('Size');
    const index = dict.entries.get('Index');
    const ranges = Array.isArray(index) ? index : [0, typeof size === 'number' ? size : 0];
    const { data, undecodable } = this.streamData(record);
    if (undecodable) return;
    const entryLength = w0! + w1! + w2!;
    if (entryLength === 0) return;
    const readField = (at: number, width: number) => {
      let value = 0;
      for (let i = 0; i < width; i++) value = value * 256 + data[at + i]!;
      return value;
    };
    let at = 0;
    for (let r = 0; r + 1 < ranges.length; r += 2) {
      const first = ranges[r] as number;
      const count = ranges[r + 1] as number;
      for (let i = 0; i < count && at + entryLength <= data.length; i++, at += entryLength) {
        const type = w0 === 0 ? 1 : readField(at, w0!);
        const field2 = readField(at + w0!, w1!);
        const num = first + i;
        if (type === 0 && num !== 0) revision.freed.push(num);
        else if (type === 1 && !this.objectStartsAt(field2, num)) revision.xrefMismatches++;
      }
    }
  }

  private objectStartsAt(offset: number, num: number): boolean {
    if (!Number.isFinite(offset) || offset < 0 || offset >= this.bytes.length) return false;
    const head = this.text.slice(offset, offset + 40);
    const match = /^\s*(\d+)\s+\d+\s+obj/.exec(head);
    return match !== null && Number(match[1]) === num;
  }

  /** The objects in force after revision `index` (0-based): later versions win, frees delete. */
  tableAt(index: number): Map<number, ObjectRecord> {
    const cached = this.tables.get(index);
    if (cached) return cached;
    const table = index > 0 ? new Map(this.tableAt(index - 1)) : new Map<number, ObjectRecord>();
    const revision = this.revisions[index]!;
    for (const num of revision.freed) {
      const current = table.get(num);
      if (current && current.revision < index) table.delete(num);
    }
    for (const record of revision.objects) {
      const current = table.get(record.num);
      // Within one revision a compressed copy overrides a plain one only if written later.
      if (!current || current.revision < index || current.offset <= record.offset) table.set(record.num, record);
    }
    this.tables.set(index, table);
    return table;
  }

  get finalTable(): Map<number, ObjectRecord> {
    return this.tableAt(this.revisions.length - 1);
  }

  /** Follows indirect references (bounded, so reference cycles cannot loop). */
  resolve(value: PdfValue | undefined, table = this.finalTable): PdfValue | undefined {
    let current = value;
    for (let hops = 0; hops < 32 && isRef(current); hops++) current = table.get(current.num)?.value;
    return isRef(current) ? undefined : current;
  }

  dictOf(value: PdfValue | undefined, table = this.finalTable): PdfDict | undefined {
    const resolved = this.resolve(value, table);
    return isDict(resolved) ? resolved : undefined;
  }

  recordOf(value: PdfValue | undefined, table = this.finalTable): ObjectRecord | undefined {
    return isRef(value) ? table.get(value.num) : undefined;
  }

  /** The decoded bytes of a stream object (cached; bounded by the document's budget). */
  streamData(record: ObjectRecord, options: { cache?: boolean } = {}): DecodedStream {
    const cached = this.decoded.get(record);
    if (cached) return cached;
    if (!record.stream) return { data: new Uint8Array(0), undecodable: 'not a stream' };
    let raw = this.bytes.subarray(record.stream.start, record.stream.end);
    if (this.encryption && 'method' in this.encryption && this.encryptedStream(record.stream.dict, this.encryption)) {
      raw = this.encryption.stream(raw, record.num, record.gen);
    }
    const decoded = decodeStream(record.stream.dict, raw, this.budget, (value) => this.resolve(value));
    if (options.cache !== false) this.decoded.set(record, decoded);
    return decoded;
  }

  /** Cross-reference streams are in clear, and metadata streams when the document says so (§7.6.2, §7.6.4.4). */
  private encryptedStream(dict: PdfDict, decryption: Decryption): boolean {
    const type = dict.entries.get('Type');
    return !isName(type, 'XRef') && !(decryption.metadataInClear && isName(type, 'Metadata'));
  }

  /** The trailer in force: the last revision's, falling back to earlier ones. */
  get trailer(): PdfDict | undefined {
    for (let i = this.revisions.length - 1; i >= 0; i--) if (this.revisions[i]!.trailer) return this.revisions[i]!.trailer!;
    return undefined;
  }

  /** Object numbers reachable from the trailer (Root, Info, Encrypt) in the final table. */
  reachable(table = this.finalTable, trailer = this.trailer): Set<number> {
    const seen = new Set<number>();
    const stack: PdfValue[] = trailer ? [...trailer.entries.values()] : [];
    let visited = 0;
    while (stack.length) {
      if (++visited % 20000 === 0) this.checkAbort();
      const value = stack.pop()!;
      if (isRef(value)) {
        if (seen.has(value.num)) continue;
        seen.add(value.num);
        const record = table.get(value.num);
        if (record) stack.push(record.value);
      } else if (Array.isArray(value)) stack.push(...value);
      else if (isDict(value)) stack.push(...value.entries.values());
    }
    return seen;
  }

  /** Pages in document order (§7.7.3.2), with inherited attributes resolved. */
  pages(table = this.finalTable, trailer = this.trailer): PageInfo[] {
    const root = this.dictOf(trailer?.entries.get('Root'), table);
    const pages: PageInfo[] = [];
    const visit = (value: PdfValue | undefined, inherited: Inherited, depth: number, seen: Set<number>) => {
      if (depth > 64 || pages.length > 100_000) return;
      if (isRef(value)) {
        if (seen.has(value.num)) return;
        seen.add(value.num);
      }
      const node = this.dictOf(value, table);
      if (!node) return;
      const own: Inherited = {
        resources: node.entries.get('Resources') ?? inherited.resources,
        mediaBox: node.entries.get('MediaBox') ?? inherited.mediaBox,
        cropBox: node.entries.get('CropBox') ?? inherited.cropBox,
        rotate: node.entries.get('Rotate') ?? inherited.rotate,
      };
      const kids = this.resolve(node.entries.get('Kids'), table);
      if (isName(node.entries.get('Type'), 'Pages') || (Array.isArray(kids) && !node.entries.has('Contents'))) {
        if (Array.isArray(kids)) for (const kid of kids) visit(kid, own, depth + 1, seen);
        return;
      }
      const mediaBox = this.box(own.mediaBox, table) ?? [0, 0, 612, 792];
      pages.push({
        number: pages.length + 1,
        ref: isRef(value) ? value.num : undefined,
        dict: node,
        resources: this.dictOf(own.resources, table),
        mediaBox,
        cropBox: this.box(own.cropBox, table) ?? mediaBox,
        rotate: typeof this.resolve(own.rotate, table) === 'number' ? (this.resolve(own.rotate, table) as number) : 0,
      });
    };
    visit(root?.entries.get('Pages'), {}, 0, new Set());
    return pages;
  }

  private box(value: PdfValue | undefined, table: Map<number, ObjectRecord>): Box | undefined {
    const resolved = this.resolve(value, table);
    if (!Array.isArray(resolved) || resolved.length !== 4) return undefined;
    const numbers = resolved.map((v) => this.resolve(v, table));
    if (!numbers.every((n) => typeof n === 'number')) return undefined;
    const [a, b, c, d] = numbers as number[];
    return [Math.min(a!, c!), Math.min(b!, d!), Math.max(a!, c!), Math.max(b!, d!)];
  }
}

/** [llx, lly, urx, ury] in PDF user space. */
export type Box = [number, number, number, number];

interface Inherited {
  resources?: PdfValue;
  mediaBox?: PdfValue;
  cropBox?: PdfValue;
  rotate?: PdfValue;
}

export interface PageInfo {
  number: number;
  ref: number | undefined;
  dict: PdfDict;
  resources: PdfDict | undefined;
  mediaBox: Box;
  cropBox: Box;
  rotate: number;
}

function countTrailingWhitespace(text: string, from: number): number {
  let count = 0;
  while (from + count < text.length && /[\s\x00]/.test(text[from + count]!)) count++;
  return count;
}

/** `first`'s entries, with those it lacks taken from `rest` (either may be missing). */
function mergedTrailer(first: PdfDict | null, rest: PdfDict | null): PdfDict | null {
  if (!first || !rest) return first ?? rest;
  return { kind: 'dict', entries: new Map([...rest.entries, ...first.entries]) };
}
