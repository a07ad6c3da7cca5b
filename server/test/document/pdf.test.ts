import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import {
  PDFDocument,
  PDFName,
  PDFString,
  StandardFonts,
  TextRenderingMode,
  beginText,
  endText,
  moveText,
  setFontAndSize,
  setTextRenderingMode,
  showText,
} from 'pdf-lib';
import { MediaError } from '../../src/detectors/types.js';
import { terminateOcr } from '../../src/detectors/document/ocr.js';
import { INVOICE_LINES, analyzeBytes, appendUpdate, cleanInvoicePdf, contentFor, encryptedPdf, findingsOf, linearizedPdf, streamBody } from './fixtures.js';
import type { DetectorOutput } from '../../src/detectors/types.js';

after(() => terminateOcr());

const NO_OCR = { ocr: false };

test('a clean generated invoice is authentic with no significant findings', async () => {
  const { bytes } = await cleanInvoicePdf();
  const output = await analyzeBytes(bytes, 'invoice.pdf', NO_OCR);
  const findings = findingsOf(output);
  assert.equal(output.result.verdict, 'authentic');
  assert.equal(output.result.isForged, false);
  assert.ok((output.result.score as number) < 0.2);
  assert.deepEqual(
    findings.filter((f) => f.severity === 'high' || f.severity === 'medium'),
    [],
  );
  assert.match(output.result.summary as string, /No sign of tampering/);
});

test('object streams and cross-reference streams (PDF 1.5) are read like classic files', async () => {
  const doc = await PDFDocument.create();
  doc.setProducer('pdf-lib');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < 3; i++) doc.addPage([595, 842]).drawText(`Page ${i + 1} total 1,200.00 EUR`, { x: 72, y: 700, size: 12, font });
  const bytes = await doc.save({ useObjectStreams: true });
  assert.match(Buffer.from(bytes).toString('latin1'), /\/ObjStm/);
  const output = await analyzeBytes(bytes, 'compressed.pdf', NO_OCR);
  const pages = (output.result.analysisDetails as { pages: Array<{ visibleCharacters: number }> }).pages;
  assert.equal(pages.length, 3);
  assert.ok(pages.every((page) => page.visibleCharacters > 20));
  assert.equal(output.result.verdict, 'authentic');
});

/** The amount replaced by an incremental update of `bytes` (the clean invoice `base`, as it is or laid out otherwise), checked as found. */
async function assertAmountUpdateFlagged(base: Awaited<ReturnType<typeof cleanInvoicePdf>>, bytes: Uint8Array) {
  const forgedLines = INVOICE_LINES.map((line) => (line.text.startsWith('Total') ? { ...line, text: 'Total due: 9,200.00 EUR' } : line));
  const newContent = 50;
  const pageDict = base.pageDict.replace(/\/Contents\s*\[[^\]]*\]/, `/Contents ${newContent} 0 R`);
  const forged = appendUpdate(
    bytes,
    [
      { num: newContent, body: streamBody(contentFor(forgedLines, base.fontKey)) },
      { num: base.pageNum, body: pageDict },
    ],
    base.rootNum,
  );
  const output = await analyzeBytes(forged, 'invoice-edited.pdf', NO_OCR);
  const findings = findingsOf(output);
  const replaced = findings.find((f) => f.type === 'revision-text-replaced');
  assert.ok(replaced, `expected a revision-text-replaced finding, got ${JSON.stringify(findings)}`);
  assert.equal(replaced.severity, 'high');
  assert.equal(replaced.revision, 2);
  assert.equal(replaced.page, 1);
  assert.match(replaced.evidence, /1,200\.00.*9,200\.00/);
  // The box sits on the total line: 842 - 630 = 212 pt from the top.
  assert.ok(replaced.box && Math.abs(replaced.box.y + replaced.box.height - 212) < 8, JSON.stringify(replaced.box));
  assert.equal(output.result.verdict, 'manipulated');
  assert.equal(output.result.isForged, true);
  // Unchanged lines are not reported.
  assert.equal(findings.filter((f) => f.type.startsWith('revision-text')).length, 1);
  const heatmap = output.artifacts?.find((a) => a.name === 'page-1-heatmap.png');
  assert.ok(heatmap && heatmap.kind === 'heatmap' && heatmap.data.length > 1000);
  const revisions = (output.result.analysisDetails as { revisions: unknown[] }).revisions;
  assert.equal(revisions.length, 2);
}

test('an incremental update that replaces the amount is flagged with its revision and location', async () => {
  const base = await cleanInvoicePdf();
  await assertAmountUpdateFlagged(base, base.bytes);
});

