/**
 * Task type 6, document-intelligence: forged or tampered documents (PDF, JPEG, PNG).
 *
 * PDFs: structural forensics of every revision (pdf-forensics.ts, ISO 32000-1 and the PDF
 * signature attacks of Mladenov et al. CCS 2019 and Mainka et al. NDSS 2021), then OCR of
 * the rendered pages against the text layer (text-layer.ts), and the scan pipeline for
 * pages that are images. Images: the scan pipeline (scan-forensics.ts: per-word noise, blur
 * and JPEG-grid consistency after Mahdian & Saic 2009 and van Beusekom et al. 2013) plus the
 * image-forgery detector of task type 5 when it is installed.
 */
import { readFile, stat } from 'node:fs/promises';
import { verdictResult, round4 } from '../result.js';
import { MediaError, type ArtifactOutput, type Detector, type DetectorInput, type DetectorOutput, type Signal } from '../types.js';
import { SEVERITY_PROBABILITY, fuseFindings, sortFindings, type Finding, type FindingBox } from './findings.js';
import { SEVERITY_INTENSITY, paintHeatmap, type HeatRegion } from './heatmap.js';
import { ocrEngine, recognizeWords, type OcrWord } from './ocr.js';
import { analyzePdf } from './pdf-forensics.js';
import { toPageBox } from './pdf-checks/context.js';
import { renderPdfPages, warmUpRenderer, type RenderedPage } from './pdf-render.js';
import { isName } from './pdf-syntax.js';
import { analyzeDocumentImage, type ScanAnalysis } from './scan-forensics.js';
import { uprightBox, uprightSize } from '../image/image-input.js';
import { compareTextLayer } from './text-layer.js';
import type { TextRun } from './pdf-content.js';

const NAME = 'document-intelligence';
const VERSION = '1.0.0';
const MAX_FILE_BYTES = 50 * 1024 * 1024;
/** Pages OCR'd against their text layer, and pages given the scan pipeline, per document. */
const MAX_OCR_PAGES = 3;
const MAX_SCAN_PAGES = 5;
const MAX_HEATMAP_PAGES = 10;
const RENDER_LONG_SIDE = 1600;
/** A finer rendering (about 270 dpi for A4) on which figures found to differ are read again. */
const CONFIRM_LONG_SIDE = 3200;

type Kind = 'pdf' | 'jpeg' | 'png';

interface ImageForgeryResult {
  score: number;
  signals?: unknown[];
  regions?: Array<{ x: number; y: number; width: number; height: number; score?: number }>;
  heatmapPng?: Uint8Array;
  width?: number;
  height?: number;
  /** EXIF orientation of the file: regions and heatmap lie on its stored pixels. */
  orientation?: number;
}
type ImageForgery = (path: string, signal: AbortSignal) => Promise<ImageForgeryResult>;

let imageForgery: ImageForgery | null | undefined;

/** The task-type-5 pipeline, when that module is present in this build. */
async function loadImageForgery(): Promise<ImageForgery | null> {
  if (imageForgery !== undefined) return imageForgery;
  const specifier = '../image/forgery.js';
  try {
    const module = (await import(specifier)) as { analyzeImageForgery?: ImageForgery };
    imageForgery = typeof module.analyzeImageForgery === 'function' ? module.analyzeImageForgery : null;
  } catch {
    imageForgery = null;
  }
  return imageForgery;
}

function sniff(bytes: Uint8Array): Kind | null {
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'png';
  if (Buffer.from(bytes.subarray(0, 1024)).toString('latin1').includes('%PDF-')) return 'pdf';
  return null;
}

interface Analysis {
  findings: Finding[];
  signals: Signal[];
  artifacts: ArtifactOutput[];
  details: Record<string, unknown>;
  /** Parts of the document no check could examine (scanned pages without OCR text…). */
  gaps: string[];
  checks: string[];
  boxUnits: 'pt' | 'px';
}

