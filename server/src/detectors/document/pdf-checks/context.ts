/** What every check of a PDF reads and writes, and the page geometry they share. */
import type { TextRun } from '../pdf-content.js';
import { PdfFile, type Box, type PageInfo } from '../pdf-structure.js';
import type { Finding, FindingBox } from '../findings.js';

export interface Context {
  file: PdfFile;
  findings: Finding[];
  checkAbort: () => void;
}

export const round1 = (value: number) => Math.round(value * 10) / 10;
export const area = (box: Box) => Math.max(0, box[2] - box[0]) * Math.max(0, box[3] - box[1]);
export const intersect = (a: Box, b: Box): Box => [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
export const overlapRatio = (inner: Box, outer: Box) => (area(inner) > 0 ? area(intersect(inner, outer)) / area(inner) : 0);
export const quote = (text: string, max = 80) => JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
export const isVisible = (run: TextRun) => run.renderMode !== 3 && run.renderMode !== 7 && run.fillAlpha > 0 && !run.hiddenByOptionalContent;

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