test('a linearised document (Fast Web View) is read whole, with table or stream cross-references, and an update to it is flagged', async () => {
  // Its last trailer may hold only Size: Root and Info are named by the first-page trailer (Annex F).
  // Acrobat, qpdf and img2pdf write such files; they failed as "broken PDF" before.
  const base = await cleanInvoicePdf();
  for (const xrefStreams of [false, true]) {
    const linearized = linearizedPdf(base.bytes, { xrefStreams });
    assert.doesNotMatch(Buffer.from(linearized).toString('latin1').split('%%EOF')[1]!, /\/Root/);
    const output = await analyzeBytes(linearized, 'invoice-web.pdf', NO_OCR);
    const details = output.result.analysisDetails as { pages: Array<{ visibleCharacters: number }>; revisions: unknown[] };
    assert.equal(output.result.verdict, 'authentic', JSON.stringify(findingsOf(output)));
    assert.equal(details.pages.length, 1);
    assert.ok(details.pages[0]!.visibleCharacters > 20);
    // One revision: the first-page section's %%EOF is not an update, and its hint stream (named by offset) is no orphan.
    assert.equal(details.revisions.length, 1);
    assert.deepEqual(findingsOf(output).map((f) => f.type), []);
    await assertAmountUpdateFlagged(base, linearized);
  }
});

test('an update after a signature is flagged as modified-after-signature', async () => {
  const base = await cleanInvoicePdf();
  // Revision 2: a signature dictionary whose ByteRange covers exactly revision 1 + 2.
  const placeholder = '0'.repeat(64);
  const sigNum = 60;
  const withSignature = (() => {
    let range = '[0 0000000000 0000000000 0000000000]';
    for (let pass = 0; pass < 2; pass++) {
      const bytes = appendUpdate(
        base.bytes,
        [
          {
            num: sigNum,
            body: `<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /adbe.pkcs7.detached /Name (Test Signer) /M (D:20260301120000Z) /ByteRange ${range} /Contents <${placeholder}> >>`,
          },
        ],
        base.rootNum,
      );
      const text = Buffer.from(bytes).toString('latin1');
      const start = text.lastIndexOf(`<${placeholder}>`);
      const end = start + placeholder.length + 2;
      const pad = (n: number) => String(n).padStart(10, '0');
      const next = `[0 ${pad(start)} ${pad(end)} ${pad(bytes.length - end)}]`;
      if (next === range) return bytes;
      range = next;
    }
    throw new Error('byte range did not converge');
  })();
  const forgedLines = INVOICE_LINES.map((line) => (line.text.startsWith('Total') ? { ...line, text: 'Total due: 120.00 EUR' } : line));
  const pageDict = base.pageDict.replace(/\/Contents\s*\[[^\]]*\]/, '/Contents 61 0 R');
  const attacked = appendUpdate(
    withSignature,
    [
      { num: 61, body: streamBody(contentFor(forgedLines, base.fontKey)) },
      { num: base.pageNum, body: pageDict },
    ],
    base.rootNum,
  );

  const signedOnly = findingsOf(await analyzeBytes(withSignature, 'signed.pdf', NO_OCR));
  assert.ok(
    signedOnly.some((f) => f.type === 'signature-present'),
    JSON.stringify(signedOnly),
  );
  assert.ok(!signedOnly.some((f) => f.type === 'modified-after-signature'));

  const output = await analyzeBytes(attacked, 'signed-then-edited.pdf', NO_OCR);
  const findings = findingsOf(output);
  const afterSignature = findings.find((f) => f.type === 'modified-after-signature');
  assert.ok(afterSignature, JSON.stringify(findings));
  assert.equal(afterSignature.severity, 'high');
  assert.equal(afterSignature.revision, 3);
  assert.equal(output.result.verdict, 'manipulated');
});

/** A statement with a JavaScript open action and an amount in invisible text. */
async function statementWithHiddenAmount(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setProducer('pdf-lib');
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page.drawText('Quarterly statement', { x: 72, y: 760, size: 14, font });
  doc.catalog.set(
    PDFName.of('OpenAction'),
    doc.context.obj({ S: 'JavaScript', JS: PDFString.of('app.launchURL("http://example.invalid/")') }),
  );
  // Text a reader never sees (render mode 3) that parsers and search still read.
  const key = page.node.newFontDictionary(font.name, font.ref);
  page.pushOperators(
    beginText(),
    setFontAndSize(key, 12),
    setTextRenderingMode(TextRenderingMode.Invisible),
    moveText(72, 500),
    showText(font.encodeText('Real amount 10,000.00')),
    endText(),
  );
  return doc.save({ useObjectStreams: false });
}

