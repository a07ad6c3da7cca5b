/**
 * Invisible watermark of open image generators, decoded from pixels: the `dwtDct` method of
 * the invisible-watermark library (ShieldMnt, `maxDct.py`), as embedded by the Stable
 * Diffusion 1.x reference scripts (bytes "StableDiffusionV1"), SDXL (48 bits, Stability AI
 * generative-models `sgm/util.py`) and the FLUX reference code (48 bits).
 *
 * Decoding: U channel of OpenCV's YUV (U = 0.492 (B - Y) + 128), cropped to a multiple of 4,
 * one-level Haar DWT, LL band cut into 4x4 blocks in raster order; block n votes for bit
 * n mod L with (|v| mod 36) > 18, v the largest-magnitude LL value after the block's first.
 * Thresholds follow the SDXL authors' false-positive analysis: more than 35 of 48 bits
 * matched is "very likely marked" (about 2 % of unmarked images reach it), 27 or fewer is
 * "very likely unmarked". The mark survives JPEG without chroma subsampling and noise; not
 * resizing, cropping, rotation, nor (measured here) JPEG with 4:2:0 chroma subsampling.
 */
import type { Raster } from './image-input.js';

export const WATERMARK_SCALE = 36;
const BLOCK = 4;

function bitsOfBytes(text: string): number[] {
  return [...Buffer.from(text, 'utf8')].flatMap((byte) => Array.from({ length: 8 }, (_, i) => (byte >> (7 - i)) & 1));
}
const bitsOfString = (bits: string) => [...bits].map(Number);

export const KNOWN_WATERMARKS = [
  { generator: 'Stable Diffusion 1.x', message: 'StableDiffusionV1', bits: bitsOfBytes('StableDiffusionV1') },
  { generator: 'Stable Diffusion XL', message: 'SDXL 48-bit', bits: bitsOfString('101100111110110010010000011110111011000110011110') },
  { generator: 'FLUX', message: 'FLUX 48-bit', bits: bitsOfString('001010101111111010000111100111001111010100101110') },
] as const;

/** U plane (OpenCV BGR2YUV, 8-bit rounding) of an RGB/RGBA raster, cropped to multiples of 4. */
export function uPlane(raster: Raster): { plane: Float32Array; width: number; height: number } {
  const width = raster.width - (raster.width % BLOCK);
  const height = raster.height - (raster.height % BLOCK);
  const plane = new Float32Array(width * height);
  const { data, channels } = raster;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * raster.width + x) * channels;
      const r = data[p]!, g = data[p + 1]!, b = data[p + 2]!;
      const luma = 0.299 * r + 0.587 * g + 0.114 * b;
      plane[y * width + x] = Math.min(255, Math.max(0, Math.round(0.492 * (b - luma) + 128)));
    }
  }
  return { plane, width, height };
}

/** LL band of a one-level orthonormal Haar DWT (pywt 'haar'): (a + b + c + d) / 2. */
export function haarLL(plane: Float32Array, width: number, height: number): { ll: Float32Array; width: number; height: number } {
  const w = width / 2, h = height / 2;
  const ll = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const top = 2 * y * width, bottom = top + width;
    for (let x = 0; x < w; x++) {
      ll[y * w + x] = (plane[top + 2 * x]! + plane[top + 2 * x + 1]! + plane[bottom + 2 * x]! + plane[bottom + 2 * x + 1]!) / 2;
    }
  }
  return { ll, width: w, height: h };
}

/** Index within the LL band of the largest-magnitude value of block (bx, by), skipping the first. */
export function carrierIndex(ll: Float32Array, llWidth: number, bx: number, by: number): number {
  let best = -1, bestMagnitude = -1;
  for (let k = 1; k < BLOCK * BLOCK; k++) {
    const index = (by * BLOCK + Math.floor(k / BLOCK)) * llWidth + bx * BLOCK + (k % BLOCK);
    const magnitude = Math.abs(ll[index]!);
    if (magnitude > bestMagnitude) {
      bestMagnitude = magnitude;
      best = index;
    }
  }
  return best;
}

