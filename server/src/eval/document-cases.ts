/**
 * Generated document cases for tests and evaluation: invoices written by pdf-lib, forged by
 * incremental updates appended as raw bytes (ISO 32000-1 §7.5.6), and "scanned" invoices
 * rendered with sharp, optionally with one line re-typed after scanning.
 */
import {
  PDFDocument,
  PDFName,
  PDFRef,
  StandardFonts,
  TextRenderingMode,
  beginText,
  endText,
  moveText,
  setFontAndSize,
  setTextRenderingMode,
  showText,
} from 'pdf-lib';
import sharp, { type Sharp } from 'sharp';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { fileKeyOf, hardenedHash, objectKeyOf, PADDING, rc4, userEntryOf } from '../detectors/document/pdf-decrypt.js';

export interface InvoiceLine {
  text: string;
  y: number;
}

export const INVOICE_LINES: InvoiceLine[] = [
  { text: 'ACME Supplies Ltd', y: 760 },
  { text: 'Invoice 2026-0042', y: 730 },
  { text: 'Office chairs 4 x 150.00', y: 690 },
  { text: 'Desk lamps 6 x 100.00', y: 670 },
  { text: 'Total due: 1,200.00 EUR', y: 630 },
];

/** A clean one-page invoice written by pdf-lib, with Info metadata like any generator. */
export async function cleanInvoicePdf(
  lines = INVOICE_LINES,
): Promise<{ bytes: Uint8Array; pageNum: number; rootNum: number; fontKey: string; pageDict: string }> {
  const doc = await PDFDocument.create();
  doc.setProducer('pdf-lib (https://github.com/Hopding/pdf-lib)');
  doc.setCreator('Invoice Generator 3.1');
  doc.setTitle('Invoice 2026-0042');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  for (const line of lines) page.drawText(line.text, { x: 72, y: line.y, size: 12, font });
  const bytes = await doc.save({ useObjectStreams: false });
  const reloaded = await PDFDocument.load(bytes);
  const reloadedPage = reloaded.getPage(0);
  const fontDict = reloadedPage.node.Resources()!.lookup(PDFName.of('Font')) as unknown as { keys(): PDFName[] };
  const fontKey = fontDict.keys()[0]!.asString().slice(1);
  return {
    bytes,
    pageNum: reloadedPage.ref.objectNumber,
    rootNum: (reloaded.context.trailerInfo.Root as PDFRef).objectNumber,
    fontKey,
    pageDict: reloadedPage.node.toString(),
  };
}

/** A content stream that writes the lines with the given Helvetica resource name. */
export function contentFor(lines: InvoiceLine[], fontKey: string): string {
  return lines.map((line) => `BT /${fontKey} 12 Tf 1 0 0 1 72 ${line.y} Tm (${line.text}) Tj ET`).join('\n');
}

/**
 * Appends an incremental update: new or replaced objects, a cross-reference section for
 * them and a trailer pointing back at the previous one.
 */