const detector: Detector = {
  name: NAME,
  version: VERSION,

  async load() {
    // Tesseract's engine and English model: created once per worker thread.
    await ocrEngine();
    await loadImageForgery();
    await warmUpRenderer();
  },

  async analyze(input: DetectorInput, signal: AbortSignal): Promise<DetectorOutput> {
    const file = input.files.find((f) => f.slotName === 'original') ?? input.files[0];
    if (!file) throw new MediaError('no input file');
    const { size } = await stat(file.path);
    if (size === 0) throw new MediaError('the file is empty');
    if (size > MAX_FILE_BYTES) throw new MediaError(`the file has ${size} bytes, over the ${MAX_FILE_BYTES / 1024 / 1024} MiB limit`);
    const bytes = new Uint8Array(await readFile(file.path));
    const kind = sniff(bytes);
    if (!kind) throw new MediaError('unrecognised file: expected a PDF, JPEG or PNG document');
    const ocr = input.parameters.ocr !== false;

    const analysis = kind === 'pdf' ? await analyzePdfDocument(bytes, signal, ocr) : await analyzeImageDocument(file.path, kind, signal);
    signal.throwIfAborted();
    return buildOutput(kind, analysis);
  },
};

export default detector;

async function analyzePdfDocument(bytes: Uint8Array, signal: AbortSignal, ocr: boolean): Promise<Analysis> {
  const report = analyzePdf(bytes, () => signal.throwIfAborted());
  const findings = [...report.findings];
  const gaps: string[] = [];
  const checks = [
    'revisions',
    'signatures',
    'metadata',
    'fonts',
    'hidden content',
    'annotations',
    'actions',
    'embedded files',
    'orphaned objects',
  ];
  const signals: Signal[] = [];
  const renders = new Map<number, RenderedPage>();
  const render = async (pages: number[]) => {
    const missing = pages.filter((p) => !renders.has(p));
    for (const page of await renderPdfPages(bytes, missing, RENDER_LONG_SIDE, signal)) renders.set(page.page, page);
  };
  if (report.encrypted && !report.decrypted) gaps.push(`the document is encrypted and ${report.encryption}: its page content could not be read`);

  // Scanned pages: the scan pipeline on the page image, and its OCR against the text layer.
  const scanned = report.pages.filter((p) => p.scanned);
  const scanResults: Array<{ page: number; scan: ScanAnalysis; forgery?: ImageForgeryResult }> = [];
  for (const pageReport of scanned.slice(0, MAX_SCAN_PAGES)) {
    signal.throwIfAborted();
    const entry = report.contents.get(pageReport.page)!;
    const image = entry.largestImage;
    const record = image?.record;
    const filter = record?.stream?.dict.entries.get('Filter');
    const isJpeg = isName(filter, 'DCTDecode') || (Array.isArray(filter) && filter.length === 1 && isName(filter[0], 'DCTDecode'));
    let pixels: Buffer;
    let mapping: (run: TextRun) => { x0: number; y0: number; x1: number; y1: number };
    if (isJpeg && record?.stream && image) {
      // The embedded JPEG as scanned: its own compression history, not a re-rendering.
      pixels = Buffer.from(report.readStream(record).data);
      const width = Number(record.stream.dict.entries.get('Width')) || 1;
      const height = Number(record.stream.dict.entries.get('Height')) || 1;
      const [bx0, by0, bx1, by1] = image.box;
      mapping = (run) => ({
        x0: ((run.box[0] - bx0) / (bx1 - bx0)) * width,
        x1: ((run.box[2] - bx0) / (bx1 - bx0)) * width,
        y0: ((by1 - run.box[3]) / (by1 - by0)) * height,
        y1: ((by1 - run.box[1]) / (by1 - by0)) * height,
      });
    } else {
      await render([pageReport.page]);
      const rendered = renders.get(pageReport.page);
      if (!rendered) continue;
      pixels = rendered.png;
      mapping = pdfToPixels(entry.page.cropBox, rendered.scale);
    }
    const scan = await analyzeDocumentImage(pixels, pageReport.page, signal);
    const scale = (run: TextRun) => toPageBox(run.box, entry.page);
    // Scan findings are in image pixels; convert them to page points like every PDF finding.
    const pixelToPoints = pixelsToPageBox(entry.page, mapping);
    for (const finding of scan.findings) findings.push({ ...finding, box: finding.box ? pixelToPoints(finding.box) : undefined });
    if (scan.unavailable) gaps.push(`page ${pageReport.page}: ${scan.unavailable}`);
    const layer = entry.content.runs;
    if (layer.length) {
      const comparison = compareTextLayer(layer, scan.words, pageReport.page, mapping, scale);
      findings.push(...comparison.findings);
      if (comparison.unreliable) gaps.push(`page ${pageReport.page}: ${comparison.unreliable}`);
    } else if (!scan.words.length) gaps.push(`page ${pageReport.page} is an image without recognisable text`);
    scanResults.push({ page: pageReport.page, scan });
  }
  if (scanned.length > MAX_SCAN_PAGES) gaps.push(`${scanned.length - MAX_SCAN_PAGES} further scanned pages were not analysed`);
  if (scanned.length) checks.push('scan consistency');

  // Born-digital pages: OCR of the rendering against the text layer.
  const textPages = report.pages.filter((p) => !p.scanned && p.visibleCharacters >= 20).slice(0, ocr ? MAX_OCR_PAGES : 0);
  let compared = 0;
  for (const pageReport of textPages) {
    signal.throwIfAborted();
    await render([pageReport.page]);
    const rendered = renders.get(pageReport.page);
    const entry = report.contents.get(pageReport.page)!;
    if (!rendered) continue;
    const words = await recognizeWords(rendered.png, signal);
    const visible = entry.content.runs.filter(
      (run) => run.renderMode !== 3 && run.renderMode !== 7 && run.fillAlpha > 0 && !run.hiddenByOptionalContent,
    );
    const compare = (ocrWords: OcrWord[], scale: number) =>
      compareTextLayer(visible, ocrWords, pageReport.page, pdfToPixels(entry.page.cropBox, scale), (run) => toPageBox(run.box, entry.page));
    const comparison = compare(words, rendered.scale);
    compared += comparison.compared;
    let pageFindings = comparison.findings;
    if (pageFindings.length) {
      // A mismatch is confirmed on a finer rendering: OCR misreads small print at one resolution
      // (a 5 read as 6, a wrapped table cell's two lines read as one), while a doctored text layer
      // differs at every one. A finding stands when the finer reading finds it too, as severe.
      const [fine] = await renderPdfPages(bytes, [pageReport.page], CONFIRM_LONG_SIDE, signal);
      if (fine) {
        const confirmed = compare(await recognizeWords(fine.png, signal), fine.scale).findings;
        const same = (a: Finding, b: Finding) => a.severity === b.severity && JSON.stringify(a.box) === JSON.stringify(b.box);
        pageFindings = pageFindings.filter((finding) => confirmed.some((other) => same(finding, other)));
      }
    }
    findings.push(...pageFindings);
    if (comparison.unreliable) gaps.push(`page ${pageReport.page}: ${comparison.unreliable}`);
  }
  if (textPages.length) checks.push(`OCR vs text layer (${textPages.length} page${textPages.length > 1 ? 's' : ''}, ${compared} runs)`);
  if (report.pages.every((p) => p.visibleCharacters === 0 && !p.scanned) && (!report.encrypted || report.decrypted))
    gaps.push('no page holds readable text or a page image');

  // Heatmaps: every page with localised findings, marked on its rendering.
  const artifacts: ArtifactOutput[] = [];
  const localisedPages = [...new Set(findings.filter((f) => f.box && f.page !== null && f.severity !== 'info').map((f) => f.page!))].slice(
    0,
    MAX_HEATMAP_PAGES,
  );
  if (localisedPages.length) {
    await render(localisedPages);
    for (const page of localisedPages) {
      const rendered = renders.get(page);
      if (!rendered) continue;
      const regions: HeatRegion[] = findings
        .filter((f) => f.page === page && f.box && f.severity !== 'info')
        .map((f) => ({
          x: f.box!.x * rendered.scale,
          y: f.box!.y * rendered.scale,
          width: f.box!.width * rendered.scale,
          height: f.box!.height * rendered.scale,
          intensity: SEVERITY_INTENSITY[f.severity],
        }));
      artifacts.push({
        name: `page-${page}-heatmap.png`,
        kind: 'heatmap',
        contentType: 'image/png',
        data: await paintHeatmap(rendered.png, regions),
      });
    }
  }
  signals.push({
    id: 'scan-consistency',
    label: 'Scanned pages: text regions consistent with the page',
    score: scanResults.length ? (scanResults.some((s) => s.scan.findings.length) ? 0.8 : 0.1) : null,
    weight: scanResults.length ? 1 : 0,
    evidence: scanResults.length
      ? scanResults.map((s) => ({
          page: s.page,
          words: s.scan.words.length,
          flagged: s.scan.findings.length,
          unavailable: s.scan.unavailable,
        }))
      : 'no scanned pages',
  });
  return {
    findings,
    signals,
    artifacts,
    gaps,
    checks,
    boxUnits: 'pt',
    details: {
      format: 'pdf',
      pages: report.pages,
      revisions: report.revisions,
      signatures: report.signatures,
      metadata: report.metadata,
      encrypted: report.encrypted,
      encryption: report.encryption,
    },
  };
}