/** Decodes `length` bits: average vote per bit over every block that carries it. */
export function decodeBits(ll: Float32Array, llWidth: number, llHeight: number, length: number): { bits: number[]; blocks: number } {
  const ones = new Float64Array(length);
  const votes = new Float64Array(length);
  const blocksX = Math.floor(llWidth / BLOCK), blocksY = Math.floor(llHeight / BLOCK);
  let n = 0;
  for (let by = 0; by < blocksY; by++) {
    for (let bx = 0; bx < blocksX; bx++, n++) {
      const value = Math.abs(ll[carrierIndex(ll, llWidth, bx, by)]!);
      const bit = n % length;
      votes[bit]!++;
      if (value % WATERMARK_SCALE > WATERMARK_SCALE / 2) ones[bit]!++;
    }
  }
  return { bits: Array.from(ones, (count, i) => (votes[i]! > 0 && count / votes[i]! > 127 / 255 ? 1 : 0)), blocks: n };
}

export interface WatermarkMatch {
  generator: string;
  message: string;
  bitsMatched: number;
  bitsTotal: number;
  /** marked: above the published "very likely marked" level; unmarked: at or below "very likely unmarked". */
  decision: 'marked' | 'uncertain' | 'unmarked';
}

export interface WatermarkReport {
  /** Best match among the known messages. */
  best: WatermarkMatch | null;
  matches: WatermarkMatch[];
  /** Too small to carry every bit at least once. */
  tooSmall: boolean;
}

/** Matched-bit fractions from the SDXL analysis (35/48 and 27/48), applied to every message length. */
const MARKED_FRACTION = 35 / 48;
const UNMARKED_FRACTION = 27 / 48;

export function detectWatermark(raster: Raster): WatermarkReport {
  const { plane, width, height } = uPlane(raster);
  if (width < 8 || height < 8) return { best: null, matches: [], tooSmall: true };
  const band = haarLL(plane, width, height);
  const blocks = Math.floor(band.width / BLOCK) * Math.floor(band.height / BLOCK);
  const decodedByLength = new Map<number, number[]>();
  const matches: WatermarkMatch[] = [];
  for (const mark of KNOWN_WATERMARKS) {
    if (blocks < mark.bits.length) continue;
    let bits = decodedByLength.get(mark.bits.length);
    if (!bits) {
      bits = decodeBits(band.ll, band.width, band.height, mark.bits.length).bits;
      decodedByLength.set(mark.bits.length, bits);
    }
    const bitsMatched = mark.bits.reduce((sum, bit, i) => sum + (bit === bits![i] ? 1 : 0), 0);
    const fraction = bitsMatched / mark.bits.length;
    matches.push({
      generator: mark.generator,
      message: mark.message,
      bitsMatched,
      bitsTotal: mark.bits.length,
      decision: fraction > MARKED_FRACTION ? 'marked' : fraction <= UNMARKED_FRACTION ? 'unmarked' : 'uncertain',
    });
  }
  const best = [...matches].sort((a, b) => b.bitsMatched / b.bitsTotal - a.bitsMatched / a.bitsTotal)[0] ?? null;
  return { best, matches, tooSmall: matches.length === 0 };
}

/**
 * Probability the image carries the mark, from bits matched. At the "marked" level the
 * published false-positive rate is ~2 % for 48 bits; every further bit matched makes chance
 * agreement far less likely. Null when the evidence is not positive.
 */
export function watermarkScore(match: WatermarkMatch): number | null {
  if (match.decision !== 'marked') return null;
  const excess = match.bitsMatched / match.bitsTotal - MARKED_FRACTION; // 0 .. 0.27
  return Math.min(0.995, 0.95 + excess * 0.2 * (match.bitsTotal / 48));
}
