/**
 * How closely each 8x8 block's DCT coefficients sit on multiples of the quantiser steps the
 * whole image shows: the trace a JPEG compression leaves on its own grid even after the image
 * is decoded and saved losslessly. The steps are estimated per frequency from the decoded
 * image's coefficients (Z. Fan and R. L. de Queiroz, "Identification of Bitmap Compression
 * History: JPEG Detection and Quantizer Estimation", IEEE TIP 12(2), 2003: the histogram of a
 * frequency peaks at multiples of its step), here by the periodicity mean cos(2πc/q), taking
 * the largest q that keeps it near its maximum (a step q is also periodic at q/2, q/3 ...).
 * A block copied from elsewhere by a shift that is not a multiple of 8 carries its grid with
 * it: on the image's grid it is misaligned and its coefficients spread off the multiples.
 */
import { ZIGZAG } from '../jpeg-structure.js';
import { wholeBlockCoefficient, type BlockDct } from './block-dct.js';

const FREQUENCIES = 8; // first AC coefficients in zigzag order, as in double-JPEG analysis
const MAX_STEP = 24;
/** Periodicity a frequency must reach at its best step to count as compressed on this grid. */
const MIN_PERIODICITY = 0.3;
/** The step taken is the largest whose periodicity is within this share of the best. */
const NEAR_BEST = 0.8;
const STEP_SAMPLE = 20_000;

export interface GridAlignment {
  /** Per block (the DCT's full blocks, row-major), mean cos(2πc/q) over its informative coefficients; −1..1. */
  values: Float32Array;
  /** Informative coefficients per block: |c| at least half a step (smaller ones sit on 0 in any image). */
  informative: Uint8Array;
  cols: number;
  rows: number;
  steps: Array<number | null>;
}

/** Null when no frequency shows compression on this grid (a never-compressed image). */
export function jpegGridAlignment(dct: BlockDct): GridAlignment | null {
  const cols = dct.fullCols, rows = dct.fullRows, blocks = cols * rows;
  const sums = new Float64Array(blocks), informative = new Uint8Array(blocks);
  const steps: Array<number | null> = [];
  // The steps are estimated on at most STEP_SAMPLE blocks: a 12 MP image has 190,000.
  const sampleStride = Math.max(1, Math.floor(blocks / STEP_SAMPLE));
  for (const natural of ZIGZAG.slice(1, 1 + FREQUENCIES)) {
    const column = wholeBlockCoefficient(dct, natural);
    let bestPeriodicity = 0;
    const periodicity: number[] = [];
    for (let q = 2; q <= MAX_STEP; q++) {
      let sum = 0, count = 0;
      for (let b = 0; b < blocks; b += sampleStride) {
        const c = column[b]!;
        if (Math.abs(c) >= q / 2) { sum += Math.cos((2 * Math.PI * c) / q); count++; }
      }
      periodicity[q] = count >= 200 ? sum / count : 0;
      bestPeriodicity = Math.max(bestPeriodicity, periodicity[q]!);
    }
    if (bestPeriodicity < MIN_PERIODICITY) { steps.push(null); continue; }
    let step = 2;
    for (let q = 2; q <= MAX_STEP; q++) if (periodicity[q]! >= NEAR_BEST * bestPeriodicity) step = q;
    steps.push(step);
    for (let b = 0; b < blocks; b++) {
      const c = column[b]!;
      if (Math.abs(c) < step / 2) continue;
      sums[b] = sums[b]! + Math.cos((2 * Math.PI * c) / step);
      informative[b]!++;
    }
  }
  if (steps.every((s) => s === null)) return null;
  const values = new Float32Array(blocks);
  for (let b = 0; b < blocks; b++) if (informative[b]) values[b] = sums[b]! / informative[b]!;
  return { values, informative, cols, rows, steps };
}
