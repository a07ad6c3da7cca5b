/**
 * A content-stream interpreter that records where text, images and filled shapes end up
 * on the page (ISO 32000-1:2008 §8.4 graphics state, §8.5 path construction and painting,
 * §8.8 external objects, §8.11.3 optional content in content streams, §9.3 text state,
 * §9.4 text objects, §9.10.3 ToUnicode CMaps).
 *
 * It draws nothing. It tracks just enough state to tell visible text from text that a
 * reader never sees: render mode 3 (invisible), zero opacity, white fill, microscopic size,
 * positions outside the page, hidden optional-content layers, and text painted over by a
 * later opaque shape (the classic "white box over the old amount" edit).
 */
import type { Box, ObjectRecord, PageInfo, PdfFile } from './pdf-structure.js';
import { PdfLexer, isName, isRef, isString, type PdfDict, type PdfOperator, type PdfValue } from './pdf-syntax.js';

export interface TextRun {
  text: string;
  /** Bounding box in PDF user space (origin bottom-left). */
  box: Box;
  fontSize: number;
  renderMode: number;
  fillLuminance: number | null;
  fillAlpha: number;
  baseFont: string;
  hiddenByOptionalContent: boolean;
  order: number;
}

export interface PaintedShape {
  box: Box;
  luminance: number | null;
  alpha: number;
  order: number;
}

export interface PlacedImage {
  box: Box;
  record: ObjectRecord | undefined;
  order: number;
}

export interface PageContent {
  runs: TextRun[];
  fills: PaintedShape[];
  images: PlacedImage[];
  fonts: Map<string, string>;
  undecodableStreams: string[];
}

type Matrix = [number, number, number, number, number, number];
const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];
const multiply = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[1] * n[2],
  m[0] * n[1] + m[1] * n[3],
  m[2] * n[0] + m[3] * n[2],
  m[2] * n[1] + m[3] * n[3],
  m[4] * n[0] + m[5] * n[2] + n[4],
  m[4] * n[1] + m[5] * n[3] + n[5],
];
const apply = (m: Matrix, x: number, y: number): [number, number] => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];

interface GraphicsState {
  ctm: Matrix;
  fillLuminance: number | null;
  fillComponents: number;
  fillAlpha: number;
  charSpacing: number;
  wordSpacing: number;
  horizontalScale: number;
  leading: number;
  rise: number;
  renderMode: number;
  font: FontInfo | null;
  fontSize: number;
}

interface FontInfo {
  baseFont: string;
  twoByte: boolean;
  toUnicode: Map<number, string> | null;
  width(code: number): number;
}

const MAX_OPERATIONS = 3_000_000;
const MAX_FORM_DEPTH = 8;

export class ContentInterpreter {
  private operations = 0;
  private order = 0;
  private readonly fontCache = new Map<PdfDict, FontInfo>();
  private readonly result: PageContent = { runs: [], fills: [], images: [], fonts: new Map(), undecodableStreams: [] };

  constructor(
    private readonly file: PdfFile,
    private readonly table: Map<number, ObjectRecord>,
    private readonly hiddenGroups: Set<number>,
    private readonly checkAbort: () => void,
  ) {}

  run(page: PageInfo): PageContent {
    const contents = this.file.resolve(page.dict.entries.get('Contents'), this.table);
    const parts = Array.isArray(contents) ? contents : [page.dict.entries.get('Contents')];
    const chunks: Uint8Array[] = [];
    for (const part of parts) {
      const record = isRef(part) ? this.table.get(part.num) : undefined;
      if (!record?.stream) continue;
      const decoded = this.file.streamData(record);
      if (decoded.undecodable) this.result.undecodableStreams.push(decoded.undecodable);
      else chunks.push(decoded.data, Uint8Array.of(0x0a));
    }
    const joined = Buffer.concat(chunks);
    this.interpret(joined, page.resources, this.initialState(), 0);
    return this.result;
  }