function pdfToPixels(cropBox: [number, number, number, number], scale: number) {
  return (run: TextRun) => ({
    x0: (run.box[0] - cropBox[0]) * scale,
    x1: (run.box[2] - cropBox[0]) * scale,
    y0: (cropBox[3] - run.box[3]) * scale,
    y1: (cropBox[3] - run.box[1]) * scale,
  });
}

/** Inverts a run-to-pixel mapping (linear) to express a pixel box in page points. */
function pixelsToPageBox(
  page: { cropBox: [number, number, number, number] },
  mapping: (run: TextRun) => { x0: number; y0: number; x1: number; y1: number },
) {
  const probe = (x: number, y: number) => mapping({ box: [x, y, x, y] } as TextRun);
  const origin = probe(page.cropBox[0], page.cropBox[3]);
  const unit = probe(page.cropBox[0] + 1, page.cropBox[3] - 1);
  const sx = unit.x0 - origin.x0 || 1;
  const sy = unit.y0 - origin.y0 || 1;
  return (box: FindingBox): FindingBox => ({
    x: Math.round(((box.x - origin.x0) / sx) * 10) / 10,
    y: Math.round(((box.y - origin.y0) / sy) * 10) / 10,
    width: Math.round((box.width / sx) * 10) / 10,
    height: Math.round((box.height / sy) * 10) / 10,
  });
}

