/**
 * File-structure checks: every stream inflated once under a budget (decompression bombs) and
 * cross-reference tables that disagree with the objects they index (ISO 32000-1 §7.5.4).
 */
import { MediaError } from '../../types.js';
import { type Context } from './context.js';

export function sweepForDecompressionBombs({ file, checkAbort }: Context): void {
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

export function checkFileStructure({ file, findings }: Context): void {
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
