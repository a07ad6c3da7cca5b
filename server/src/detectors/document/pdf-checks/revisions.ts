/**
 * Incremental updates (ISO 32000-1 §7.5.6): what each revision added, modified or deleted, and
 * the text a reader sees before and after it, compared line by line.
 */
import { ContentInterpreter, type TextRun } from '../pdf-content.js';
import { PdfFile, type Box, type ObjectRecord, type PageInfo } from '../pdf-structure.js';
import { isDict, isName, isRef, type PdfValue } from '../pdf-syntax.js';
import type { Finding, Severity } from '../findings.js';
import { type Context, overlapRatio, quote, isVisible, toPageBox } from './context.js';
import type { RevisionSummary } from '../pdf-forensics.js';

export interface RevisionChanges {
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

export function checkRevisions(context: Context, hiddenGroups: Set<number>): RevisionChanges[] {
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