function assertHiddenAmountFound(output: DetectorOutput) {
  const findings = findingsOf(output);
  const javascript = findings.find((f) => f.type === 'javascript');
  assert.ok(javascript && javascript.severity === 'high', JSON.stringify(findings));
  assert.match(javascript.evidence, /launchURL/);
  const invisible = findings.find((f) => f.type === 'invisible-text');
  assert.ok(invisible && invisible.page === 1 && /10,000/.test(invisible.evidence), JSON.stringify(findings));
  assert.equal(output.result.isForged, true);
}

test('a JavaScript open action and invisible text are reported', async () => {
  assertHiddenAmountFound(await analyzeBytes(await statementWithHiddenAmount(), 'statement.pdf', NO_OCR));
});

/** The text of page 1 as pdf.js, an independent reader, reads it (with `password` when one is given). */
async function textByPdfJs(bytes: Uint8Array, password?: string): Promise<string> {
  const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const pdf = await getDocument({ data: new Uint8Array(bytes), password, isEvalSupported: false, verbosity: 0 }).promise;
  try {
    const content = await (await pdf.getPage(1)).getTextContent();
    return content.items.map((item) => ('str' in item ? item.str : '')).join(' ');
  } finally {
    await pdf.destroy();
  }
}

test('a PDF secured with an owner password only (RC4-128, AES-128, AES-256) is decrypted and examined in full', async () => {
  // Bank statements and forms often come so: every viewer opens them without a password. Before,
  // such a file was `inconclusive`, its pages unread, and its metadata reported as ciphertext.
  const base = await cleanInvoicePdf();
  const statement = await statementWithHiddenAmount();
  for (const cipher of ['rc4-128', 'aes-128', 'aes-256'] as const) {
    const clean = encryptedPdf(base.bytes, cipher);
    assert.doesNotMatch(Buffer.from(clean).toString('latin1'), /Invoice Generator|Total due/);
    assert.match(await textByPdfJs(clean), /Total due: 1,200\.00 EUR/);
    const output = await analyzeBytes(clean, 'secured-invoice.pdf', NO_OCR);
    const details = output.result.analysisDetails as { pages: Array<{ visibleCharacters: number }>; metadata: Record<string, string>; encryption: string };
    assert.equal(output.result.verdict, 'authentic', `${cipher}: ${JSON.stringify(findingsOf(output))}`);
    assert.ok(details.pages[0]!.visibleCharacters > 20);
    assert.equal(details.metadata.creator, 'Invoice Generator 3.1');
    assert.match(details.encryption, cipher === 'rc4-128' ? /^RC4, .*revision 3$/ : cipher === 'aes-128' ? /^AES-128, .*revision 4$/ : /^AES-256, .*revision 6$/);
    assert.match(findingsOf(output).find((f) => f.type === 'encrypted')!.evidence, /opens without a password.*examined in full/);
    // What was hidden under the encryption is found through it.
    assertHiddenAmountFound(await analyzeBytes(encryptedPdf(statement, cipher), 'secured-statement.pdf', NO_OCR));
  }
});

test('a PDF that needs a password to open is inconclusive, saying so, with no ciphertext reported as metadata', async () => {
  const base = await cleanInvoicePdf();
  const locked = encryptedPdf(base.bytes, 'aes-256', { userPassword: 'secret' });
  // A well-formed file: pdf.js reads it with the password.
  assert.match(await textByPdfJs(locked, 'secret'), /Total due/);
  const output = await analyzeBytes(locked, 'locked.pdf', NO_OCR);
  assert.equal(output.result.verdict, 'inconclusive');
  assert.match(findingsOf(output).find((f) => f.type === 'encrypted')!.evidence, /needs a password to open/);
  assert.deepEqual((output.result.analysisDetails as { metadata: object }).metadata, {});
});