  private initialState(): GraphicsState {
    return {
      ctm: IDENTITY,
      fillLuminance: 0,
      fillComponents: 1,
      fillAlpha: 1,
      charSpacing: 0,
      wordSpacing: 0,
      horizontalScale: 1,
      leading: 0,
      rise: 0,
      renderMode: 0,
      font: null,
      fontSize: 0,
    };
  }

  private interpret(data: Uint8Array, resources: PdfDict | undefined, initial: GraphicsState, depth: number): void {
    const lexer = new PdfLexer(data);
    const stack: GraphicsState[] = [];
    let state: GraphicsState = { ...initial };
    let textMatrix: Matrix = IDENTITY;
    let lineMatrix: Matrix = IDENTITY;
    let operands: PdfValue[] = [];
    let pathBox: Box | null = null;
    const hiddenMarks: boolean[] = [];
    const hidden = () => hiddenMarks.includes(true);

    const extendPath = (x: number, y: number) => {
      const [px, py] = apply(state.ctm, x, y);
      pathBox = pathBox
        ? [Math.min(pathBox[0], px), Math.min(pathBox[1], py), Math.max(pathBox[2], px), Math.max(pathBox[3], py)]
        : [px, py, px, py];
    };
    const numberAt = (i: number) => (typeof operands[i] === 'number' ? (operands[i] as number) : 0);

    const showText = (bytes: Uint8Array, adjustments?: Array<Uint8Array | number>) => {
      const font = state.font;
      const pieces = adjustments ?? [bytes];
      const fontSize = state.fontSize;
      const start = textMatrix;
      let text = '';
      let advance = 0;
      for (const piece of pieces) {
        if (typeof piece === 'number') {
          const shift = (-piece / 1000) * fontSize * state.horizontalScale;
          if (-piece > 250 && !text.endsWith(' ')) text += ' ';
          advance += shift;
          continue;
        }
        const step = font?.twoByte ? 2 : 1;
        for (let i = 0; i + step <= piece.length; i += step) {
          const code = step === 2 ? (piece[i]! << 8) | piece[i + 1]! : piece[i]!;
          const char = font?.toUnicode?.get(code) ?? (step === 1 ? String.fromCharCode(code) : '');
          text += char;
          const glyphWidth = (font ? font.width(code) : 500) / 1000;
          const spacing = state.charSpacing + (step === 1 && code === 32 ? state.wordSpacing : 0);
          advance += (glyphWidth * fontSize + spacing) * state.horizontalScale;
        }
      }
      const renderMatrix = multiply(start, state.ctm);
      const corners = [
        apply(renderMatrix, 0, state.rise - 0.22 * fontSize),
        apply(renderMatrix, advance, state.rise - 0.22 * fontSize),
        apply(renderMatrix, 0, state.rise + 0.9 * fontSize),
        apply(renderMatrix, advance, state.rise + 0.9 * fontSize),
      ];
      const xs = corners.map((c) => c[0]);
      const ys = corners.map((c) => c[1]);
      // Effective size: the text-space em mapped through the text and graphics matrices.
      const [ex, ey] = apply(renderMatrix, 0, fontSize);
      const [ox, oy] = apply(renderMatrix, 0, 0);
      const effectiveSize = Math.hypot(ex - ox, ey - oy);
      if (text.trim()) {
        this.result.runs.push({
          text,
          box: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)],
          fontSize: effectiveSize,
          renderMode: state.renderMode,
          fillLuminance: state.fillLuminance,
          fillAlpha: state.fillAlpha,
          baseFont: font?.baseFont ?? '',
          hiddenByOptionalContent: hidden(),
          order: this.order++,
        });
      }
      textMatrix = multiply([1, 0, 0, 1, advance, 0], textMatrix);
    };

    for (;;) {
      const token = lexer.parse();
      if (token === undefined) break;
      if (typeof token !== 'object' || token === null || Array.isArray(token) || token.kind !== 'op') {
        operands.push(token as PdfValue);
        if (operands.length > 4096) operands = [];
        continue;
      }
      if (++this.operations > MAX_OPERATIONS) return;
      if (this.operations % 50_000 === 0) this.checkAbort();
      const op = (token as PdfOperator).op;
      switch (op) {
        case 'q':
          if (stack.length < 256) stack.push({ ...state });
          break;
        case 'Q':
          state = stack.pop() ?? state;
          break;
        case 'cm':
          if (operands.length >= 6) state.ctm = multiply(operands.slice(-6).map(Number) as Matrix, state.ctm);
          break;
        case 'BT':
          textMatrix = IDENTITY;
          lineMatrix = IDENTITY;
          break;
        case 'Tf': {
          const fontName = operands[0];
          state.fontSize = numberAt(1);
          const fonts = this.file.dictOf(resources?.entries.get('Font'), this.table);
          const fontDict = isName(fontName) ? this.file.dictOf(fonts?.entries.get(fontName.name), this.table) : undefined;
          state.font = fontDict ? this.fontInfo(fontDict) : null;
          if (isName(fontName) && state.font) this.result.fonts.set(fontName.name, state.font.baseFont);
          break;
        }
        case 'Tc':
          state.charSpacing = numberAt(0);
          break;
        case 'Tw':
          state.wordSpacing = numberAt(0);
          break;
        case 'Tz':
          state.horizontalScale = numberAt(0) / 100;
          break;
        case 'TL':
          state.leading = numberAt(0);
          break;
        case 'Ts':
          state.rise = numberAt(0);
          break;
        case 'Tr':
          state.renderMode = numberAt(0);
          break;
        case 'Td':
          lineMatrix = multiply([1, 0, 0, 1, numberAt(0), numberAt(1)], lineMatrix);
          textMatrix = lineMatrix;
          break;
        case 'TD':
          state.leading = -numberAt(1);
          lineMatrix = multiply([1, 0, 0, 1, numberAt(0), numberAt(1)], lineMatrix);
          textMatrix = lineMatrix;
          break;
        case 'Tm':
          if (operands.length >= 6) lineMatrix = textMatrix = operands.slice(-6).map(Number) as Matrix;
          break;
        case 'T*':
          lineMatrix = multiply([1, 0, 0, 1, 0, -state.leading], lineMatrix);
          textMatrix = lineMatrix;
          break;
        case 'Tj':
          if (isString(operands[0])) showText(operands[0].bytes);
          break;
        case "'":
        case '"':
          lineMatrix = multiply([1, 0, 0, 1, 0, -state.leading], lineMatrix);
          textMatrix = lineMatrix;
          if (op === '"') {
            state.wordSpacing = numberAt(0);
            state.charSpacing = numberAt(1);
          }
          if (isString(operands.at(-1))) showText((operands.at(-1) as { bytes: Uint8Array }).bytes);
          break;
        case 'TJ': {
          const array = operands[0];
          if (Array.isArray(array)) {
            const pieces: Array<Uint8Array | number> = [];
            for (const item of array)
              if (isString(item)) pieces.push(item.bytes);
              else if (typeof item === 'number') pieces.push(item);
            showText(new Uint8Array(0), pieces);
          }
          break;
        }
        case 'g':
          state.fillLuminance = numberAt(0);
          state.fillComponents = 1;
          break;
        case 'rg':
          state.fillLuminance = 0.299 * numberAt(0) + 0.587 * numberAt(1) + 0.114 * numberAt(2);
          state.fillComponents = 3;
          break;
        case 'k':
          state.fillLuminance =
            (1 - numberAt(0)) * (1 - numberAt(3)) * 0.3 +
            (1 - numberAt(1)) * (1 - numberAt(3)) * 0.59 +
            (1 - numberAt(2)) * (1 - numberAt(3)) * 0.11;
          state.fillComponents = 4;
          break;
        case 'cs':
          state.fillComponents = isName(operands[0], 'DeviceGray')
            ? 1
            : isName(operands[0], 'DeviceRGB')
              ? 3
              : isName(operands[0], 'DeviceCMYK')
                ? 4
                : 0;
          state.fillLuminance = state.fillComponents ? 0 : null;
          break;
        case 'sc':
        case 'scn': {
          const numbers = operands.filter((v): v is number => typeof v === 'number');
          if (state.fillComponents === 1 && numbers.length === 1) state.fillLuminance = numbers[0]!;
          else if (state.fillComponents === 3 && numbers.length === 3)
            state.fillLuminance = 0.299 * numbers[0]! + 0.587 * numbers[1]! + 0.114 * numbers[2]!;
          else state.fillLuminance = null;
          break;
        }
        case 'gs': {
          const states = this.file.dictOf(resources?.entries.get('ExtGState'), this.table);
          const gs = isName(operands[0]) ? this.file.dictOf(states?.entries.get(operands[0].name), this.table) : undefined;
          const alpha = gs ? this.file.resolve(gs.entries.get('ca'), this.table) : undefined;
          if (typeof alpha === 'number') state.fillAlpha = alpha;
          break;
        }
        case 'm':
        case 'l':
          extendPath(numberAt(0), numberAt(1));
          break;
        case 'c':
          extendPath(numberAt(0), numberAt(1));
          extendPath(numberAt(2), numberAt(3));
          extendPath(numberAt(4), numberAt(5));
          break;
        case 'v':
        case 'y':
          extendPath(numberAt(0), numberAt(1));
          extendPath(numberAt(2), numberAt(3));
          break;
        case 're':
          extendPath(numberAt(0), numberAt(1));
          extendPath(numberAt(0) + numberAt(2), numberAt(1) + numberAt(3));
          break;
        case 'f':
        case 'F':
        case 'f*':
        case 'B':
        case 'B*':
        case 'b':
        case 'b*':
          if (pathBox && !hidden())
            this.result.fills.push({ box: pathBox, luminance: state.fillLuminance, alpha: state.fillAlpha, order: this.order++ });
          pathBox = null;
          break;
        case 'S':
        case 's':
        case 'n':
          pathBox = null;
          break;
        case 'BDC':
          hiddenMarks.push(isName(operands[0], 'OC') && this.isHiddenGroup(operands[1], resources));
          break;
        case 'BMC':
          hiddenMarks.push(false);
          break;
        case 'EMC':
          hiddenMarks.pop();
          break;
        case 'Do':
          if (isName(operands[0])) this.drawXObject(operands[0].name, resources, state, depth, hidden());
          break;
        case 'ID':
          skipInlineImage(lexer);
          break;
      }
      operands = [];
    }
  }

  private drawXObject(name: string, resources: PdfDict | undefined, state: GraphicsState, depth: number, hidden: boolean): void {
    const xobjects = this.file.dictOf(resources?.entries.get('XObject'), this.table);
    const reference = xobjects?.entries.get(name);
    const record = isRef(reference) ? this.table.get(reference.num) : undefined;
    const dict = record?.stream?.dict;
    if (!dict) return;
    if (isName(dict.entries.get('Subtype'), 'Image')) {
      const corners = [apply(state.ctm, 0, 0), apply(state.ctm, 1, 0), apply(state.ctm, 0, 1), apply(state.ctm, 1, 1)];
      const xs = corners.map((c) => c[0]);
      const ys = corners.map((c) => c[1]);
      if (!hidden)
        this.result.images.push({ box: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)], record, order: this.order++ });
      return;
    }
    if (!isName(dict.entries.get('Subtype'), 'Form') || depth >= MAX_FORM_DEPTH) return;
    const decoded = this.file.streamData(record!);
    if (decoded.undecodable) {
      this.result.undecodableStreams.push(decoded.undecodable);
      return;
    }
    const matrixValue = this.file.resolve(dict.entries.get('Matrix'), this.table);
    const matrix =
      Array.isArray(matrixValue) && matrixValue.length === 6 && matrixValue.every((v) => typeof v === 'number')
        ? (matrixValue as Matrix)
        : IDENTITY;
    const formResources = this.file.dictOf(dict.entries.get('Resources'), this.table) ?? resources;
    const groupHidden = hidden || (dict.entries.has('OC') && this.isHiddenGroup(dict.entries.get('OC'), undefined));
    const before = this.result.runs.length;
    this.interpret(decoded.data, formResources, { ...state, ctm: multiply(matrix, state.ctm) }, depth + 1);
    if (groupHidden) for (const run of this.result.runs.slice(before)) run.hiddenByOptionalContent = true;
  }

  private isHiddenGroup(value: PdfValue | undefined, resources: PdfDict | undefined): boolean {
    let reference = value;
    if (isName(value)) {
      const properties = this.file.dictOf(resources?.entries.get('Properties'), this.table);
      reference = properties?.entries.get(value.name);
    }
    if (!isRef(reference)) return false;
    if (this.hiddenGroups.has(reference.num)) return true;
    // An optional-content membership dictionary hides content when all its groups are off.
    const membership = this.file.dictOf(reference, this.table);
    const groups = membership ? this.file.resolve(membership.entries.get('OCGs'), this.table) : undefined;
    const list = Array.isArray(groups)
      ? groups
      : groups !== undefined && membership?.entries.has('OCGs')
        ? [membership.entries.get('OCGs')!]
        : [];
    return list.length > 0 && list.every((g) => isRef(g) && this.hiddenGroups.has(g.num));
  }

  private fontInfo(dict: PdfDict): FontInfo {
    const cached = this.fontCache.get(dict);
    if (cached) return cached;
    const resolve = (value: PdfValue | undefined) => this.file.resolve(value, this.table);
    const baseFontValue = resolve(dict.entries.get('BaseFont'));
    const baseFont = isName(baseFontValue) ? baseFontValue.name : '';
    const twoByte = isName(dict.entries.get('Subtype'), 'Type0');
    const toUnicodeRecord = isRef(dict.entries.get('ToUnicode'))
      ? this.table.get((dict.entries.get('ToUnicode') as { num: number }).num)
      : undefined;
    let toUnicode: Map<number, string> | null = null;
    if (toUnicodeRecord?.stream) {
      const decoded = this.file.streamData(toUnicodeRecord);
      if (!decoded.undecodable) toUnicode = parseToUnicode(decoded.data);
    }
    let width: (code: number) => number = () => 500;
    if (twoByte) {
      const descendants = resolve(dict.entries.get('DescendantFonts'));
      const descendant = Array.isArray(descendants) ? this.file.dictOf(descendants[0], this.table) : undefined;
      const defaultWidth = resolve(descendant?.entries.get('DW'));
      const widths = new Map<number, number>();
      const list = resolve(descendant?.entries.get('W'));
      if (Array.isArray(list)) {
        for (let i = 0; i < list.length && widths.size < 70_000;) {
          const first = resolve(list[i]);
          const next = resolve(list[i + 1]);
          if (typeof first !== 'number') break;
          if (Array.isArray(next)) {
            next.forEach((w, j) => typeof w === 'number' && widths.set(first + j, w));
            i += 2;
          } else {
            const w = resolve(list[i + 2]);
            if (typeof next === 'number' && typeof w === 'number')
              for (let c = first; c <= next && c - first < 70_000; c++) widths.set(c, w);
            i += 3;
          }
        }
      }
      width = (code) => widths.get(code) ?? (typeof defaultWidth === 'number' ? defaultWidth : 1000);
    } else {
      const firstChar = resolve(dict.entries.get('FirstChar'));
      const widths = resolve(dict.entries.get('Widths'));
      if (typeof firstChar === 'number' && Array.isArray(widths)) {
        width = (code) => {
          const w = resolve(widths[code - firstChar]);
          return typeof w === 'number' && w > 0 ? w : 500;
        };
      } else if (/Courier/i.test(baseFont)) width = () => 600;
      else if (/Helvetica|Arial|Times/i.test(baseFont)) width = (code) => (code === 32 ? 278 : code >= 48 && code <= 57 ? 556 : 520);
    }
    const info: FontInfo = { baseFont, twoByte, toUnicode, width };
    this.fontCache.set(dict, info);
    return info;
  }
}