export function appendUpdate(
  base: Uint8Array,
  objects: Array<{ num: number; body: string }>,
  rootNum: number,
  extraTrailer = '',
): Uint8Array {
  const text = Buffer.from(base).toString('latin1');
  const previousXref = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(text)![1]);
  const info = /\/Info (\d+ \d+ R)/.exec(text);
  const size = Math.max(...[...text.matchAll(/\/Size (\d+)/g)].map((m) => Number(m[1])), ...objects.map((o) => o.num + 1));
  let update = '\n';
  const offsets = new Map<number, number>();
  for (const object of objects) {
    offsets.set(object.num, base.length + Buffer.byteLength(update, 'latin1'));
    update += `${object.num} 0 obj\n${object.body}\nendobj\n`;
  }
  const xrefAt = base.length + Buffer.byteLength(update, 'latin1');
  update += 'xref\n0 1\n0000000000 65535 f \n';
  for (const [num, offset] of [...offsets].sort((a, b) => a[0] - b[0]))
    update += `${num} 1\n${String(offset).padStart(10, '0')} 00000 n \n`;
  update += `trailer\n<< /Size ${size} /Root ${rootNum} 0 R /Prev ${previousXref} ${info ? `/Info ${info[1]} ` : ''}${extraTrailer}>>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.concat([Buffer.from(base), Buffer.from(update, 'latin1')]);
}

/** The objects of a classic file as pdf-lib writes it (`n 0 obj` on its own line), by number: their bodies, streams included. */
function objectBodies(text: string): Map<number, string> {
  return new Map([...text.matchAll(/(\d+) 0 obj\n([\s\S]*?)\nendobj/g)].map((m) => [Number(m[1]), m[2]!]));
}

/**
 * The same document laid out linearised ("Fast Web View", ISO 32000-1 Annex F), as Acrobat,
 * qpdf and img2pdf write it: the linearisation dictionary first, then the first-page
 * cross-reference section and the trailer that names Root and Info, the first page's objects and a
 * hint stream, then the other objects and the main cross-reference section, whose trailer holds
 * only Size. The sections are tables, or cross-reference streams (PDF 1.5) with `xrefStreams`.
 * Written by hand because pdf-lib cannot linearise; offsets are fixed-width, so one pass fits.
 */
export function linearizedPdf(classic: Uint8Array, { xrefStreams = false } = {}): Uint8Array {
  const text = Buffer.from(classic).toString('latin1');
  const bodies = objectBodies(text);
  const rootNum = Number(/\/Root (\d+) 0 R/.exec(text)![1]);
  const infoNum = Number(/\/Info (\d+) 0 R/.exec(text)![1]);
  const pagesNum = Number(/\/Pages (\d+) 0 R/.exec(bodies.get(rootNum)!)![1]);
  const firstPageNum = Number(/\/Kids \[ (\d+) 0 R/.exec(bodies.get(pagesNum)!)![1]);
  const size = Math.max(...bodies.keys()) + 1;
  const linNum = size, hintNum = size + 1, firstXrefNum = size + 2, mainXrefNum = size + 3, total = xrefStreams ? size + 4 : size + 2;
  // The first page: the catalog, the page and what it uses; Pages and Info come after it.
  const firstPart = [rootNum, firstPageNum, ...[...bodies.keys()].filter((n) => ![rootNum, firstPageNum, pagesNum, infoNum].includes(n))];
  const lastPart = [pagesNum, infoNum];
  const hint = streamBody('\0'.repeat(16));
  const id = '<0123456789abcdef0123456789abcdef>';
  const pad = (n: number) => String(n).padStart(10, '0');
  const header = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';

  /** Writes the file with the offsets a previous pass measured (every number is fixed-width, so they hold). */
  const write = (measured: Map<string | number, number>) => {
    let out = header;
    const offsets = new Map<string | number, number>();
    const object = (num: number, body: string) => {
      offsets.set(num, out.length);
      out += `${num} 0 obj\n${body}\nendobj\n`;
    };
    const at = (key: string | number) => measured.get(key) ?? 0;
    /** A cross-reference section for `nums` (a table and its trailer, or a stream), `fields` its trailer's. */
    const section = (key: string, nums: number[], fields: string, streamNum: number) => {
      offsets.set(key, out.length);
      if (!xrefStreams) {
        out += `xref\n${nums.map((n) => `${n} 1\n${pad(at(n))} 00000 n \n`).join('')}trailer\n<< ${fields} >>\n`;
        return;
      }
      offsets.set(streamNum, out.length);
      const entries = [...nums, streamNum].sort((a, b) => a - b);
      const data = entries.map((n) => String.fromCharCode(1, ...[24, 16, 8, 0].map((shift) => (at(n) >>> shift) & 255), 0)).join('');
      out += `${streamNum} 0 obj\n<< /Type /XRef /W [ 1 4 1 ] /Index [ ${entries.map((n) => `${n} 1`).join(' ')} ] ${fields} /Length ${data.length} >>\nstream\n${data}\nendstream\nendobj\n`;
    };
    object(linNum, `<< /Linearized 1 /L ${pad(at('length'))} /H [ ${pad(at(hintNum))} ${pad(at('endOfFirstPage') - at(hintNum))} ] /O ${firstPageNum} /E ${pad(at('endOfFirstPage'))} /N 1 /T ${pad(at('main'))} >>`);
    section('first', [linNum, ...firstPart, hintNum], `/Size ${total} /Root ${rootNum} 0 R /Info ${infoNum} 0 R /Prev ${pad(at('main'))} /ID [ ${id} ${id} ]`, firstXrefNum);
    out += 'startxref\n0\n%%EOF\n';
    for (const num of firstPart) object(num, bodies.get(num)!);
    object(hintNum, hint);
    offsets.set('endOfFirstPage', out.length);
    for (const num of lastPart) object(num, bodies.get(num)!);
    section('main', lastPart, `/Size ${total}`, mainXrefNum);
    out += `startxref\n${pad(at('first'))}\n%%EOF\n`;
    offsets.set('length', out.length);
    return { out, offsets };
  };
  return Buffer.from(write(write(new Map()).offsets).out, 'latin1');
}

export type PdfCipher = 'rc4-128' | 'aes-128' | 'aes-256';

/**
 * The same document encrypted by the standard security handler (ISO 32000-2 §7.6.4), as
 * "secured" bank statements and forms come: RC4-128 (revision 3), AES-128 (revision 4) or
 * AES-256 (revision 6), with an owner password and, by default, an empty user password (the file
 * opens without one). Every string and stream is encrypted with its object's key. Written by hand
 * because pdf-lib cannot encrypt; tests check the result opens in pdf.js, an independent reader.
 */
export function encryptedPdf(classic: Uint8Array, cipher: PdfCipher, { userPassword = '', ownerPassword = 'owner' } = {}): Uint8Array {
  const text = Buffer.from(classic).toString('latin1');
  const bodies = objectBodies(text);
  const trailer = /trailer\s*<<([\s\S]*?)>>\s*startxref/.exec(text)![1]!;
  const id = randomBytes(16);
  const permissions = -3904; // printing allowed, copying and editing not: a typical "secured" statement
  const revision = cipher === 'rc4-128' ? 3 : cipher === 'aes-128' ? 4 : 6;
  const padded = (password: string) => Buffer.concat([Buffer.from(password, 'latin1'), PADDING]).subarray(0, 32);
  const permissionBytes = Buffer.alloc(4);
  permissionBytes.writeInt32LE(permissions);
  let fileKey: Buffer, entries: string;
  const hex = (bytes: Uint8Array) => `<${Buffer.from(bytes).toString('hex')}>`;
  if (revision === 6) {
    // Algorithms 8, 9 and 10.
    fileKey = randomBytes(32);
    const wrap = (key: Buffer) => {
      const c = createCipheriv('aes-256-cbc', key, Buffer.alloc(16)).setAutoPadding(false);
      return Buffer.concat([c.update(fileKey), c.final()]);
    };
    const user = Buffer.from(userPassword, 'utf8'), owner = Buffer.from(ownerPassword, 'utf8');
    const [userCheck, userKeySalt, ownerCheck, ownerKeySalt] = [randomBytes(8), randomBytes(8), randomBytes(8), randomBytes(8)];
    const u = Buffer.concat([hardenedHash(user, userCheck), userCheck, userKeySalt]);
    const o = Buffer.concat([hardenedHash(owner, ownerCheck, u), ownerCheck, ownerKeySalt]);
    const permsPlain = Buffer.concat([permissionBytes, Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.from('Tadb', 'latin1'), randomBytes(4)]);
    const permsCipher = createCipheriv('aes-256-ecb', fileKey, null).setAutoPadding(false);
    const perms = Buffer.concat([permsCipher.update(permsPlain), permsCipher.final()]);
    entries = `/V 5 /R 6 /Length 256 /CF << /StdCF << /CFM /AESV3 /AuthEvent /DocOpen /Length 32 >> >> /StmF /StdCF /StrF /StdCF /O ${hex(o)} /U ${hex(u)} /OE ${hex(wrap(hardenedHash(owner, ownerKeySalt, u)))} /UE ${hex(wrap(hardenedHash(user, userKeySalt)))} /Perms ${hex(perms)} /P ${permissions}`;
  } else {
    // Algorithm 3 (O), then the reader's own Algorithms 2 (the file key) and 5 (U): pdf.js checks them independently.
    let ownerKey = createHash('md5').update(padded(ownerPassword)).digest();
    for (let i = 0; i < 50; i++) ownerKey = createHash('md5').update(ownerKey).digest();
    let o = Buffer.from(rc4(ownerKey, padded(userPassword)));
    for (let i = 1; i <= 19; i++) o = Buffer.from(rc4(ownerKey.map((byte) => byte ^ i), o));
    fileKey = fileKeyOf(padded(userPassword), { revision, length: 16, owner: o, permissions, firstId: id, metadataInClear: false });
    const u = Buffer.concat([userEntryOf(fileKey, revision, id), randomBytes(16)]);
    const cryptFilter = revision === 4 ? '/CF << /StdCF << /CFM /AESV2 /AuthEvent /DocOpen /Length 16 >> >> /StmF /StdCF /StrF /StdCF ' : '';
    entries = `/V ${revision === 4 ? 4 : 2} /R ${revision} /Length 128 ${cryptFilter}/O ${hex(o)} /U ${hex(u)} /P ${permissions}`;
  }
  const encrypt = (data: Uint8Array, num: number): Buffer => {
    if (cipher === 'rc4-128') return Buffer.from(rc4(objectKeyOf(fileKey, num, 0, false), data));
    const key = cipher === 'aes-256' ? fileKey : objectKeyOf(fileKey, num, 0, true);
    const iv = randomBytes(16);
    const c = createCipheriv(cipher === 'aes-256' ? 'aes-256-cbc' : 'aes-128-cbc', key, iv);
    return Buffer.concat([iv, c.update(data), c.final()]);
  };
  const encryptNum = Math.max(...bodies.keys()) + 1;
  let out = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';
  const offsets = new Map<number, number>();
  for (const [num, body] of bodies) {
    const streamAt = body.indexOf('\nstream\n');
    const dict = streamAt < 0 ? body : body.slice(0, streamAt);
    let encrypted = mapStrings(dict, (bytes) => hex(encrypt(bytes, num)));
    if (streamAt >= 0) {
      const data = encrypt(Buffer.from(body.slice(streamAt + 8, body.lastIndexOf('\nendstream')), 'latin1'), num);
      encrypted = `${encrypted.replace(/\/Length \d+/, `/Length ${data.length}`)}\nstream\n${data.toString('latin1')}\nendstream`;
    }
    offsets.set(num, out.length);
    out += `${num} 0 obj\n${encrypted}\nendobj\n`;
  }
  offsets.set(encryptNum, out.length);
  out += `${encryptNum} 0 obj\n<< /Filter /Standard ${entries} >>\nendobj\n`;
  const xrefAt = out.length;
  out += `xref\n0 ${encryptNum + 1}\n0000000000 65535 f \n`;
  for (let num = 1; num <= encryptNum; num++) out += `${String(offsets.get(num) ?? 0).padStart(10, '0')} 00000 ${offsets.has(num) ? 'n' : 'f'} \n`;
  const kept = trailer.replace(/\/Size \d+/, '').trim();
  out += `trailer\n<< /Size ${encryptNum + 1} ${kept} /Encrypt ${encryptNum} 0 R /ID [ ${hex(id)} ${hex(id)} ] >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** `source` (PDF object syntax) with every literal or hex string replaced by `replace(its bytes)` (§7.3.4). */
