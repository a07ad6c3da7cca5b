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
