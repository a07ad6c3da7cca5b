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
import { ContentInterpreter, hiddenOptionalContentGroups, type PageContent } from './pdf-content.js';
import { PdfFile, type Box, type ObjectRecord, type PageInfo } from './pdf-structure.js';
import type { DecodedStream } from './pdf-syntax.js';
import type { Finding } from './findings.js';
import { MediaError } from '../types.js';
import { checkActionsAndEmbeddedFiles } from './pdf-checks/active-content.js';
import { area, intersect, isVisible, round1, type Context } from './pdf-checks/context.js';
import { checkFileStructure, sweepForDecompressionBombs } from './pdf-checks/file-structure.js';
import { checkFonts } from './pdf-checks/fonts.js';
import { checkAnnotations, checkHiddenText, checkOrphans } from './pdf-checks/hidden-content.js';
import { checkMetadata } from './pdf-checks/metadata.js';
import { checkRevisions } from './pdf-checks/revisions.js';
import { checkSignatures } from './pdf-checks/signatures.js';

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
  /** An encrypted document that opens without a password, decrypted and examined like any other. */
  decrypted: boolean;
  /** How it is encrypted, or why it could not be opened (null when it is not encrypted). */
  encryption: string | null;
  /** A stream's stored bytes as far as they decode, decrypted (a scanned page's JPEG as embedded). */
  readStream: (record: ObjectRecord) => DecodedStream;
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

export function analyzePdf(bytes: Uint8Array, checkAbort: () => void): PdfReport {
  const file = new PdfFile(bytes, checkAbort);
  const context: Context = { file, findings: [], checkAbort };
  const trailer = file.trailer;
  const encrypted = file.encryption !== null;
  const decrypted = file.encryption !== null && 'method' in file.encryption;
  const readable = !encrypted || decrypted;
  const table = file.finalTable;
  const root = file.dictOf(trailer?.entries.get('Root'), table);
  if (!trailer) throw new MediaError('broken PDF: no trailer or cross-reference stream was found (is the file truncated?)');
  if (!root) throw new MediaError('broken PDF: the trailer names no readable document catalog (/Root)');

  if (readable) sweepForDecompressionBombs(context);
  checkAbort();

  const pages = file.pages(table, trailer);
  if (pages.length === 0) throw new MediaError('broken PDF: the page tree holds no pages');
  const hiddenGroups = hiddenOptionalContentGroups(file, table, root);
  const contents: PdfReport['contents'] = new Map();
  const pageReports: PdfPageReport[] = [];
  if (readable) {
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
  }
  if (file.encryption) {
    context.findings.push({
      type: 'encrypted',
      severity: 'info',
      page: null,
      evidence:
        'method' in file.encryption
          ? `The document is encrypted (${file.encryption.method}) but opens without a password, as its owner password only restricts what a reader may do: it was decrypted and examined in full.`
          : `The document is encrypted and ${file.encryption.reason}: page content could not be inspected, only its structure.`,
    });
  }

  const revisions = checkRevisions(context, hiddenGroups);
  const signatures = checkSignatures(context, revisions);
  // Without the key its strings are ciphertext: no metadata to report or compare.
  const metadata = readable ? checkMetadata(context, root) : {};
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
    decrypted,
    encryption: file.encryption ? ('method' in file.encryption ? file.encryption.method : file.encryption.reason) : null,
    readStream: (record) => file.streamData(record),
    contents,
  };
}