test('a decompression bomb fails quickly with a MediaError', async () => {
  const bomb = deflateSync(Buffer.alloc(80 * 1024 * 1024, 0x20), { level: 9 });
  const header = Buffer.from(
    '%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>\nendobj\n',
    'latin1',
  );
  const stream = Buffer.concat([
    Buffer.from(`4 0 obj\n<< /Length ${bomb.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'),
    bomb,
    Buffer.from('\nendstream\nendobj\n', 'latin1'),
  ]);
  const trailer = Buffer.from('trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n0\n%%EOF\n', 'latin1');
  const started = performance.now();
  await assert.rejects(
    analyzeBytes(Buffer.concat([header, stream, trailer]), 'bomb.pdf', NO_OCR),
    (error: Error) => error instanceof MediaError && /decompression bomb/.test(error.message),
  );
  assert.ok(performance.now() - started < 15_000);
});

test('broken and hostile files fail with a clear MediaError', async () => {
  await assert.rejects(
    analyzeBytes(Buffer.from('%PDF-1.7\nthis is not really a pdf\n%%EOF\n'), 'broken.pdf', NO_OCR),
    (error: Error) => error instanceof MediaError && /broken PDF/.test(error.message),
  );
  await assert.rejects(
    analyzeBytes(Buffer.from(`%PDF-1.7\n1 0 obj\n${'['.repeat(200_000)}\nendobj\n%%EOF\n`), 'nested.pdf', NO_OCR),
    (error: Error) => error instanceof MediaError && /nested deeper/.test(error.message),
  );
  await assert.rejects(
    analyzeBytes(Buffer.from('GIF89a not a document'), 'file.pdf', NO_OCR),
    (error: Error) => error instanceof MediaError && /expected a PDF, JPEG or PNG/.test(error.message),
  );
  // Cut short before its cross-reference section: said so, not "no catalog".
  const { bytes } = await cleanInvoicePdf();
  await assert.rejects(
    analyzeBytes(bytes.subarray(0, 700), 'truncated.pdf', NO_OCR),
    (error: Error) => error instanceof MediaError && /no trailer or cross-reference stream was found \(is the file truncated\?\)/.test(error.message),
  );
  // A cross-reference table pointing nowhere: the objects are still found and analysed.
  const text = Buffer.from(bytes)
    .toString('latin1')
    .replace(/startxref\s+\d+/, 'startxref\n999999');
  const output = await analyzeBytes(Buffer.from(text, 'latin1'), 'bad-xref.pdf', NO_OCR);
  assert.notEqual(output.result.verdict, 'manipulated');
});

test('a statement printed by a browser, its dates split mid-word and its amounts set apart from their currency, is not taken for a doctored text layer', async () => {
  // Browsers' PDF printing splits "2026-11-01" into "2026-1" and "1-01" at a kerned pair, and
  // sets an amount apart from its currency; OCR reads whole words and lines. Each such piece was
  // compared with the whole word or line, and every such statement was called manipulated.
  const doc = await PDFDocument.create();
  doc.setProducer('Skia/PDF m156');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  const size = 11;
  page.drawText('First Example Bank plc: statement for account 87654321', { x: 60, y: 780, size: 13, font });
  const rows = [
    ['2026-11-01', 'Card payment TESCO', '-42.10', '2,457.90'],
    ['2026-11-03', 'Transfer from J DOE', '300.00', '2,757.90'],
    ['2026-11-11', 'Direct debit EDF', '-81.25', '2,676.65'],
    ['2026-11-14', 'Salary ACME LTD', '1,900.00', '4,576.65'],
    ['2026-11-21', 'ATM withdrawal', '-100.00', '4,476.65'],
  ];
  rows.forEach((cells, index) => {
    const y = 740 - index * 22;
    let x = 60;
    // The date in two pieces that touch, as a browser prints it.
    for (const piece of [cells[0]!.slice(0, 6), cells[0]!.slice(6)]) {
      page.drawText(piece, { x, y, size, font });
      x += font.widthOfTextAtSize(piece, size);
    }
    // Table cells 24 pt apart, and each amount after its currency as a separate piece.
    for (const cell of [cells[1]!, 'GBP', ` ${cells[2]!}`, 'GBP', ` ${cells[3]!}`]) {
      x += cell.startsWith(' ') ? 0 : 24;
      page.drawText(cell, { x, y, size, font });
      x += font.widthOfTextAtSize(cell, size);
    }
  });
  const output = await analyzeBytes(await doc.save({ useObjectStreams: false }), 'statement-printed.pdf');
  const checks = (output.result.analysisDetails as { checks: string[] }).checks;
  assert.ok(checks.some((check) => /^OCR vs text layer \(1 page, \d+ runs\)$/.test(check)), JSON.stringify(checks));
  assert.deepEqual(findingsOf(output).filter((f) => f.type === 'text-layer-mismatch'), []);
  assert.equal(output.result.verdict, 'authentic');
});

test('the rendered page is compared with the text layer (OCR)', async () => {
  // A font whose ToUnicode map makes copy/paste and parsers read "9" where the page shows "1".
  const base = await cleanInvoicePdf();
  const cmap = [
    '/CIDInit /ProcSet findresource begin 12 dict begin begincmap',
    '1 begincodespacerange <00> <FF> endcodespacerange',
    '2 beginbfrange <20> <30> <0020> <32> <7E> <0032> endbfrange',
    '1 beginbfchar <31> <0039> endbfchar',
    'endcmap CMapName currentdict /CMap defineresource pop end end',
  ].join('\n');
  const fontNum = 70;
  // Every font resource of the page (pdf-lib adds one name per drawText) now uses it.
  const pageDict = base.pageDict.replace(/\/Font\s*<<[^>]*>>/, (fonts) => fonts.replace(/\d+ 0 R/g, `${fontNum} 0 R`));
  const doctored = appendUpdate(
    base.bytes,
    [
      { num: 71, body: streamBody(cmap) },
      { num: fontNum, body: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /ToUnicode 71 0 R >>' },
      { num: base.pageNum, body: pageDict },
    ],
    base.rootNum,
  );
  const output = await analyzeBytes(doctored, 'doctored.pdf');
  const findings = findingsOf(output);
  const mismatches = findings.filter((f) => f.type === 'text-layer-mismatch');
  assert.equal(mismatches.length, 3, JSON.stringify(findings)); // the three lines holding a "1"
  const mismatch = mismatches.find((f) => /Total/.test(f.evidence));
  assert.ok(mismatch, JSON.stringify(findings));
  assert.equal(mismatch.severity, 'high');
  assert.match(mismatch.evidence, /9,200\.00.*1,200\.00/);
  assert.equal(output.result.isForged, true);
});

test('two subsets of one font, a hidden layer, off-page text and Info/XMP disagreement are reported', async () => {
  const doc = await PDFDocument.create();
  doc.setProducer('Microsoft Word for Microsoft 365');
  doc.setCreationDate(new Date('2026-03-01T10:00:00Z'));
  doc.setModificationDate(new Date('2026-03-01T10:00:00Z'));
  const page = doc.addPage([595, 842]);
  const { context } = doc;
  const font = (subset: string) =>
    context.register(context.obj({ Type: 'Font', Subtype: 'TrueType', BaseFont: `${subset}+Arial`, Encoding: 'WinAnsiEncoding' }));
  const original = page.node.newFontDictionary('ABCDEF+Arial', font('ABCDEF'));
  const added = page.node.newFontDictionary('QRSTUV+Arial', font('QRSTUV'));
  // An optional-content group that is off by default (a hidden layer).
  const group = context.register(context.obj({ Type: 'OCG', Name: 'Internal' }));
  doc.catalog.set(PDFName.of('OCProperties'), context.obj({ OCGs: [group], D: { OFF: [group] } }));
  const properties = context.obj({ hidden1: group });
  page.node.Resources()!.set(PDFName.of('Properties'), properties);
  const text = (key: PDFName, x: number, y: number, value: string) => `BT ${key} 12 Tf 1 0 0 1 ${x} ${y} Tm (${value}) Tj ET`;
  const content = [
    text(original, 72, 700, 'Salary: 3,100.00 EUR per month'),
    text(added, 72, 680, 'Bonus: 9,000.00 EUR'),
    `/OC /hidden1 BDC ${text(original, 72, 600, 'Internal note: figures adjusted')} EMC`,
    text(original, 900, 400, 'Off the page'),
  ].join('\n');
  page.node.set(PDFName.of('Contents'), context.register(context.flateStream(content)));
  const xmp = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:pdf="http://ns.adobe.com/pdf/1.3/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" pdf:Producer="iLovePDF" xmp:CreateDate="2026-03-01T10:00:00Z" xmp:ModifyDate="2026-05-20T08:00:00Z"/></rdf:RDF></x:xmpmeta>`;
  doc.catalog.set(PDFName.of('Metadata'), context.register(context.stream(xmp, { Type: 'Metadata', Subtype: 'XML' })));
  const bytes = await doc.save({ useObjectStreams: false });

  const findings = findingsOf(await analyzeBytes(bytes, 'payslip.pdf', NO_OCR));
  const types = new Set(findings.map((f) => f.type));
  for (const type of ['font-subset-mismatch', 'hidden-layer-text', 'text-off-page', 'metadata-mismatch', 'editing-tool']) {
    assert.ok(types.has(type), `missing ${type} in ${JSON.stringify(findings)}`);
  }
  assert.equal(findings.find((f) => f.type === 'font-subset-mismatch')!.severity, 'medium');
  assert.match(findings.find((f) => f.type === 'hidden-layer-text')!.evidence, /Internal note/);
  assert.match(findings.find((f) => f.type === 'metadata-mismatch')!.evidence, /iLovePDF/);
});
