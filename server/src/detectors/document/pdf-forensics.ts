/**
 * Structural forensics of a PDF: what each revision changed, whether anything changed after
 * a signature, metadata consistency, font subsets, hidden text and annotations, active
 * content, embedded files and orphaned objects.
 *
 * Standards and papers followed:
 * - ISO 32000-1:2008 §7.5.6 incremental updates; §12.8 digital signatures (ByteRange,
 *   §12.8.1; DocMDP permissions, §12.8.2.2); §14.3.3 document information dictionary vs
 *   §14.3.2 XMP metadata; §9.6.4 font subsets; §9.3.6 text rendering mode; §12.5.3
 *   annotation flags; §8.11 optional content; §12.6.4 actions (JavaScript §12.6.4.16,
 *   Launch §12.6.4.5, URI §12.6.4.7, SubmitForm §12.7.5.2); §7.11.4 embedded files.
 * - Mladenov, Mainka, Meyer zu Selhausen, Grothe, Schwenk: "1 Trillion Dollar Refund: How To
 *   Spoof PDF Signatures", ACM CCS 2019 (incremental saving, universal signature forgery and
 *   signature wrapping attacks).
 * - Mainka, Mladenov, Rohlmann: "Shadow Attacks: Hiding and Replacing Content in Signed
 *   PDFs", NDSS 2021 (hide / replace / hide-and-replace after signing).
 */
import { ContentInterpreter, hiddenOptionalContentGroups, type PageContent, type TextRun } from './pdf-content.js';
import { PdfFile, type Box, type ObjectRecord, type PageInfo } from './pdf-structure.js';
import { decodeTextString, isDict, isName, isRef, isString, latin1, type PdfDict, type PdfValue } from './pdf-syntax.js';
import type { Finding, FindingBox, Severity } from './findings.js';
import { MediaError } from '../types.js';

export interface PdfPageReport {
  page: number;
  width: number;
  height: number;
  textRuns: number;
  visibleCharacters: number;
  /** A page whose visible content is essentially one large image (a scan or photo). */
  scanned: boolean;
  images: number;
}

export interface PdfReport {
  findings: Finding[];
  pages: PdfPageReport[];
  revisions: RevisionSummary[];
  metadata: Record<string, string | undefined>;
  signatures: SignatureSummary[];
  encrypted: boolean;
  /** Per page: runs and the largest image, for the text-layer and scan checks. */
  contents: Map<number, { page: PageInfo; content: PageContent; largestImage: { record: ObjectRecord | undefined; box: Box } | null }>;
}

export interface RevisionSummary {
  revision: number;
  byteRange: [number, number];
  objectsWritten: number;
  changed: Record<string, number>;
  freed: number;
}

export interface SignatureSummary {
  field: string | undefined;
  signer: string | undefined;
  signedAt: string | undefined;
  subFilter: string | undefined;
  coversBytes: number;
  fileBytes: number;
  revisionsAfter: number;
  byteRangeValid: boolean;
}

/** Producers/creators that edit existing PDFs rather than author them. */
const EDITING_TOOLS = [
  /ilovepdf/i,
  /smallpdf/i,
  /sejda/i,
  /pdfescape/i,
  /pdf-?xchange\s*editor/i,
  /foxit\s*(phantom|editor|pdf editor)/i,
  /nitro\s*pro/i,
  /pdffiller/i,
  /docfly/i,
  /formswift/i,
  /pdf\s*candy/i,
  /soda\s*pdf/i,
  /pdfelement|wondershare/i,
  /master\s*pdf\s*editor/i,
  /pdf\s*expert/i,
  /inkscape/i,
  /libreoffice\s*draw/i,
  /abbyy\s*finereader\s*pdf\s*editor/i,
  /canva/i,
  /photoshop/i,
  /gimp/i,
  /pdf24/i,
  /qoppa/i,
  /adobe\s*acrobat.*(edit|pro)/i,
];
/** Online services where the original author had no control over the edit. */
const ONLINE_EDITORS = /ilovepdf|smallpdf|sejda|pdfescape|pdffiller|docfly|formswift|pdf\s*candy|pdf24|canva/i;
const EXECUTABLE_NAME = /\.(exe|scr|bat|cmd|com|pif|vbs|vbe|js|jse|wsf|wsh|ps1|msi|dll|jar|hta|lnk|sh|app|apk|docm|xlsm)$/i;

interface Context {
  file: PdfFile;
  findings: Finding[];
  checkAbort: () => void;
}