async function analyzeImageDocument(path: string, kind: Kind, signal: AbortSignal): Promise<Analysis> {
  const scan = await analyzeDocumentImage(path, null, signal);
  const findings = [...scan.findings];
  const gaps: string[] = [];
  const checks = ['OCR', 'text-region noise/sharpness consistency'];
  if (kind === 'jpeg') checks.push('JPEG grid consistency');
  if (scan.unavailable) gaps.push(scan.unavailable);
  const signals: Signal[] = [
    {
      id: 'text-region-consistency',
      label: 'Text regions share the page noise, sharpness and compression',
      score: scan.unavailable ? null : scan.findings.length ? Math.max(...scan.findings.map((f) => SEVERITY_PROBABILITY[f.severity])) : 0.1,
      weight: scan.unavailable ? 0 : 1,
      evidence: {
        words: scan.words.length,
        measured: scan.features.length,
        flaggedRegions: scan.findings.length,
        unavailable: scan.unavailable,
      },
    },
  ];
  const artifacts: ArtifactOutput[] = [];
  const forgery = await loadImageForgery();
  let forgeryDetail: Record<string, unknown> | undefined;
  if (forgery) {
    checks.push('image forgery (task type 5)');
    const result = await forgery(path, signal);
    signal.throwIfAborted();
    // The task-type-5 methods assume natural images: on a page of paper and print their
    // noise and compression maps light up on clean documents too (measured: generated clean
    // scans scored as high as forged ones). So their score is reported, not fused, and their
    // regions only corroborate text regions that the document cues flagged.
    signals.push({
      id: 'image-forgery',
      label: 'Image forgery detector (task type 5), context only on documents',
      score: round4(Number(result.score)),
      weight: 0,
      evidence: result.signals ?? null,
    });
    // The scan was turned upright (EXIF orientation) for OCR; the forgery regions lie on the stored pixels.
    const orientation = result.orientation ?? 1;
    const storedWidth = result.width || scan.width, storedHeight = result.height || scan.height;
    const upright = uprightSize(storedWidth, storedHeight, orientation);
    const scaleX = scan.width / upright.width;
    const scaleY = scan.height / upright.height;
    const regions = (result.regions ?? []).map((stored) => {
      const r = uprightBox(stored, orientation, storedWidth, storedHeight);
      return { x: r.x * scaleX, y: r.y * scaleY, width: r.width * scaleX, height: r.height * scaleY, score: r.score ?? 0, method: (r as { method?: string }).method };
    });
    forgeryDetail = {
      score: round4(Number(result.score)),
      // Regions here are on the upright page; the heatmap artifact lies on the file's stored pixels.
      orientation,
      regions: regions.map((r) => ({
        ...r,
        x: Math.round(r.x),
        y: Math.round(r.y),
        width: Math.round(r.width),
        height: Math.round(r.height),
        score: round4(r.score),
      })),
    };
    if (result.heatmapPng)
      artifacts.push({
        name: 'image-forgery-heatmap.png',
        kind: 'heatmap',
        contentType: 'image/png',
        data: new Uint8Array(result.heatmapPng),
      });
    for (const finding of findings) {
      if (!finding.box) continue;
      const box = finding.box;
      const corroborating = regions.filter(
        (r) =>
          r.score >= 0.5 &&
          r.width * r.height < 0.25 * scan.width * scan.height &&
          r.x < box.x + box.width &&
          box.x < r.x + r.width &&
          r.y < box.y + box.height &&
          box.y < r.y + r.height,
      );
      if (corroborating.length)
        finding.evidence += ` Corroborated by the image-forgery ${corroborating.map((r) => r.method ?? 'map').join('/')} map (score ${round4(Math.max(...corroborating.map((r) => r.score)))}).`;
    }
  } else {
    signals.push({
      id: 'image-forgery',
      label: 'Image forgery detector (task type 5)',
      score: null,
      weight: 0,
      evidence: 'not available in this build',
    });
  }
  const localised = findings.filter((f) => f.box);
  if (localised.length || scan.features.length) {
    // Per-word anomaly as a heat layer, plus the flagged regions.
    const regions: HeatRegion[] = scan.features
      .filter((f) => f.anomaly >= 2)
      .map((f) => ({
        x: f.word.bbox.x0,
        y: f.word.bbox.y0,
        width: f.word.bbox.x1 - f.word.bbox.x0,
        height: f.word.bbox.y1 - f.word.bbox.y0,
        intensity: Math.min(1, f.anomaly / 8),
      }));
    for (const finding of localised) regions.push({ ...finding.box!, intensity: SEVERITY_INTENSITY[finding.severity] });
    if (regions.length)
      artifacts.push({
        name: 'page-1-heatmap.png',
        kind: 'heatmap',
        contentType: 'image/png',
        data: await paintHeatmap(scan.basePng, regions),
      });
  }
  return {
    findings,
    signals,
    artifacts,
    gaps,
    checks,
    boxUnits: 'px',
    details: {
      format: kind,
      pages: [{ page: 1, width: scan.width, height: scan.height, words: scan.words.length, scanned: true }],
      ocrText: scan.words
        .map((w) => w.text)
        .join(' ')
        .slice(0, 4000),
      imageForgery: forgeryDetail ?? null,
    },
  };
}

