/**
 * `node --import tsx src/eval/document-generate.ts --out <folder> [--count 8] [--seed 1]`
 *
 * Writes a labelled set of generated document cases (labels.csv: `file,label`, 1 = forged)
 * for `npm run eval -- --task document-intelligence --data <folder>`:
 *
 * - clean invoices (pdf-lib), and clean invoices with benign updates (a re-save that only
 *   touches metadata, a reviewer's comment annotation)                                   → 0
 * - invoices whose amount a later revision replaced                                      → 1
 * - invoices whose amount was whited out and re-typed in the same save                  → 1
 * - clean invoices linearised (0) and with an amount replaced by a revision (1); clean (0) and
 *   whited-out (1) invoices encrypted with an owner password only (RC4-128, AES-128, AES-256)
 * - scanned invoices (JPEG and PNG)                                                       → 0
 * - scanned invoices with one line re-typed: pasted clean, or blurred and noised to match → 1
 * - scanned invoices as PDFs with an OCR text layer (0), and with only that layer edited (1)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';
import {
  SCAN_LINES,
  appendUpdate,
  cleanInvoicePdf,
  contentFor,
  encryptedPdf,
  linearizedPdf,
  scannedInvoice,
  scannedInvoicePdf,
  lcgRandom,
  streamBody,
  type InvoiceLine,
  type PdfCipher,
} from './document-cases.js';

const CIPHERS: PdfCipher[] = ['rc4-128', 'aes-128', 'aes-256'];

const SELLERS = [
  'ACME Supplies Ltd',
  'Nordwind Logistics GmbH',
  'Blue Harbor Consulting',
  'Kowalski & Sons',
  'Helios Print Studio',
  'Atlas Office Wholesale',
];
const ITEMS = [
  'Office chairs',
  'Desk lamps',
  'Printer paper',
  'Consulting hours',
  'Server rack rental',
  'Freight charges',
  'Toner cartridges',
  'Training day',
];

const money = (value: number) => value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

function invoiceLines(random: () => number): { lines: InvoiceLine[]; totalIndex: number } {
  const lines: InvoiceLine[] = [
    { text: SELLERS[Math.floor(random() * SELLERS.length)]!, y: 770 },
    { text: `Invoice ${2026}-${String(Math.floor(random() * 9000) + 1000)}`, y: 740 },
  ];
  let total = 0;
  const count = 2 + Math.floor(random() * 4);
  for (let i = 0; i < count; i++) {
    const quantity = 1 + Math.floor(random() * 9);
    const price = Math.round(random() * 40000) / 100 + 5;
    total += quantity * price;
    lines.push({ text: `${ITEMS[Math.floor(random() * ITEMS.length)]} ${quantity} x ${money(price)}`, y: 700 - i * 20 });
  }
  lines.push({ text: `Total due: ${money(total)} EUR`, y: 700 - count * 20 - 30 });
  lines.push({ text: 'Payable within 30 days.', y: 700 - count * 20 - 60 });
  return { lines, totalIndex: lines.length - 2 };
}

async function whiteoutInvoice(lines: InvoiceLine[], index: number, replacement: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setProducer('pdf-lib (https://github.com/Hopding/pdf-lib)');
  doc.setCreator('Invoice Generator 3.1');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  for (const line of lines) page.drawText(line.text, { x: 72, y: line.y, size: 12, font });
  const target = lines[index]!;
  page.drawRectangle({ x: 70, y: target.y - 4, width: 230, height: 17, color: rgb(1, 1, 1) });
  page.drawText(replacement, { x: 72, y: target.y, size: 12, font });
  return doc.save({ useObjectStreams: false });
}

async function main() {
  const options = new Command()
    .requiredOption('--out <folder>', 'folder to write the cases and labels.csv into')
    .option('--count <n>', 'cases per kind', '8')
    .option('--seed <n>', 'random seed', '1')
    .parse()
    .opts<{ out: string; count: string; seed: string }>();
  const out = resolve(options.out);
  const count = Number(options.count);
  const random = lcgRandom(Number(options.seed));
  await mkdir(out, { recursive: true });
  const labels: string[] = ['file,label'];
  const write = async (file: string, bytes: Uint8Array, label: 0 | 1) => {
    await writeFile(join(out, file), bytes);
    labels.push(`${file},${label}`);
  };

  for (let i = 0; i < count; i++) {
    const id = String(i + 1).padStart(2, '0');
    const { lines, totalIndex } = invoiceLines(random);
    const base = await cleanInvoicePdf(lines);
    await write(`pdf-clean-${id}.pdf`, base.bytes, 0);

    // Benign: a later save that only updates the Info dictionary, or adds a comment.
    const infoNum = Number(/\/Info (\d+) 0 R/.exec(Buffer.from(base.bytes).toString('latin1'))?.[1] ?? 0);
    const benign =
      i % 2 === 0 && infoNum
        ? appendUpdate(
            base.bytes,
            [{ num: infoNum, body: '<< /Producer (pdf-lib) /ModDate (D:20260402093000Z) /CreationDate (D:20260401120000Z) >>' }],
            base.rootNum,
          )
        : appendUpdate(
            base.bytes,
            [
              { num: 80, body: '<< /Type /Annot /Subtype /Text /Rect [500 780 520 800] /Contents (Checked, please pay) /T (Accounts) >>' },
              { num: base.pageNum, body: base.pageDict.replace(/\/Annots\s*\[[^\]]*\]/, '/Annots [80 0 R]') },
            ],
            base.rootNum,
          );
    await write(`pdf-benign-update-${id}.pdf`, benign, 0);

    // Forged: a revision replaces the total (what an editor's incremental save does).
    const forgedTotal = lines.map((line, index) =>
      index === totalIndex
        ? { ...line, text: line.text.replace(/[\d,]+\.\d\d/, (m) => money(Number(m.replace(/,/g, '')) * (2 + Math.floor(random() * 8)))) }
        : line,
    );
    const revised = appendUpdate(
      base.bytes,
      [
        { num: 90, body: streamBody(contentFor(forgedTotal, base.fontKey)) },
        { num: base.pageNum, body: base.pageDict.replace(/\/Contents\s*\[[^\]]*\]/, '/Contents 90 0 R') },
      ],
      base.rootNum,
    );
    await write(`pdf-revised-amount-${id}.pdf`, revised, 1);

    // Forged in one save: the amount whited out and re-typed over it (a PDF editor's "edit text").
    const whiteout = await whiteoutInvoice(lines, totalIndex, forgedTotal[totalIndex]!.text);
    await write(`pdf-whiteout-${id}.pdf`, whiteout, 1);

    // The same documents as they are often sent: linearised for the web ("Fast Web View"), and
    // secured with an owner password only (opens without one). No random draws: the other cases stay as they were.
    const linearized = linearizedPdf(base.bytes, { xrefStreams: i % 2 === 1 });
    await write(`pdf-web-clean-${id}.pdf`, linearized, 0);
    const webRevised = appendUpdate(
      linearized,
      [
        { num: 90, body: streamBody(contentFor(forgedTotal, base.fontKey)) },
        { num: base.pageNum, body: base.pageDict.replace(/\/Contents\s*\[[^\]]*\]/, '/Contents 90 0 R') },
      ],
      base.rootNum,
    );
    await write(`pdf-web-revised-amount-${id}.pdf`, webRevised, 1);
    const cipher = CIPHERS[i % CIPHERS.length]!;
    await write(`pdf-secured-clean-${id}.pdf`, encryptedPdf(base.bytes, cipher), 0);
    await write(`pdf-secured-whiteout-${id}.pdf`, encryptedPdf(whiteout, cipher), 1);

    // Scans: clean, and with the total re-typed (alternately careless and careful forger).
    const texts = [...SCAN_LINES];
    const seed = Math.floor(random() * 1e9);
    const format = i % 3 === 2 ? 'png' : 'jpeg';
    const scanOptions = {
      seed,
      texts,
      format: format as 'png' | 'jpeg',
      quality: 80 + Math.floor(random() * 15),
      blur: 0.9 + random() * 0.6,
      noise: 5 + random() * 8,
    };
    const extension = format === 'png' ? 'png' : 'jpg';
    await write(`scan-clean-${id}.${extension}`, await scannedInvoice(scanOptions), 0);
    const line = 3 + Math.floor(random() * 6);
    const retyped = texts[line]!.replace(/\d[\d,]*\.\d\d/, (m) => money(Number(m.replace(/,/g, '')) * 7));
    const careful = i % 2 === 1;
    await write(
      `scan-retyped-${careful ? 'careful' : 'pasted'}-${id}.${extension}`,
      await scannedInvoice({ ...scanOptions, forge: { line, text: retyped, ...(careful && { blur: 0.6, noise: 3 }) } }),
      1,
    );

    // Scanned PDFs: the JPEG under an invisible OCR layer; forged by editing the layer only.
    if (format === 'jpeg') {
      const image = await scannedInvoice(scanOptions);
      await write(`scanpdf-clean-${id}.pdf`, await scannedInvoicePdf(image, texts), 0);
      const layer = texts.map((text, index) => (index === line ? retyped : text));
      await write(`scanpdf-layer-edited-${id}.pdf`, await scannedInvoicePdf(image, layer), 1);
    }
  }
  await writeFile(join(out, 'labels.csv'), `${labels.join('\n')}\n`);
  console.log(`wrote ${labels.length - 1} cases to ${out}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