function mapStrings(source: string, replace: (bytes: Buffer) => string): string {
  let out = '';
  for (let i = 0; i < source.length; ) {
    const char = source[i]!;
    if (char === '<' && source[i + 1] !== '<') {
      const end = source.indexOf('>', i);
      out += replace(Buffer.from(source.slice(i + 1, end).replace(/\s/g, ''), 'hex'));
      i = end + 1;
    } else if (char === '<' || char === '>') {
      out += source.slice(i, i + 2);
      i += 2;
    } else if (char === '(') {
      const bytes: number[] = [];
      let depth = 1;
      for (i++; depth > 0; i++) {
        const c = source[i]!;
        if (c === '\\') {
          const next = source[++i]!;
          const octal = /^[0-7]{1,3}/.exec(source.slice(i, i + 3));
          if (octal) {
            bytes.push(parseInt(octal[0], 8) & 255);
            i += octal[0].length - 1;
          } else bytes.push(({ n: 10, r: 13, t: 9, b: 8, f: 12 } as Record<string, number>)[next] ?? next.charCodeAt(0));
          continue;
        }
        if (c === '(') depth++;
        if (c === ')' && --depth === 0) break;
        bytes.push(c.charCodeAt(0));
      }
      i++;
      out += replace(Buffer.from(bytes));
    } else {
      out += char;
      i++;
    }
  }
  return out;
}