function buildOutput(kind: Kind, analysis: Analysis): DetectorOutput {
  const findings = sortFindings(analysis.findings);
  const { score: findingScore, byType } = fuseFindings(findings);
  const score = findingScore;
  const manipulated = score >= 0.5;
  // Nothing found but parts unexamined: say so rather than vouch for the document.
  const inconclusive =
    !manipulated &&
    analysis.gaps.length > 0 &&
    (kind !== 'pdf' || analysis.gaps.some((g) => /encrypted|no page holds|image without|measurable words/.test(g)));
  const coverage = inconclusive ? 0.3 : analysis.gaps.length ? 0.6 : 1;
  const confidence = manipulated ? undefined : inconclusive ? 0.3 : round4(0.5 + 0.3 * coverage * ((0.5 - score) / 0.5));
  const signals: Signal[] = [
    ...[...byType.entries()].map(([type, { severity, count }]) => ({
      id: type,
      label: type.replace(/-/g, ' '),
      score: SEVERITY_PROBABILITY[severity],
      weight: severity === 'info' ? 0 : 1,
      evidence: findings
        .filter((f) => f.type === type)
        .slice(0, 3)
        .map((f) => f.evidence)
        .concat(count > 3 ? [`…and ${count - 3} more`] : []),
    })),
    ...analysis.signals,
  ];
  const result = verdictResult({
    flag: 'isForged',
    detector: { name: NAME, version: VERSION },
    score,
    inconclusive,
    confidence,
    signals,
    details: {
      ...analysis.details,
      boxUnits: analysis.boxUnits === 'pt' ? 'PDF points from the page top-left' : 'image pixels from the top-left',
      checks: analysis.checks,
      notExamined: analysis.gaps,
      heatmaps: analysis.artifacts.map((a) => a.name),
    },
  });
  const summary = summarize(result.verdict, result.score, findings, analysis);
  return { result: { ...result, findings, summary }, artifacts: analysis.artifacts };
}