export function analyzePdf(bytes: Uint8Array, checkAbort: () => void): PdfReport {
  const file = new PdfFile(bytes, checkAbort);
  const context: Context = { file, findings: [], checkAbort };
  const trailer = file.trailer;
  const encrypted = Boolean(trailer?.entries.has('Encrypt'));
  const table = file.finalTable;
  const root = file.dictOf(trailer?.entries.get('Root'), table);
  if (!root) throw new MediaError('broken PDF: the trailer names no readable document catalog (/Root)');

  if (!encrypted) sweepForDecompressionBombs(context);
  checkAbort();

  const pages = file.pages(table, trailer);
  if (pages.length === 0) throw new MediaError('broken PDF: the page tree holds no pages');
  const hiddenGroups = hiddenOptionalContentGroups(file, table, root);
  const contents: PdfReport['contents'] = new Map();
  const pageReports: PdfPageReport[] = [];
  if (!encrypted) {
    for (const page of pages.slice(0, 500)) {
      checkAbort();
      const content = new ContentInterpreter(file, table, hiddenGroups, checkAbort).run(page);
      const pageArea = area(page.cropBox);
      const largest = content.images.reduce<PageContent['images'][number] | null>(
        (best, image) => (!best || area(image.box) > area(best.box) ? image : best),
        null,
      );
      const visibleRuns = content.runs.filter((run) => isVisible(run));
      const visibleCharacters = visibleRuns.reduce((sum, run) => sum + run.text.trim().length, 0);
      const scanned = largest !== null && area(intersect(largest.box, page.cropBox)) > 0.6 * pageArea && visibleCharacters < 20;
      contents.set(page.number, { page, content, largestImage: largest ? { record: largest.record, box: largest.box } : null });
      pageReports.push({
        page: page.number,
        width: round1(page.cropBox[2] - page.cropBox[0]),
        height: round1(page.cropBox[3] - page.cropBox[1]),
        textRuns: content.runs.length,
        visibleCharacters,
        scanned,
        images: content.images.length,
      });
      checkHiddenText(context, page, content, scanned);
      checkAnnotations(context, page, content);
    }
  } else {
    context.findings.push({
      type: 'encrypted',
      severity: 'info',
      page: null,
      evidence: 'The document is encrypted; page content could not be inspected, only its structure.',
    });
  }

  const revisions = checkRevisions(context, hiddenGroups);
  const signatures = checkSignatures(context, revisions);
  const metadata = checkMetadata(context, root);
  checkFonts(context, contents);
  checkActionsAndEmbeddedFiles(context, root);
  checkOrphans(context);
  checkFileStructure(context);

  return {
    findings: context.findings,
    pages: pageReports,
    revisions: revisions.map((r) => r.summary),
    metadata,
    signatures,
    encrypted,
    contents,
  };
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const area = (box: Box) => Math.max(0, box[2] - box[0]) * Math.max(0, box[3] - box[1]);
const intersect = (a: Box, b: Box): Box => [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
const overlapRatio = (inner: Box, outer: Box) => (area(inner) > 0 ? area(intersect(inner, outer)) / area(inner) : 0);
const quote = (text: string, max = 80) => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
const isVisible = (run: TextRun) => run.renderMode !== 3 && run.renderMode !== 7 && run.fillAlpha > 0 && !run.hiddenByOptionalContent;

/** Converts a PDF user-space box to a top-left-origin box on the page's crop box. */
export function toPageBox(box: Box, page: PageInfo): FindingBox {
  const [x0, , , y1] = page.cropBox;
  return {
    x: round1(box[0] - x0),
    y: round1(y1 - box[3]),
    width: round1(box[2] - box[0]),
    height: round1(box[3] - box[1]),
  };
}

function sweepForDecompressionBombs({ file, checkAbort }: Context): void {
  // Every stream a renderer could decode, inflated once under the document's budget, so a
  // bomb fails this job here instead of exhausting memory later (in pdf.js or in OCR).
  let count = 0;
  for (const record of file.finalTable.values()) {
    if (!record.stream) continue;
    if (++count % 200 === 0) checkAbort();
    const width = file.resolve(record.stream.dict.entries.get('Width'));
    const height = file.resolve(record.stream.dict.entries.get('Height'));
    if (typeof width === 'number' && typeof height === 'number' && width * height > 200_000_000) {
      throw new MediaError(`an image in the PDF declares ${width}x${height} pixels: refusing a likely malicious file`);
    }
    // Decoded only to measure; page content is decoded again (and cached) when interpreted.
    file.streamData(record, { cache: false });
  }
}

function checkHiddenText({ findings }: Context, page: PageInfo, content: PageContent, scanned: boolean): void {
  const pageArea = area(page.cropBox);
  const report = (type: string, severity: Severity, run: TextRun, why: string) =>
    findings.push({ type, severity, page: page.number, box: toPageBox(run.box, page), evidence: `${why}: ${quote(run.text.trim())}` });
  const imagesUnder = (run: TextRun) => content.images.some((image) => image.order < run.order && overlapRatio(run.box, image.box) > 0.8);
  for (const run of content.runs) {
    const invisible = run.renderMode === 3 || run.renderMode === 7 || run.fillAlpha === 0;
    if (invisible) {
      // Invisible text over a scanned image is the normal OCR layer; it is compared with the
      // image elsewhere. Anywhere else it is text that machines read and people do not see.
      if (scanned || imagesUnder(run)) continue;
      report(
        'invisible-text',
        'high',
        run,
        run.fillAlpha === 0 ? 'text drawn fully transparent' : `text drawn with invisible render mode ${run.renderMode}`,
      );
      continue;
    }
    if (run.hiddenByOptionalContent) {
      report('hidden-layer-text', 'medium', run, 'text in an optional-content layer that is off by default');
      continue;
    }
    if (overlapRatio(run.box, page.cropBox) < 0.5) {
      report('text-off-page', 'medium', run, 'text drawn outside the visible page area');
      continue;
    }
    if (run.fontSize > 0 && run.fontSize < 1) {
      report('microscopic-text', 'medium', run, `text drawn at ${run.fontSize.toFixed(2)} pt, too small to read`);
      continue;
    }
    if (run.fillLuminance !== null && run.fillLuminance > 0.97 && run.renderMode === 0) {
      const darkBehind =
        content.fills.some((fill) => fill.order < run.order && (fill.luminance ?? 0) < 0.6 && overlapRatio(run.box, fill.box) > 0.8) ||
        imagesUnder(run);
      if (!darkBehind) report('white-text', 'medium', run, 'white text on a white page');
      continue;
    }
    const cover = content.fills.find(
      (fill) =>
        fill.order > run.order &&
        fill.alpha >= 0.99 &&
        fill.luminance !== null &&
        area(fill.box) < 0.25 * pageArea &&
        overlapRatio(run.box, fill.box) > 0.7,
    );
    if (cover) {
      // Whited out and typed over: the classic edit of a figure in a finished PDF.
      const overwrite = content.runs.find(
        (other) => other.order > cover.order && isVisible(other) && overlapRatio(run.box, other.box) > 0.5,
      );
      if (overwrite)
        report(
          'text-overwritten',
          'high',
          run,
          `text whited out and overwritten with ${quote(overwrite.text.trim())}; the hidden original reads`,
        );
      else report('text-covered', 'medium', run, 'text painted over by an opaque shape drawn later');
    }
    const imageCover = content.images.find(
      (image) => image.order > run.order && area(image.box) < 0.25 * pageArea && overlapRatio(run.box, image.box) > 0.7,
    );
    if (imageCover) report('text-covered', 'medium', run, 'text painted over by an image drawn later');
  }
}

function checkAnnotations({ file, findings }: Context, page: PageInfo, content: PageContent): void {
  const annots = file.resolve(page.dict.entries.get('Annots'));
  if (!Array.isArray(annots)) return;
  for (const reference of annots.slice(0, 5000)) {
    const annot = file.dictOf(reference);
    if (!annot) continue;
    const subtype = isName(annot.entries.get('Subtype')) ? (annot.entries.get('Subtype') as { name: string }).name : 'unknown';
    const flags = file.resolve(annot.entries.get('F'));
    const flagBits = typeof flags === 'number' ? flags : 0;
    const opacity = file.resolve(annot.entries.get('CA'));
    const text =
      decodeTextString(file.resolve(annot.entries.get('Contents'))) ?? decodeTextString(file.resolve(annot.entries.get('T'))) ?? '';
    const rectValue = file.resolve(annot.entries.get('Rect'));
    const rect: Box | undefined =
      Array.isArray(rectValue) && rectValue.length === 4 && rectValue.every((v) => typeof v === 'number')
        ? [
            Math.min(rectValue[0] as number, rectValue[2] as number),
            Math.min(rectValue[1] as number, rectValue[3] as number),
            Math.max(rectValue[0] as number, rectValue[2] as number),
            Math.max(rectValue[1] as number, rectValue[3] as number),
          ]
        : undefined;
    const box = rect ? toPageBox(rect, page) : undefined;
    const label = `${subtype} annotation${text ? ` ${quote(text)}` : ''}`;
    // Hidden widgets are routine in forms; hidden comments and text boxes are not.
    const severity: Severity = subtype === 'Widget' || subtype === 'Popup' || subtype === 'Link' ? 'low' : 'medium';
    if (flagBits & 0b10 || flagBits & 0b100000) {
      if (subtype !== 'Popup')
        findings.push({
          type: 'hidden-annotation',
          severity,
          page: page.number,
          box,
          evidence: `${label} is flagged ${flagBits & 0b10 ? 'Hidden' : 'NoView'}`,
        });
    } else if (typeof opacity === 'number' && opacity === 0) {
      findings.push({
        type: 'hidden-annotation',
        severity,
        page: page.number,
        box,
        evidence: `${label} is drawn fully transparent (CA 0)`,
      });
    } else if (rect && overlapRatio(rect, page.cropBox) < 0.5 && area(rect) > 0) {
      findings.push({
        type: 'annotation-off-page',
        severity: 'low',
        page: page.number,
        box,
        evidence: `${label} lies outside the visible page`,
      });
    } else if (rect && ['FreeText', 'Square', 'Stamp', 'Redact'].includes(subtype)) {
      const covered = content.runs.filter((run) => isVisible(run) && overlapRatio(run.box, rect) > 0.6);
      if (covered.length) {
        findings.push({
          type: 'annotation-over-text',
          severity: 'low',
          page: page.number,
          box,
          evidence: `${label} sits on top of page text ${quote(covered.map((r) => r.text.trim()).join(' '))}`,
        });
      }
    }
    if (subtype === 'FileAttachment') {
      findings.push({
        type: 'embedded-file',
        severity: 'medium',
        page: page.number,
        box,
        evidence: `file attachment annotation${text ? ` ${quote(text)}` : ''}`,
      });
    }
  }
}

interface RevisionChanges {
  summary: RevisionSummary;
  kinds: Set<string>;
}

/** Classifies an object version by what it is, for the per-revision change list. */
function samePdfValue(a: PdfValue | undefined, b: PdfValue | undefined, depth = 0): boolean {
  if (depth > 32) return false;
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => samePdfValue(item, b[i], depth + 1));
  if (a.kind !== b.kind) return false;
  if (a.kind === 'name') return a.name === (b as typeof a).name;
  if (a.kind === 'ref') return a.num === (b as typeof a).num && a.gen === (b as typeof a).gen;
  if (a.kind === 'string') return Buffer.from(a.bytes).equals(Buffer.from((b as typeof a).bytes));
  const other = b as typeof a;
  if (a.entries.size !== other.entries.size) return false;
  for (const [key, value] of a.entries) if (!samePdfValue(value, other.entries.get(key), depth + 1)) return false;
  return true;
}

function objectKind(
  file: PdfFile,
  record: ObjectRecord,
  previous: Map<number, ObjectRecord>,
  contentNums: Set<number>,
  fontNums: Set<number>,
  xobjectNums: Set<number>,
): string {
  const value = record.value;
  if (record.stream) {
    const type = record.stream.dict.entries.get('Type');
    const subtype = record.stream.dict.entries.get('Subtype');
    if (isName(type, 'XRef') || isName(type, 'ObjStm')) return 'structure';
    if (isName(type, 'Metadata')) return 'metadata';
    if (isName(subtype, 'Image')) return 'image';
    // Forms drawn by page content are content; other forms are annotation appearances.
    if (isName(subtype, 'Form')) return xobjectNums.has(record.num) ? 'form-xobject' : 'appearance';
    if (contentNums.has(record.num)) return 'page-content';
    if (fontNums.has(record.num)) return 'font';
    return 'stream';
  }
  if (!isDict(value)) return 'value';
  const type = value.entries.get('Type');
  const subtype = value.entries.get('Subtype');
  const changedKeys = () => {
    const before = previous.get(record.num)?.value;
    if (!isDict(before)) return null;
    const keys = new Set([...value.entries.keys(), ...before.entries.keys()]);
    return [...keys].filter((key) => !samePdfValue(value.entries.get(key), before.entries.get(key)));
  };
  if (isName(type, 'Catalog')) {
    // Signing, long-term validation (DSS) and form edits touch the catalog without content.
    const keys = changedKeys();
    return keys && keys.every((key) => ['DSS', 'AcroForm', 'Extensions', 'Perms', 'Metadata', 'Version', 'NeedsRendering'].includes(key))
      ? 'catalog-admin'
      : 'catalog';
  }
  if (isName(type, 'Page')) {
    // A page rewritten only to list new annotations is a comment or form edit, not new content.
    const keys = changedKeys();
    return keys && keys.every((key) => key === 'Annots') ? 'page-annotations' : 'page';
  }
  if (isName(type, 'Pages')) return 'page-tree';
  if (isName(type, 'Sig') || (value.entries.has('ByteRange') && value.entries.has('Contents'))) return 'signature';
  if (isName(type, 'Font') || isName(type, 'FontDescriptor') || fontNums.has(record.num)) return 'font';
  if (isName(type, 'Annot') || (value.entries.has('Rect') && subtype !== undefined))
    return isName(subtype, 'Widget') ? 'form-field' : 'annotation';
  if (value.entries.has('FT') || value.entries.has('Fields')) return 'form-field';
  if (value.entries.has('Producer') || value.entries.has('ModDate') || value.entries.has('CreationDate')) return 'info';
  if (isName(type, 'DSS') || value.entries.has('VRI')) return 'signature';
  void file;
  return 'other';
}

function checkRevisions(context: Context, hiddenGroups: Set<number>): RevisionChanges[] {
  const { file, findings, checkAbort } = context;
  const results: RevisionChanges[] = [];
  for (const revision of file.revisions) {
    checkAbort();
    const table = file.tableAt(revision.index);
    const previous = revision.index > 0 ? file.tableAt(revision.index - 1) : new Map<number, ObjectRecord>();
    const trailer = revision.trailer ?? file.trailer;
    const pages = file.pages(table, trailer);
    const contentNums = new Set<number>();
    const fontNums = new Set<number>();
    const xobjectNums = new Set<number>();
    for (const page of pages) {
      const xobjects = file.dictOf(page.resources?.entries.get('XObject'), table);
      for (const xobject of xobjects?.entries.values() ?? []) if (isRef(xobject)) xobjectNums.add(xobject.num);
      const contents = page.dict.entries.get('Contents');
      const list = Array.isArray(file.resolve(contents, table)) ? (file.resolve(contents, table) as PdfValue[]) : [contents];
      for (const item of list) if (isRef(item)) contentNums.add(item.num);
      const fonts = file.dictOf(page.resources?.entries.get('Font'), table);
      for (const font of fonts?.entries.values() ?? []) if (isRef(font)) fontNums.add(font.num);
    }
    const changed: Record<string, number> = {};
    const kinds = new Set<string>();
    for (const record of revision.objects) {
      const kind = objectKind(file, record, previous, contentNums, fontNums, xobjectNums);
      if (kind === 'structure') continue;
      const label = `${previous.has(record.num) ? 'modified' : 'added'} ${kind}`;
      changed[label] = (changed[label] ?? 0) + 1;
      kinds.add(kind);
    }
    const deleted = revision.freed.filter((num) => previous.has(num));
    if (deleted.length) changed['deleted objects'] = deleted.length;
    const summary: RevisionSummary = {
      revision: revision.index + 1,
      byteRange: [revision.start, revision.end],
      objectsWritten: revision.objects.length,
      changed,
      freed: deleted.length,
    };
    results.push({ summary, kinds });
    if (revision.index === 0) continue;

    const description =
      Object.entries(changed)
        .map(([what, n]) => `${n} ${what}`)
        .join(', ') || 'no objects';
    // Re-reading every page is only needed when something that draws text could have changed.
    const administrative = ['signature', 'info', 'metadata', 'annotation', 'page-annotations', 'appearance', 'form-field', 'catalog-admin'];
    const textChanges = [...kinds].some((kind) => !administrative.includes(kind))
      ? diffRevisionText(file, revision.index, hiddenGroups, checkAbort)
      : [];
    for (const change of textChanges) findings.push({ ...change, revision: revision.index + 1 });
    // What a reader sees changed, without a visible text difference (graphics, images, fonts).
    const visualKinds = ['page-content', 'page', 'font', 'image', 'form-xobject', 'page-tree'];
    const annotated = kinds.has('annotation') || kinds.has('page-annotations') || kinds.has('appearance');
    const onlyAdministrative = !textChanges.length && [...kinds].every((kind) => !visualKinds.includes(kind));
    const severity: Severity = textChanges.length
      ? 'low'
      : [...kinds].some((k) => visualKinds.includes(k))
        ? 'medium'
        : onlyAdministrative && annotated
          ? 'low'
          : 'info';
    findings.push({
      type: 'incremental-update',
      severity,
      page: null,
      revision: revision.index + 1,
      evidence: `Revision ${revision.index + 1} of ${file.revisions.length} was appended after the original (${description})${revision.unterminated ? '; it has no %%EOF terminator' : ''}.`,
    });
  }
  return results;
}

/** Text a reader sees on each page before and after a revision, compared line by line. */
function diffRevisionText(file: PdfFile, index: number, hiddenGroups: Set<number>, checkAbort: () => void): Finding[] {
  const before = file.tableAt(index - 1);
  const after = file.tableAt(index);
  const beforePages = file.pages(before, file.revisions[index - 1]!.trailer ?? file.trailer);
  const afterPages = file.pages(after, file.revisions[index]!.trailer ?? file.trailer);
  const findings: Finding[] = [];
  for (const page of afterPages.slice(0, 200)) {
    const old = beforePages[page.number - 1];
    // Lines, not runs: a writer may split the same line into different runs when it saves.
    const oldLines = old ? textLines(visibleRuns(file, before, old, hiddenGroups, checkAbort)) : [];
    const newLines = textLines(visibleRuns(file, after, page, hiddenGroups, checkAbort));
    const key = (line: TextLine) => `${line.text.replace(/\s+/g, '')}@${Math.round(line.box[1] / 3)}`;
    const oldKeys = new Set(oldLines.map(key));
    const newKeys = new Set(newLines.map(key));
    const removed = oldLines.filter((line) => !newKeys.has(key(line)));
    const added = newLines.filter((line) => !oldKeys.has(key(line)));
    if (!removed.length && !added.length) continue;
    const pairedRemoved = new Set<TextLine>();
    for (const line of added) {
      const replaced = removed.find((candidate) => !pairedRemoved.has(candidate) && sameLine(candidate.box, line.box));
      if (replaced) {
        pairedRemoved.add(replaced);
        const numeric = /\d/.test(replaced.text) || /\d/.test(line.text);
        findings.push({
          type: 'revision-text-replaced',
          severity: 'high',
          page: page.number,
          box: toPageBox(union(line.box, replaced.box), page),
          evidence: `A later revision replaced ${quote(replaced.text)} with ${quote(line.text)}${numeric ? ' (figures changed)' : ''}.`,
        });
      } else {
        findings.push({
          type: 'revision-text-added',
          severity: 'medium',
          page: page.number,
          box: toPageBox(line.box, page),
          evidence: `A later revision added ${quote(line.text)}.`,
        });
      }
    }
    for (const line of removed) {
      if (pairedRemoved.has(line)) continue;
      findings.push({
        type: 'revision-text-removed',
        severity: 'medium',
        page: page.number,
        box: toPageBox(line.box, page),
        evidence: `A later revision removed ${quote(line.text)}.`,
      });
    }
  }
  return findings;
}

interface TextLine {
  text: string;
  box: Box;
}

/** Groups runs that share a baseline into lines, left to right. */
function textLines(runs: TextRun[]): TextLine[] {
  const lines: Array<{ runs: TextRun[]; box: Box }> = [];
  for (const run of [...runs].sort((a, b) => b.box[1] - a.box[1] || a.box[0] - b.box[0])) {
    const height = run.box[3] - run.box[1];
    const line = lines.find((candidate) => Math.abs(candidate.box[1] - run.box[1]) < 0.3 * Math.max(height, 1));
    if (line) {
      line.runs.push(run);
      line.box = union(line.box, run.box);
    } else lines.push({ runs: [run], box: run.box });
  }
  return lines.map((line) => ({
    text: line.runs
      .sort((a, b) => a.box[0] - b.box[0])
      .map((run) => run.text.trim())
      .join(' ')
      .replace(/\s+/g, ' '),
    box: line.box,
  }));
}

function visibleRuns(
  file: PdfFile,
  table: Map<number, ObjectRecord>,
  page: PageInfo,
  hiddenGroups: Set<number>,
  checkAbort: () => void,
): TextRun[] {
  return new ContentInterpreter(file, table, hiddenGroups, checkAbort)
    .run(page)
    .runs.filter((run) => isVisible(run) && overlapRatio(run.box, page.cropBox) > 0.5);
}

const sameLine = (a: Box, b: Box) => Math.abs(a[1] - b[1]) < Math.max(2, 0.5 * (a[3] - a[1])) && a[0] < b[2] + 50 && b[0] < a[2] + 50;
const union = (a: Box, b: Box): Box => [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];

function checkSignatures({ file, findings }: Context, revisions: RevisionChanges[]): SignatureSummary[] {
  const summaries: SignatureSummary[] = [];
  const seen = new Set<string>();
  for (const record of file.records) {
    const value = record.value;
    if (!isDict(value)) continue;
    const byteRange = file.resolve(value.entries.get('ByteRange'));
    const contents = value.entries.get('Contents');
    if (!Array.isArray(byteRange) || byteRange.length !== 4 || !isString(contents)) continue;
    const [a, b, c, d] = byteRange.map((v) => (typeof v === 'number' ? v : -1)) as [number, number, number, number];
    const id = `${a},${b},${c},${d}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const fileBytes = file.bytes.length;
    const coversBytes = c + d;
    const gapIsContents = b > 0 && c > b && file.bytes[b] === 0x3c && file.bytes[c - 1] === 0x3e;
    const byteRangeValid = a === 0 && gapIsContents && coversBytes <= fileBytes && d >= 0;
    const signer = decodeTextString(file.resolve(value.entries.get('Name')));
    const signedAt = decodeTextString(file.resolve(value.entries.get('M')));
    const subFilter = isName(value.entries.get('SubFilter')) ? (value.entries.get('SubFilter') as { name: string }).name : undefined;
    const signedRevision = file.revisions.findIndex(
      (revision) => Math.abs(revision.end - coversBytes) <= 2 || (revision.end >= coversBytes && revision.start < coversBytes),
    );
    const later = file.revisions.filter((revision) => revision.start >= coversBytes - 2 && revision.objects.length > 0);
    summaries.push({ field: undefined, signer, signedAt, subFilter, coversBytes, fileBytes, revisionsAfter: later.length, byteRangeValid });
    const who = `signature${signer ? ` by ${quote(signer)}` : ''}${signedAt ? ` dated ${signedAt}` : ''}`;
    if (!byteRangeValid) {
      findings.push({
        type: 'signature-byterange-invalid',
        severity: 'high',
        page: null,
        evidence: `The ${who} has a ByteRange [${id.replace(/,/g, ' ')}] that does not cover the file around its own /Contents (universal signature forgery or signature wrapping).`,
      });
      continue;
    }
    findings.push({
      type: 'signature-present',
      severity: 'info',
      page: null,
      evidence: `The document carries a ${who} (${subFilter ?? 'unknown format'}) covering bytes 0–${coversBytes} of ${fileBytes}; its cryptographic validity is not checked by this detector.`,
    });
    if (signedRevision >= 0 && Math.abs(file.revisions[signedRevision]!.end - coversBytes) > 2) {
      findings.push({
        type: 'signature-coverage-gap',
        severity: 'medium',
        page: null,
        evidence: `The ${who} ends at byte ${coversBytes}, not at the end of a revision: bytes in between are outside its protection.`,
      });
    }
    if (!later.length) continue;
    const permissions = docMdpPermission(file, value);
    const laterKinds = new Set(later.flatMap((revision) => [...(revisions[revision.index]?.kinds ?? [])]));
    // Shadow attacks replace page content, fonts or images (high); hide-via-overlay adds
    // annotations or changes other objects (medium unless the certification forbids it);
    // another signature or validation data (DSS) after a signature is normal (info).
    const visual = [...laterKinds].filter((kind) =>
      ['page-content', 'page', 'font', 'image', 'form-xobject', 'page-tree', 'catalog'].includes(kind),
    );
    const annotations = ['annotation', 'page-annotations', 'appearance', 'form-field'].some((kind) => laterKinds.has(kind));
    const other = laterKinds.has('other') || laterKinds.has('stream');
    let severity: Severity = 'info';
    if (visual.length) severity = 'high';
    else if (annotations)
      severity =
        permissions === 1 || (permissions === 2 && (laterKinds.has('annotation') || laterKinds.has('page-annotations')))
          ? 'high'
          : 'medium';
    else if (other) severity = 'medium';
    const revisionList = later.map((r) => r.index + 1).join(', ');
    findings.push({
      type: 'modified-after-signature',
      severity,
      page: null,
      revision: later[0]!.index + 1,
      evidence: `Revision${later.length > 1 ? 's' : ''} ${revisionList} changed the document after the ${who} (${[...laterKinds].join(', ') || 'no content'})${permissions ? `; the certification allows level ${permissions} changes only` : ''}. Viewers may still show the signature as valid (incremental saving / shadow attack).`,
    });
  }
  return summaries;
}

/** DocMDP permission level P (1 = no changes, 2 = form fill, 3 = annotations), §12.8.2.2. */
function docMdpPermission(file: PdfFile, signature: PdfDict): number | undefined {
  const references = file.resolve(signature.entries.get('Reference'));
  if (!Array.isArray(references)) return undefined;
  for (const reference of references) {
    const dict = file.dictOf(reference);
    if (!dict || !isName(dict.entries.get('TransformMethod'), 'DocMDP')) continue;
    const params = file.dictOf(dict.entries.get('TransformParams'));
    const p = file.resolve(params?.entries.get('P'));
    return typeof p === 'number' ? p : 2;
  }
  return undefined;
}

/** PDF date string (§7.9.4), e.g. D:20240131120000+01'00'. */
export function parsePdfDate(text: string | undefined): Date | undefined {
  if (!text) return undefined;
  const match = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+-])?(\d{2})?'?(\d{2})?/.exec(text.trim());
  if (!match) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', sign, oh = '00', om = '00'] = match;
  const offset = sign === '+' || sign === '-' ? `${sign}${oh}:${om}` : 'Z';
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function parseIsoDate(text: string | undefined): Date | undefined {
  if (!text) return undefined;
  const date = new Date(text.trim());
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function xmpField(xmp: string, name: string): string | undefined {
  const escaped = name.replace(':', '\\:');
  const element = new RegExp(`<${escaped}[^>]*>([\\s\\S]*?)</${escaped}>`).exec(xmp);
  if (element) {
    const inner = element[1]!
      .replace(/<rdf:li[^>]*>([\s\S]*?)<\/rdf:li>/, '$1')
      .replace(/<[^>]+>/g, '')
      .trim();
    return decodeXmlEntities(inner);
  }
  const attribute = new RegExp(`${escaped}\\s*=\\s*"([^"]*)"`).exec(xmp);
  return attribute ? decodeXmlEntities(attribute[1]!) : undefined;
}