/** A stream object body with the given content. */
export const streamBody = (content: string, extra = '') =>
  `<< /Length ${Buffer.byteLength(content, 'latin1')} ${extra}>>\nstream\n${content}\nendstream`;

/**
 * Deterministic pseudo-random numbers so generated scans are reproducible: a linear
 * congruential generator (Numerical Recipes' constants). Not the shared Mulberry32 of
 * detectors/signal/seeded-random.ts: the generated document sets behind the README's document
 * figures were drawn from this one, and a seed must keep giving the same documents.
 */
export function lcgRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Renders text lines to an RGB page (white paper, dark ink) at the given size. */
async function renderLines(
  lines: Array<{ text: string; x: number; y: number; size: number }>,
  width: number,
  height: number,
): Promise<Buffer> {
  const body = lines
    .map((l) => `<text x="${l.x}" y="${l.y}" font-family="DejaVu Sans" font-size="${l.size}" fill="#1a1a1a">${escapeXml(l.text)}</text>`)
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#ffffff"/>${body}</svg>`;
  return sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer();
}

export const SCAN_LINES = [
  'ACME Supplies Ltd',
  'Invoice no. 2026-0042',
  'Date: 12 March 2026',
  'Office chairs 4 x 150.00 EUR',
  'Desk lamps 6 x 100.00 EUR',
  'Shipping and handling 35.00 EUR',
  'Subtotal 1,235.00 EUR',
  'VAT 20% 247.00 EUR',
  'Total due 1,482.00 EUR',
  'Payable within 30 days to',
  'IBAN DE44 5001 0517 5407 3249 31',
];