/** After `ID`, skip the inline image's raw bytes up to `EI` (§8.9.7). */
function skipInlineImage(lexer: PdfLexer): void {
  const { bytes } = lexer;
  let i = lexer.pos + 1;
  for (; i + 2 < lexer.end; i++) {
    if (
      bytes[i] === 0x45 &&
      bytes[i + 1] === 0x49 &&
      /[\s]/.test(String.fromCharCode(bytes[i - 1]!)) &&
      (i + 2 >= lexer.end || /[\s]/.test(String.fromCharCode(bytes[i + 2]!)))
    )
      break;
  }
  lexer.pos = Math.min(lexer.end, i + 2);
}

/** bfchar and bfrange sections of a ToUnicode CMap (§9.10.3). */
export function parseToUnicode(data: Uint8Array): Map<number, string> {
  const text = Buffer.from(data).toString('latin1');
  const map = new Map<number, string>();
  const utf16 = (hex: string) => {
    let out = '';
    for (let i = 0; i + 3 < hex.length; i += 4) out += String.fromCharCode(parseInt(hex.slice(i, i + 4), 16));
    if (hex.length === 2) out = String.fromCharCode(parseInt(hex, 16));
    return out;
  };
  for (const section of text.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const pair of section[1]!.matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]*)>/g)) map.set(parseInt(pair[1]!, 16), utf16(pair[2]!));
  }
  for (const section of text.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
    for (const range of section[1]!.matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(<[0-9a-fA-F]*>|\[[^\]]*\])/g)) {
      const low = parseInt(range[1]!, 16);
      const high = Math.min(parseInt(range[2]!, 16), low + 65_535);
      const target = range[3]!;
      if (target.startsWith('[')) {
        const items = [...target.matchAll(/<([0-9a-fA-F]*)>/g)].map((m) => utf16(m[1]!));
        items.forEach((item, i) => low + i <= high && map.set(low + i, item));
      } else {
        const hex = target.slice(1, -1);
        const base = parseInt(hex.slice(-4) || '0', 16);
        const prefix = utf16(hex.slice(0, -4));
        for (let code = low; code <= high; code++) map.set(code, prefix + String.fromCharCode(base + code - low));
      }
    }
  }
  return map;
}

/** Optional-content groups switched off in the default configuration (§8.11.4.3). */
export function hiddenOptionalContentGroups(file: PdfFile, table: Map<number, ObjectRecord>, root: PdfDict | undefined): Set<number> {
  const properties = file.dictOf(root?.entries.get('OCProperties'), table);
  const defaults = file.dictOf(properties?.entries.get('D'), table);
  const hidden = new Set<number>();
  const off = file.resolve(defaults?.entries.get('OFF'), table);
  if (Array.isArray(off)) for (const group of off) if (isRef(group)) hidden.add(group.num);
  if (isName(defaults?.entries.get('BaseState'), 'OFF')) {
    const all = file.resolve(properties?.entries.get('OCGs'), table);
    const on = file.resolve(defaults?.entries.get('ON'), table);
    const onSet = new Set(Array.isArray(on) ? on.filter(isRef).map((r) => r.num) : []);
    if (Array.isArray(all)) for (const group of all) if (isRef(group) && !onSet.has(group.num)) hidden.add(group.num);
  }
  return hidden;
}
