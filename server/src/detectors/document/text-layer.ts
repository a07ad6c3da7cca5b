/**
 * Compares a PDF's text layer (what search, copy-paste and automated parsers read) with what
 * the rendered page shows (OCR of the rendering, or of the scanned image under an OCR
 * layer). They differ when a ToUnicode map or font was doctored to show one thing and say
 * another, or when the invisible OCR layer of a scan was edited (ISO 32000-1 §9.10 text
 * extraction; the "text layer vs rendering" gap is the parser-confusion attack class
 * described by Markwood et al., "PDF Mirage: Content Masking Attack Against Information-Based
 * Online Services", USENIX Security 2017).
 */
import type { TextRun } from './pdf-content.js';
import type { Finding, FindingBox } from './findings.js';
import type { OcrWord } from './ocr.js';

export interface TextLayerComparison {
  compared: number;
  mismatched: number;
  findings: Finding[];
  /** Set when OCR disagreed with too much of the page to be trusted as a reference. */
  unreliable?: string;
}

const normalize = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
const digits = (text: string) => text.replace(/\D+/g, '');

function editDistance(a: string, b: string): number {
  if (a.length > 400 || b.length > 400) return Math.abs(a.length - b.length) + Math.min(a.length, b.length) / 2;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * `toPixels` maps a run's PDF box to pixels of the OCR'd image; `toPageBox` maps it to the
 * finding's page box. Only runs with at least three letters or digits are compared.
 */
export function compareTextLayer(
  runs: TextRun[],
  words: OcrWord[],
  page: number,
  toPixels: (run: TextRun) => { x0: number; y0: number; x1: number; y1: number },
  toPageBox: (run: TextRun) => FindingBox,
): TextLayerComparison {
  const mismatches: Finding[] = [];
  let compared = 0;
  for (const run of runs) {
    const expected = normalize(run.text);
    if (expected.length < 3) continue;
    const box = toPixels(run);
    const slack = 0.3 * (box.y1 - box.y0);
    const inside = words.filter((word) => {
      const cx = (word.bbox.x0 + word.bbox.x1) / 2;
      const cy = (word.bbox.y0 + word.bbox.y1) / 2;
      return cx >= box.x0 - slack && cx <= box.x1 + slack && cy >= box.y0 - slack && cy <= box.y1 + slack;
    });
    if (!inside.length) continue;
    // Text-layer widths are estimates (fonts without /Widths, OCR layers set in a stand-in
    // font): extend along the line to OCR words that continue the phrase.
    const lineHeight = box.y1 - box.y0;
    const onLine = words.filter(
      (word) =>
        !inside.includes(word) &&
        (word.bbox.y0 + word.bbox.y1) / 2 >= box.y0 - slack &&
        (word.bbox.y0 + word.bbox.y1) / 2 <= box.y1 + slack,
    );
    for (let grew = true; grew;) {
      grew = false;
      const left = Math.min(...inside.map((w) => w.bbox.x0));
      const right = Math.max(...inside.map((w) => w.bbox.x1));
      for (const word of onLine) {
        if (inside.includes(word)) continue;
        if (
          (word.bbox.x0 >= right && word.bbox.x0 - right < 1.2 * lineHeight) ||
          (word.bbox.x1 <= left && left - word.bbox.x1 < 1.2 * lineHeight)
        ) {
          inside.push(word);
          grew = true;
        }
      }
    }
    const seen = normalize(
      inside
        .sort((a, b) => a.bbox.x0 - b.bbox.x0)
        .map((w) => w.text)
        .join(' '),
    );
    if (!seen) continue;
    compared++;
    const similarity = 1 - editDistance(expected, seen) / Math.max(expected.length, seen.length);
    const confidence = inside.reduce((sum, w) => sum + w.confidence, 0) / inside.length;
    const figuresDiffer = digits(expected) !== digits(seen) && digits(expected).length > 0 && digits(seen).length > 0;
    // Figures are judged only on words OCR read with high confidence: one changed digit is
    // the whole attack, so there is no similarity allowance for them.
    const figureConfidence = Math.min(...inside.filter((w) => /\d/.test(w.text)).map((w) => w.confidence), 100);
    if ((similarity < 0.5 && confidence >= 70) || (figuresDiffer && figureConfidence >= 85 && similarity >= 0.5)) {
      mismatches.push({
        type: 'text-layer-mismatch',
        severity: figuresDiffer ? 'high' : 'medium',
        page,
        box: toPageBox(run),
        evidence: `The text layer says ${JSON.stringify(run.text.trim().slice(0, 80))} but the page shows ${JSON.stringify(
          inside
            .map((w) => w.text)
            .join(' ')
            .slice(0, 80),
        )} (OCR confidence ${Math.round(confidence)}).`,
      });
    }
  }
  // Wholesale disagreement means OCR failed on this page (odd font, tiny text), not that
  // every line was doctored. Figures that differ inside otherwise matching lines still count.
  const garbled = mismatches.filter((finding) => finding.severity !== 'high').length;
  if (compared >= 4 && garbled > 0.4 * compared) {
    return {
      compared,
      mismatched: mismatches.length,
      findings: [],
      unreliable: `OCR disagreed with ${garbled} of ${compared} text runs: too many to tell tampering from recognition errors`,
    };
  }
  return { compared, mismatched: mismatches.length, findings: mismatches };
}
