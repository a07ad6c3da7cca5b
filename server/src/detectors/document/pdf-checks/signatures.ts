/**
 * Digital signatures (ISO 32000-1 §12.8): ByteRange coverage (§12.8.1), DocMDP permissions
 * (§12.8.2.2), and content changed after signing (Mladenov et al., CCS 2019; Mainka et al.,
 * NDSS 2021).
 */
import { PdfFile } from '../pdf-structure.js';
import { decodeTextString, isDict, isName, isString, type PdfDict } from '../pdf-syntax.js';
import type { Severity } from '../findings.js';
import { type Context, quote } from './context.js';
import { type RevisionChanges } from './revisions.js';
import type { SignatureSummary } from '../pdf-forensics.js';

export function checkSignatures({ file, findings }: Context, revisions: RevisionChanges[]): SignatureSummary[] {
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