const decodeXmlEntities = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

function checkMetadata({ file, findings }: Context, root: PdfDict): Record<string, string | undefined> {
  const info = file.dictOf(file.trailer?.entries.get('Info'));
  const field = (name: string) => decodeTextString(file.resolve(info?.entries.get(name)));
  const metadata: Record<string, string | undefined> = {
    title: field('Title'),
    author: field('Author'),
    creator: field('Creator'),
    producer: field('Producer'),
    creationDate: field('CreationDate'),
    modDate: field('ModDate'),
  };
  const xmpRecord = file.recordOf(root.entries.get('Metadata'));
  let xmp = '';
  if (xmpRecord?.stream) {
    const decoded = file.streamData(xmpRecord);
    if (!decoded.undecodable) xmp = Buffer.from(decoded.data.subarray(0, 4 * 1024 * 1024)).toString('utf8');
  }
  if (xmp) {
    metadata.xmpCreatorTool = xmpField(xmp, 'xmp:CreatorTool');
    metadata.xmpProducer = xmpField(xmp, 'pdf:Producer');
    metadata.xmpCreateDate = xmpField(xmp, 'xmp:CreateDate');
    metadata.xmpModifyDate = xmpField(xmp, 'xmp:ModifyDate');
    const agents = [...xmp.matchAll(/stEvt:softwareAgent(?:="([^"]*)"|>([^<]*)<)/g)].map((m) => m[1] ?? m[2] ?? '').filter(Boolean);
    if (agents.length) metadata.xmpHistoryAgents = [...new Set(agents)].join('; ');
  }

  const hasInfo = Object.values(metadata).some((value) => value !== undefined && value !== '');
  if (!hasInfo) {
    findings.push({
      type: 'metadata-missing',
      severity: 'low',
      page: null,
      evidence: 'The document has neither an Info dictionary nor XMP metadata: producer and dates were never written or were stripped.',
    });
    return metadata;
  }

  const created = parsePdfDate(metadata.creationDate) ?? parseIsoDate(metadata.xmpCreateDate);
  const modified = parsePdfDate(metadata.modDate) ?? parseIsoDate(metadata.xmpModifyDate);
  if (created && modified && modified.getTime() < created.getTime() - 60_000) {
    findings.push({
      type: 'metadata-dates-impossible',
      severity: 'medium',
      page: null,
      evidence: `Modified (${modified.toISOString()}) before it was created (${created.toISOString()}).`,
    });
  } else if (created && modified && modified.getTime() - created.getTime() > 24 * 3600_000) {
    findings.push({
      type: 'metadata-modified-later',
      severity: 'info',
      page: null,
      evidence: `Last modified ${modified.toISOString()}, ${Math.round((modified.getTime() - created.getTime()) / 86_400_000)} days after creation (${created.toISOString()}).`,
    });
  }
  if (xmp && info) {
    const mismatches: string[] = [];
    const compareText = (a: string | undefined, b: string | undefined, label: string) => {
      if (a && b && a.trim() !== b.trim()) mismatches.push(`${label}: Info ${quote(a, 60)} vs XMP ${quote(b, 60)}`);
    };
    compareText(metadata.producer, metadata.xmpProducer, 'Producer');
    compareText(metadata.creator, metadata.xmpCreatorTool, 'Creator');
    const compareDate = (a: Date | undefined, b: Date | undefined, label: string) => {
      if (a && b && Math.abs(a.getTime() - b.getTime()) > 120_000)
        mismatches.push(`${label}: Info ${a.toISOString()} vs XMP ${b.toISOString()}`);
    };
    compareDate(parsePdfDate(metadata.creationDate), parseIsoDate(metadata.xmpCreateDate), 'CreationDate');
    compareDate(parsePdfDate(metadata.modDate), parseIsoDate(metadata.xmpModifyDate), 'ModDate');
    if (mismatches.length) {
      findings.push({
        type: 'metadata-mismatch',
        severity: 'medium',
        page: null,
        evidence: `Info dictionary and XMP metadata disagree (one was updated by a tool that left the other): ${mismatches.join('; ')}.`,
      });
    }
  }
  const tools = [metadata.producer, metadata.creator, metadata.xmpProducer, metadata.xmpCreatorTool, metadata.xmpHistoryAgents].filter(
    (t): t is string => Boolean(t),
  );
  const editors = [...new Set(tools.filter((tool) => EDITING_TOOLS.some((pattern) => pattern.test(tool))))];
  if (editors.length) {
    const online = editors.some((tool) => ONLINE_EDITORS.test(tool));
    // A PDF editor in the producer chain proves only that one was used, not what for, so
    // this never decides a verdict alone; an online editor weighs more.
    findings.push({
      type: 'editing-tool',
      severity: online ? 'low' : 'info',
      page: null,
      evidence: `Produced or last saved with a PDF editing tool: ${editors.map((e) => quote(e, 60)).join(', ')}.`,
    });
  }
  const creatorFamily = metadata.creator?.split(/[\s/(]/)[0]?.toLowerCase();
  const producerFamily = metadata.producer?.split(/[\s/(]/)[0]?.toLowerCase();
  if (
    metadata.creator &&
    metadata.producer &&
    creatorFamily &&
    producerFamily &&
    creatorFamily !== producerFamily &&
    editors.some((e) => e === metadata.producer)
  ) {
    findings.push({
      type: 'producer-differs',
      severity: 'low',
      page: null,
      evidence: `Authored with ${quote(metadata.creator, 60)} but last written by ${quote(metadata.producer, 60)}.`,
    });
  }
  return metadata;
}

function checkFonts({ findings }: Context, contents: PdfReport['contents']): void {
  const subsetsByFont = new Map<string, Map<string, Set<number>>>();
  for (const [pageNumber, { content }] of contents) {
    for (const baseFont of content.fonts.values()) {
      const match = /^([A-Z]{6})\+(.+)$/.exec(baseFont);
      if (!match) continue;
      const [, prefix, name] = match;
      const subsets = subsetsByFont.get(name!) ?? new Map<string, Set<number>>();
      const pages = subsets.get(prefix!) ?? new Set<number>();
      pages.add(pageNumber);
      subsets.set(prefix!, pages);
      subsetsByFont.set(name!, subsets);
    }
  }
  for (const [name, subsets] of subsetsByFont) {
    if (subsets.size < 2) continue;
    const pageSets = [...subsets.values()];
    const shared = [...pageSets[0]!].filter((page) => pageSets.slice(1).some((set) => set.has(page)));
    findings.push({
      type: 'font-subset-mismatch',
      // Two subsets of one font on one page: text was set by two different programs.
      severity: shared.length ? 'medium' : 'low',
      page: shared[0] ?? null,
      evidence: `Font ${quote(name)} is embedded as ${subsets.size} different subsets (${[...subsets.keys()].join(', ')})${shared.length ? ` on the same page ${shared[0]}` : ' on different pages'}: text was added or edited by a second tool.`,
    });
  }
}

function checkActionsAndEmbeddedFiles({ file, findings, checkAbort }: Context, root: PdfDict): void {
  const reachable = file.reachable();
  const once = new Set<string>();
  const add = (type: string, severity: Severity, evidence: string) => {
    const key = `${type}:${evidence}`;
    if (once.has(key) || findings.filter((f) => f.type === type).length >= 20) return;
    once.add(key);
    findings.push({ type, severity, page: null, evidence });
  };
  let visited = 0;
  for (const num of reachable) {
    if (++visited % 5000 === 0) checkAbort();
    const record = file.finalTable.get(num);
    if (!record) continue;
    const dict = isDict(record.value) ? record.value : record.stream?.dict;
    if (!dict) continue;
    inspectDict(dict, 0);
    if (record.stream && isName(record.stream.dict.entries.get('Type'), 'EmbeddedFile')) {
      const decoded = file.streamData(record);
      const head = latin1(decoded.data, 0, Math.min(4, decoded.data.length));
      const executable = head.startsWith('MZ') || head.startsWith('\x7fELF') || head.startsWith('#!');
      add(
        'embedded-file',
        executable ? 'high' : 'medium',
        `Embedded file stream of ${decoded.data.length} bytes${executable ? ' holding an executable program' : ''}.`,
      );
    }
  }
  function inspectDict(dict: PdfDict, depth: number): void {
    if (depth > 12) return;
    const action = dict.entries.get('S');
    if (isName(action, 'JavaScript') || dict.entries.has('JS')) {
      const js = file.resolve(dict.entries.get('JS'));
      const code = isString(js)
        ? latin1(js.bytes, 0, Math.min(js.bytes.length, 200))
        : isRef(dict.entries.get('JS'))
          ? '(script stream)'
          : '';
      add('javascript', 'high', `JavaScript action${code ? `: ${quote(code.replace(/\s+/g, ' '), 120)}` : ''}.`);
    } else if (isName(action, 'Launch')) {
      const target =
        decodeTextString(file.resolve(dict.entries.get('F'))) ??
        decodeTextString(file.resolve(file.dictOf(dict.entries.get('Win'))?.entries.get('F')));
      add('launch-action', 'high', `Launch action that starts a program${target ? ` ${quote(target)}` : ''}.`);
    } else if (isName(action, 'URI')) {
      add('uri-action', 'info', `Link to ${quote(decodeTextString(file.resolve(dict.entries.get('URI'))) ?? '?')}.`);
    } else if (isName(action, 'SubmitForm') || isName(action, 'ImportData')) {
      add(
        'form-submit-action',
        'medium',
        `${(action as { name: string }).name} action sending or loading form data${dict.entries.has('F') ? ` (${quote(decodeTextString(file.resolve(file.dictOf(dict.entries.get('F'))?.entries.get('F') ?? dict.entries.get('F'))) ?? '?')})` : ''}.`,
      );
    } else if (isName(action, 'GoToR') || isName(action, 'GoToE')) {
      add('remote-goto-action', 'low', `${(action as { name: string }).name} action opening another document.`);
    }
    if (isName(dict.entries.get('Type'), 'Filespec') && dict.entries.has('EF')) {
      const name =
        decodeTextString(file.resolve(dict.entries.get('UF'))) ?? decodeTextString(file.resolve(dict.entries.get('F'))) ?? '(unnamed)';
      add(
        'embedded-file',
        EXECUTABLE_NAME.test(name) ? 'high' : 'medium',
        `Embedded file ${quote(name)}${EXECUTABLE_NAME.test(name) ? ' with an executable file type' : ''}.`,
      );
    }
    if (dict.entries.has('RichMedia') || isName(dict.entries.get('Subtype'), 'RichMedia'))
      add('rich-media', 'low', 'Rich media (Flash/video) content.');
    if (dict.entries.has('XFA')) add('xfa-form', 'low', 'XFA form: its content can differ from what non-XFA viewers show.');
    // Direct (not indirect) sub-dictionaries are part of this object: look inside them too.
    const visit = (value: PdfValue, level: number) => {
      if (level > 8) return;
      if (isDict(value)) inspectDict(value, depth + 1);
      else if (Array.isArray(value)) for (const item of value.slice(0, 10_000)) visit(item, level + 1);
    };
    for (const value of dict.entries.values()) visit(value, 0);
  }
  const names = file.dictOf(root.entries.get('Names'));
  if (names?.entries.has('JavaScript')) add('javascript', 'high', 'Document-level JavaScript in the catalog name tree.');
}

function checkOrphans({ file, findings }: Context): void {
  const table = file.finalTable;
  const reachable = file.reachable(table);
  const containers = new Set([...table.values()].flatMap((record) => (record.inObjectStream !== undefined ? [record.inObjectStream] : [])));
  const orphans = [...table.values()].filter((record) => {
    if (reachable.has(record.num) || containers.has(record.num)) return false;
    const dict = record.stream?.dict ?? (isDict(record.value) ? record.value : undefined);
    if (dict && (isName(dict.entries.get('Type'), 'XRef') || isName(dict.entries.get('Type'), 'ObjStm') || dict.entries.has('Linearized')))
      return false;
    return true;
  });
  const deletedButPresent = file.revisions.flatMap((revision) =>
    revision.freed.filter((num) => file.records.some((record) => record.num === num && record.revision < revision.index)),
  );
  const textOf = (record: ObjectRecord) => {
    if (!record.stream || record.stream.dict.entries.has('Subtype')) return '';
    const decoded = file.streamData(record);
    if (decoded.undecodable || decoded.imageFilter) return '';
    const source = latin1(decoded.data, 0, Math.min(decoded.data.length, 100_000));
    const strings = [...source.matchAll(/\((?:\\.|[^\\)]){1,200}\)\s*(?:Tj|')|<([0-9a-fA-F]{2,400})>\s*Tj/g)].map((m) =>
      m[1] ? Buffer.from(m[1], 'hex').toString('latin1') : m[0].replace(/^\(|\)\s*(?:Tj|')$/g, ''),
    );
    return strings.join(' ').trim();
  };
  const withText = [...orphans, ...deletedButPresent.flatMap((num) => file.records.filter((r) => r.num === num))]
    .map((record) => ({ record, text: textOf(record) }))
    .filter((entry) => entry.text);
  if (withText.length) {
    findings.push({
      type: 'orphaned-content',
      severity: 'medium',
      page: null,
      evidence: `Content no page uses any more is still in the file (${withText.length} stream${withText.length > 1 ? 's' : ''}), e.g. object ${withText[0]!.record.num}: ${quote(withText[0]!.text)}.`,
    });
  }
  if (orphans.length || deletedButPresent.length) {
    findings.push({
      type: 'orphaned-objects',
      severity: orphans.length + deletedButPresent.length > 0 && !withText.length ? 'low' : 'info',
      page: null,
      evidence: `${orphans.length} object${orphans.length === 1 ? ' is' : 's are'} not reachable from the document catalog${deletedButPresent.length ? ` and ${deletedButPresent.length} deleted object${deletedButPresent.length === 1 ? '' : 's'} remain in the file` : ''} (objects ${orphans
        .slice(0, 10)
        .map((r) => r.num)
        .join(', ')}${orphans.length > 10 ? ', …' : ''}).`,
    });
  }
}

function checkFileStructure({ file, findings }: Context): void {
  const mismatches = file.revisions.reduce((sum, revision) => sum + revision.xrefMismatches, 0);
  if (mismatches > 0) {
    findings.push({
      type: 'xref-inconsistent',
      severity: 'low',
      page: null,
      evidence: `${mismatches} cross-reference entr${mismatches === 1 ? 'y points' : 'ies point'} at the wrong byte offset: the file was edited without rewriting its index.`,
    });
  }
  if (file.trailingBytes > 0) {
    findings.push({
      type: 'data-after-eof',
      severity: file.trailingBytes > 1024 ? 'medium' : 'low',
      page: null,
      evidence: `${file.trailingBytes} bytes follow the final %%EOF; viewers ignore them, so they can hide data.`,
    });
  }
  if (file.revisions.every((revision) => !revision.trailer)) {
    findings.push({
      type: 'trailer-missing',
      severity: 'low',
      page: null,
      evidence: 'No trailer or cross-reference stream was found; the file was reconstructed from its objects.',
    });
  }
}
