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

/** Runs on one line closer than this share of its height are one phrase (joinLineRuns). */
const GAP_SHARE = 0.6;
/** OCR words a run's comparison may take in on either side of its own, along the line. */
const MAX_EXTENSION = 12;
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
 * OCR's confidence in the words where the text layer's figures and the page's differ: the
 * lowest over the words holding a character that the edit-distance alignment of the two
 * (normalised) texts pairs with a different one, where either is a digit. A digit OCR misread as
 * a letter ("N1" read "NT") is then judged by the misread word's confidence, not the others'.
 */
function confidenceWhereFiguresDiffer(expected: string, words: OcrWord[]): number {
  const owners: number[] = [];
  let seen = '';
  words.forEach((word, index) => {
    const text = normalize(word.text);
    seen += text;
    for (let k = 0; k < text.length; k++) owners.push(index);
  });
  const withDigits = words.filter((w) => /\d/.test(w.text)).map((w) => w.confidence);
  if (!seen || expected.length > 400 || seen.length > 400) return Math.min(...withDigits, 100);
  const n = expected.length, m = seen.length;
  const cost = Array.from({ length: n + 1 }, (_, i) => Int32Array.from({ length: m + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= n; i++)
    for (let j = 1; j <= m; j++)
      cost[i]![j] = Math.min(cost[i - 1]![j]! + 1, cost[i]![j - 1]! + 1, cost[i - 1]![j - 1]! + (expected[i - 1] === seen[j - 1] ? 0 : 1));
  const isDigit = (char: string | undefined) => char !== undefined && char >= '0' && char <= '9';
  const marked = new Set<number>();
  for (let i = n, j = m; i > 0 || j > 0; ) {
    if (i > 0 && j > 0 && cost[i]![j] === cost[i - 1]![j - 1]! + (expected[i - 1] === seen[j - 1] ? 0 : 1)) {
      if (expected[i - 1] !== seen[j - 1] && (isDigit(expected[i - 1]) || isDigit(seen[j - 1]))) marked.add(owners[j - 1]!);
      i--; j--;
    } else if (j > 0 && cost[i]![j] === cost[i]![j - 1]! + 1) {
      if (isDigit(seen[j - 1])) marked.add(owners[j - 1]!);
      j--;
    } else {
      // A digit of the text layer the page lacks: the word OCR read where it should be.
      if (isDigit(expected[i - 1])) marked.add(owners[Math.max(0, Math.min(m - 1, j - 1))]!);
      i--;
    }
  }
  return marked.size ? Math.min(...[...marked].map((index) => words[index]!.confidence)) : Math.min(...withDigits, 100);
}

/**
 * Runs that continue one another along a line joined into phrases. Producers split text
 * anywhere (a browser printing a page splits "2026-11-01" at a kerned pair, and sets a figure
 * apart from its currency), while OCR reads whole words: a part of a word compared with the
 * word would look altered. Runs are joined in content order when they share a line and the gap
 * between them is under GAP_SHARE of the line's height (a word space is about a quarter).
 */
export function joinLineRuns(runs: TextRun[]): TextRun[] {
  const phrases: TextRun[] = [];
  for (const run of runs) {
    const previous = phrases.at(-1);
    const height = Math.max(run.box[3] - run.box[1], previous ? previous.box[3] - previous.box[1] : 0);
    const gap = previous ? run.box[0] - previous.box[2] : Infinity;
    const sameLine = previous !== undefined && Math.abs(run.box[1] - previous.box[1]) < 0.25 * height && Math.abs(run.box[3] - previous.box[3]) < 0.25 * height;
    if (previous && sameLine && gap > -0.3 * height && gap < GAP_SHARE * height) {
      phrases[phrases.length - 1] = {
        ...previous,
        text: previous.text + (gap > 0.15 * height && !/\s$/.test(previous.text) && !/^\s/.test(run.text) ? ' ' : '') + run.text,
        box: [Math.min(previous.box[0], run.box[0]), Math.min(previous.box[1], run.box[1]), Math.max(previous.box[2], run.box[2]), Math.max(previous.box[3], run.box[3])],
      };
    } else phrases.push(run);
  }
  return phrases;
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
  for (const run of joinLineRuns(runs)) {
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
    // font), so the phrase may continue into OCR words along the line. But a run is often a
    // part of its line (a table cell, a word split for kerning, as browsers print pages), so the
    // comparison takes the run's own words extended by whichever neighbours fit its text best.
    const lineHeight = box.y1 - box.y0;
    const onLine = words.filter(
      (word) =>
        !inside.includes(word) &&
        (word.bbox.y0 + word.bbox.y1) / 2 >= box.y0 - slack &&
        (word.bbox.y0 + word.bbox.y1) / 2 <= box.y1 + slack,
    );
    const line = [...inside, ...onLine].sort((a, b) => a.bbox.x0 - b.bbox.x0);
    const first = Math.min(...inside.map((word) => line.indexOf(word)));
    const last = Math.max(...inside.map((word) => line.indexOf(word)));
    const continues = (left: OcrWord, right: OcrWord) => right.bbox.x0 >= left.bbox.x1 && right.bbox.x0 - left.bbox.x1 < 1.2 * lineHeight;
    let from = first, to = last;
    while (from > 0 && first - from < MAX_EXTENSION && continues(line[from - 1]!, line[from]!)) from--;
    while (to < line.length - 1 && to - last < MAX_EXTENSION && continues(line[to]!, line[to + 1]!)) to++;
    // The window holding the run's own words (first..last) always competes, so one is chosen.
    let best = { words: [] as OcrWord[], seen: '', similarity: -1 };
    for (let a = from; a <= first; a++) {
      for (let b = last; b <= to; b++) {
        const words = line.slice(a, b + 1);
        const seen = normalize(words.map((w) => w.text).join(' '));
        const similarity = seen ? 1 - editDistance(expected, seen) / Math.max(expected.length, seen.length) : 0;
        if (similarity > best.similarity) best = { words, seen, similarity };
      }
    }
    const { words: shown, seen, similarity } = best;
    if (!seen) continue;
    compared++;
    const confidence = shown.reduce((sum, w) => sum + w.confidence, 0) / shown.length;
    const figuresDiffer = digits(expected) !== digits(seen) && digits(expected).length > 0 && digits(seen).length > 0;
    // Figures are judged only on words OCR read with high confidence: one changed digit is
    // the whole attack, so there is no similarity allowance for them.
    const figureConfidence = figuresDiffer ? confidenceWhereFiguresDiffer(expected, shown) : 100;
    if ((similarity < 0.5 && confidence >= 70) || (figuresDiffer && figureConfidence >= 85 && similarity >= 0.5)) {
      mismatches.push({
        type: 'text-layer-mismatch',
        severity: figuresDiffer ? 'high' : 'medium',
        page,
        box: toPageBox(run),
        evidence: `The text layer says ${JSON.stringify(run.text.trim().slice(0, 80))} but the page shows ${JSON.stringify(
          shown
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
