import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { MediaError } from '../../src/detectors/types.js';
import { recognizeWords, terminateOcr } from '../../src/detectors/document/ocr.js';
import { analyzeDocumentImage } from '../../src/detectors/document/scan-forensics.js';
import { SCAN_LINES, analyzeBytes, findingsOf, scannedInvoice, scannedInvoicePdf } from './fixtures.js';

after(() => terminateOcr());

const signal = () => new AbortController().signal;

test('a clean scan has no inconsistent text region; a re-typed total is found and located', async () => {
  const clean = await analyzeDocumentImage(await scannedInvoice({ seed: 11 }), null, signal());
  assert.ok(clean.words.length >= 30, `OCR read only ${clean.words.length} words`);
  assert.equal(clean.unavailable, undefined);
  assert.deepEqual(clean.findings, []);

  // Line 8 ("Total due 1,482.00 EUR") replaced by cleanly typed text after scanning.
  const forged = await analyzeDocumentImage(
    await scannedInvoice({ seed: 11, forge: { line: 8, text: 'Total due 9,482.00 EUR' } }),
    null,
    signal(),
  );
  assert.equal(forged.findings.length, 1, JSON.stringify(forged.findings));
  const [finding] = forged.findings;
  assert.equal(finding!.type, 'text-region-inconsistent');
  assert.match(finding!.evidence, /9,482/);
  // The total line is drawn at y = 150 + 8 * 95 = 910 px (baseline).
  assert.ok(finding!.box && finding!.box.y < 910 && finding!.box.y + finding!.box.height > 890, JSON.stringify(finding!.box));
});

test('the detector reports a re-typed scan as forged with a heatmap', async () => {
  const forged = await scannedInvoice({ seed: 5, forge: { line: 6, text: 'Subtotal 7,235.00 EUR' } });
  const output = await analyzeBytes(forged, 'scan.jpg');
  const findings = findingsOf(output);
  assert.ok(
    findings.some((f) => f.type === 'text-region-inconsistent' && /7,235/.test(f.evidence)),
    JSON.stringify(findings),
  );
  assert.equal(output.result.isForged, true);
  assert.equal(output.result.verdict, 'manipulated');
  const heatmap = output.artifacts?.find((a) => a.name === 'page-1-heatmap.png');
  assert.ok(heatmap && heatmap.kind === 'heatmap');
  const meta = await sharp(Buffer.from(heatmap.data)).metadata();
  assert.equal(meta.width, 1240);
});

test('a phone photo of a page stored sideways (EXIF orientation 6) is read upright, and the image-forgery regions are turned onto the upright page', async () => {
  const forged = await scannedInvoice({ seed: 5, forge: { line: 6, text: 'Subtotal 7,235.00 EUR' } });
  // Stored turned a quarter anticlockwise; orientation 6 tells viewers to turn it back clockwise.
  const sideways = await sharp(await sharp(forged).rotate(-90).toBuffer()).withMetadata({ orientation: 6 }).jpeg({ quality: 92 }).toBuffer();
  const output = await analyzeBytes(sideways, 'sideways.jpg');
  assert.ok(findingsOf(output).some((f) => f.type === 'text-region-inconsistent' && /7,235/.test(f.evidence)), 'the re-typed total is still found');
  const details = output.result.analysisDetails as { pages: Array<{ width: number; height: number }>; imageForgery: { orientation: number; regions: Array<{ x: number; y: number; width: number; height: number }> } };
  const page = details.pages[0]!;
  assert.ok(page.height > page.width, 'the page is analysed upright');
  assert.equal(details.imageForgery.orientation, 6);
  for (const r of details.imageForgery.regions) assert.ok(r.x >= 0 && r.y >= 0 && r.x + r.width <= page.width + 1 && r.y + r.height <= page.height + 1, JSON.stringify(r));
  // The re-saved total lights the forgery maps: turned upright, one of their regions lies on its line.
  const total = findingsOf(output).find((f) => f.type === 'text-region-inconsistent' && /7,235/.test(f.evidence))!.box!;
  assert.ok(details.imageForgery.regions.some((r) => r.y < total.y + total.height && r.y + r.height > total.y && r.x < total.x + total.width && r.x + r.width > total.x), JSON.stringify({ total, regions: details.imageForgery.regions }));
});

test('an image without text is inconclusive, and a corrupt image fails with a MediaError', async () => {
  const blank = await sharp({ create: { width: 600, height: 800, channels: 3, background: '#f4f4f0' } })
    .jpeg()
    .toBuffer();
  const output = await analyzeBytes(blank, 'blank.jpg', {});
  assert.equal(output.result.verdict, 'inconclusive');
  assert.ok((output.result.confidence as number) <= 0.5);

  const truncated = (await scannedInvoice({ seed: 3 })).subarray(0, 2000);
  await assert.rejects(analyzeBytes(truncated, 'broken.jpg'), (error: Error) => error instanceof MediaError);
});

test('a scanned PDF: the OCR text layer is checked against the page image', async () => {
  const image = await scannedInvoice({ seed: 21 });
  const clean = await analyzeBytes(await scannedInvoicePdf(image, SCAN_LINES), 'scan.pdf');
  assert.deepEqual(
    findingsOf(clean).filter((f) => f.severity !== 'info' && f.severity !== 'low'),
    [],
  );
  assert.equal(clean.result.verdict, 'authentic');
  const pages = (clean.result.analysisDetails as { pages: Array<{ scanned: boolean }> }).pages;
  assert.equal(pages[0]!.scanned, true);

  // The invisible layer says 1,182.00 where the scanned image shows 1,482.00.
  const layer = SCAN_LINES.map((text, i) => (i === 8 ? 'Total due 1,182.00 EUR' : text));
  const edited = await analyzeBytes(await scannedInvoicePdf(image, layer), 'scan-edited.pdf');
  const mismatch = findingsOf(edited).find((f) => f.type === 'text-layer-mismatch');
  assert.ok(mismatch && mismatch.severity === 'high' && /1,182\.00.*1,482\.00/.test(mismatch.evidence), JSON.stringify(findingsOf(edited)));
  // Page points from the top: line 8 sits at 910 px of 1240 px on a 595 pt wide page.
  assert.ok(mismatch.box && Math.abs(mismatch.box.y + mismatch.box.height - 910 * (595 / 1240)) < 12, JSON.stringify(mismatch.box));
  assert.equal(edited.result.isForged, true);
});

test('an aborted job stops OCR promptly and the next job gets a fresh engine', async () => {
  const page = await sharp(await scannedInvoice({ seed: 9 }))
    .png()
    .toBuffer();
  await recognizeWords(page, signal()); // engine warm
  const controller = new AbortController();
  const started = performance.now();
  setTimeout(() => controller.abort(new Error('timeout')), 100);
  await assert.rejects(recognizeWords(page, controller.signal), /timeout/);
  assert.ok(performance.now() - started < 1500, `abort took ${Math.round(performance.now() - started)} ms`);
  const words = await recognizeWords(page, signal());
  assert.ok(words.length >= 30);
});
