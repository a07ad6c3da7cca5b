/**
 * `node --import tsx bench/document-throughput.ts [--seconds 40]`
 *
 * document-intelligence throughput in one detector thread, on generated documents: a
 * one-page invoice PDF (structure only, and with OCR of the rendering against the text
 * layer), a 30-page PDF with an incremental update (structure only), and a scanned
 * 1240x1364 JPEG invoice (OCR + text-region consistency + the image-forgery pipeline).
 * Prints the one-off load time, documents per second, milliseconds per document (wall and
 * CPU of the whole process, which includes tesseract's own thread) and peak RSS.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import detector from '../server/src/detectors/document/document-intelligence.js';
import { terminateOcr } from '../server/src/detectors/document/ocr.js';
import { INVOICE_LINES, appendUpdate, cleanInvoicePdf, contentFor, scannedInvoice, streamBody } from '../server/src/eval/document-cases.js';
import { numberOption } from './measure.js';

const seconds = numberOption('seconds', 40);
const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
let peakRss = 0;

async function longPdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setProducer('pdf-lib');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < pages; p++) {
    const page = doc.addPage([595, 842]);
    for (let line = 0; line < 45; line++)
      page.drawText(`Page ${p + 1} line ${line + 1}: quantity ${line * 3} at ${(line * 17.5).toFixed(2)} EUR`, {
        x: 50,
        y: 800 - line * 17,
        size: 10,
        font,
      });
  }
  return doc.save({ useObjectStreams: false });
}

async function measure(label: string, dir: string, file: string, bytes: Uint8Array, parameters: Record<string, unknown>) {
  const path = join(dir, file);
  await writeFile(path, bytes);
  const input = {
    jobId: 'bench',
    taskTypeSlug: 'document-intelligence',
    parameters,
    workDir: dir,
    modelsDir: null,
    files: [
      {
        slotName: 'original',
        contentType: file.endsWith('.pdf') ? 'application/pdf' : 'image/jpeg',
        fileName: file,
        sizeBytes: bytes.length,
        path,
      },
    ],
  };
  await detector.analyze(input, new AbortController().signal); // warm-up
  let count = 0;
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  while (performance.now() - started < (seconds * 1000) / 4 || count < 2) {
    await detector.analyze(input, new AbortController().signal);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    count++;
  }
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const cpuMs = (cpu.user + cpu.system) / 1000 / count;
  console.log(
    `${label.padEnd(52)} ${(count / elapsed).toFixed(2)} docs/s  ${((1000 * elapsed) / count).toFixed(0)} ms/doc wall  ${cpuMs.toFixed(0)} ms/doc CPU  (${count} runs)`,
  );
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-bench-doc-'));
  try {
    const loadStart = performance.now();
    await detector.load();
    console.log(`load (tesseract engine + English model, pdf.js, image-forgery module): ${(performance.now() - loadStart).toFixed(0)} ms`);
    const invoice = await cleanInvoicePdf();
    await measure('1-page invoice PDF, structure only', dir, 'invoice.pdf', invoice.bytes, { ocr: false });
    await measure('1-page invoice PDF, + OCR vs text layer', dir, 'invoice.pdf', invoice.bytes, {});
    const long = await longPdf(30);
    const longText = Buffer.from(long).toString('latin1');
    const rootNum = Number(/\/Root (\d+) 0 R/.exec(longText)![1]);
    const updated = appendUpdate(long, [{ num: 5000, body: streamBody(contentFor(INVOICE_LINES, 'F0')) }], rootNum);
    await measure('30-page PDF with an update, structure only', dir, 'long.pdf', updated, { ocr: false });
    await measure('scanned invoice JPEG 1240x1364', dir, 'scan.jpg', await scannedInvoice({ seed: 1 }), {});
    console.log(`peak RSS ${mib(peakRss)} MiB`);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await terminateOcr();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