function summarize(verdict: string, score: number, findings: Finding[], analysis: Analysis): string {
  const serious = findings.filter((f) => f.severity === 'high' || f.severity === 'medium');
  const where = (f: Finding) =>
    f.page ? ` (page ${f.page}${f.revision ? `, revision ${f.revision}` : ''})` : f.revision ? ` (revision ${f.revision})` : '';
  if (verdict === 'manipulated') {
    const top = serious.slice(0, 3).map((f) => `${f.evidence.replace(/\.$/, '')}${where(f)}`);
    return `Likely forged or tampered (score ${score.toFixed(2)}): ${serious.length} significant finding${serious.length === 1 ? '' : 's'}. ${top.join('. ')}.`;
  }
  const minor = findings.filter((f) => f.severity !== 'info').length;
  const checked = `Checked: ${analysis.checks.join(', ')}.`;
  if (verdict === 'inconclusive') {
    return `Inconclusive (score ${score.toFixed(2)}): no decisive evidence either way. Not examined: ${analysis.gaps.join('; ')}. ${checked}`;
  }
  const gapNote = analysis.gaps.length ? ` Limits: ${analysis.gaps.join('; ')}.` : '';
  return `No sign of tampering found (score ${score.toFixed(2)}${minor ? `; ${minor} minor observation${minor === 1 ? '' : 's'}` : ''}). ${checked}${gapNote}`;
}
