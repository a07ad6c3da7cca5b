/**
 * Hidden content: text no reader sees (render modes 3 and 7, §9.3.6; zero opacity; covered,
 * white, microscopic or off-page text; optional content off by default, §8.11), annotations
 * hidden or laid over text (§12.5.3), and content no page uses any more (orphans).
 */
import type { PageContent, TextRun } from '../pdf-content.js';
import type { Box, ObjectRecord, PageInfo } from '../pdf-structure.js';
import { decodeTextString, isDict, isName, latin1 } from '../pdf-syntax.js';
import type { Severity } from '../findings.js';
import { type Context, area, overlapRatio, quote, isVisible, toPageBox } from './context.js';

export function checkHiddenText({ findings }: Context, page: PageInfo, content: PageContent, scanned: boolean): void {
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

export function checkAnnotations({ file, findings }: Context, page: PageInfo, content: PageContent): void {
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

export function checkOrphans({ file, findings }: Context): void {
  const table = file.finalTable;
  const reachable = file.reachable(table);
  const containers = new Set([...table.values()].flatMap((record) => (record.inObjectStream !== undefined ? [record.inObjectStream] : [])));
  const orphans = [...table.values()].filter((record) => {
    if (reachable.has(record.num) || containers.has(record.num) || (record.inObjectStream === undefined && file.hintStreamOffsets.includes(record.offset))) return false;
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