export interface ScanOptions {
  seed: number;
  texts?: string[];
  width?: number;
  format?: 'jpeg' | 'png';
  quality?: number;
  /** Scanner optics (Gaussian sigma, pixels at 1240 wide) and sensor noise (grey levels). */
  blur?: number;
  noise?: number;
  /**
   * Replace one line after scanning with re-typed text. A careless forger pastes clean text;
   * a careful one blurs and adds noise to the patch (`blur`, `noise`) to match the page.
   */
  forge?: { line: number; text: string; blur?: number; noise?: number };
}

/**
 * A "scanned" invoice: rendered text, blurred like a scanner's optics, with sensor noise and
 * a paper tone, saved as JPEG (or PNG). With `forge`, one line is afterwards painted over
 * with re-typed text and the page saved again: the re-typing edit of a scan.
 */
export async function scannedInvoice(options: ScanOptions): Promise<Buffer> {
  const width = options.width ?? 1240;
  const height = Math.round(width * 1.1);
  const scale = width / 1240;
  const random = lcgRandom(options.seed);
  const texts = options.texts ?? SCAN_LINES;
  const size = Math.round(34 * scale);
  const lines = texts.map((text, i) => ({ text, x: Math.round(110 * scale), y: Math.round((150 + i * 95) * scale), size }));
  const rendered = await renderLines(lines, width, height);
  const noisy = async (pixels: Buffer, w: number, h: number, blur: number, noise: number) => {
    const blurred =
      blur > 0.3
        ? await sharp(pixels, { raw: { width: w, height: h, channels: 3 } })
            .blur(blur * scale)
            .raw()
            .toBuffer()
        : pixels;
    const out = Buffer.alloc(blurred.length);
    for (let i = 0; i < blurred.length; i++) {
      const n = (random() + random() + random() - 1.5) * noise;
      out[i] = Math.max(0, Math.min(255, Math.round(blurred[i]! * 0.93 + 8 + n)));
    }
    return out;
  };
  const page = await noisy(rendered, width, height, options.blur ?? 1.1, options.noise ?? 9);
  const encode = (image: Sharp) => (options.format === 'png' ? image.png() : image.jpeg({ quality: options.quality ?? 88 }));
  let scan = await encode(sharp(page, { raw: { width, height, channels: 3 } })).toBuffer();
  if (options.forge) {
    const target = lines[options.forge.line]!;
    const patchWidth = Math.round(width - target.x - 40 * scale);
    const patchHeight = Math.round(target.size * 1.5);
    const patchTop = target.y - Math.round(target.size * 1.1);
    const typed = await renderLines(
      [{ text: options.forge.text, x: 0, y: Math.round(target.size * 1.1), size: target.size }],
      patchWidth,
      patchHeight,
    );
    const patchPixels = await noisy(typed, patchWidth, patchHeight, options.forge.blur ?? 0, options.forge.noise ?? 0);
    const patch = await sharp(patchPixels, { raw: { width: patchWidth, height: patchHeight, channels: 3 } })
      .png()
      .toBuffer();
    scan = await encode(sharp(scan).composite([{ input: patch, left: target.x, top: patchTop }])).toBuffer();
  }
  return scan;
}

/**
 * A scanned invoice as a PDF: the JPEG as the page, with an invisible OCR text layer
 * (render mode 3) over it, as scanners and OCR tools write them. `layer` is the text of
 * the layer, one entry per line of `scannedInvoice` (a doctored layer differs from the image).
 */
export async function scannedInvoicePdf(jpeg: Buffer, layer: string[], width = 1240): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setProducer('Scanner Suite 2.0');
  const image = await doc.embedJpg(jpeg);
  const scale = 595 / image.width;
  const height = image.height * scale;
  const page = doc.addPage([595, height]);
  page.drawImage(image, { x: 0, y: 0, width: 595, height });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const key = page.node.newFontDictionary(font.name, font.ref);
  const unit = (image.width / width) * scale; // PDF points per pixel of the 1240-wide layout
  layer.forEach((text, i) =>
    page.pushOperators(
      beginText(),
      setFontAndSize(key, 34 * unit),
      setTextRenderingMode(TextRenderingMode.Invisible),
      moveText(110 * unit, height - (150 + i * 95) * unit),
      showText(font.encodeText(text)),
      endText(),
    ),
  );
  return doc.save();
}
