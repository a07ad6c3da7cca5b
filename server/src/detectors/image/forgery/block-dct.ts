/**
 * The 8x8 block DCT of JPEG: ITU-T T.81 §A.3.3 (the orthonormal 2-D DCT-II of level-shifted
 * samples), on the grid anchored at the top-left pixel where a re-save puts it. Computed once
 * per image and shared by the compression methods: JPEG ghosts requantise it at each quality
 * instead of re-encoding the image (the DCT is orthonormal, so a block's squared error is the
 * same in both domains), and double-JPEG analysis reads its low AC coefficients. Partial
 * blocks at the right and bottom edges are padded by repeating the last column and row, as
 * libjpeg does.
 */

export interface BlockDct {
  /** 64 coefficients per block in natural (row-major) order; blocks row-major. */
  coefficients: Float32Array;
  /** Blocks per row and column, partial edge blocks included. */
  cols: number;
  rows: number;
  /** Blocks lying wholly inside the image (the first `fullCols` of each of the first `fullRows` rows). */
  fullCols: number;
  fullRows: number;
}

// Orthonormal 8-point DCT-II constants: X[u] = c(u)/2 · Σ p[x] cos((2x + 1)uπ/16).
const C0 = 1 / (2 * Math.SQRT2);
const [C1, C2, C3, C5, C6, C7] = [1, 2, 3, 5, 6, 7].map((u) => Math.cos((u * Math.PI) / 16) / 2) as [number, number, number, number, number, number];

/**
 * One 8-point DCT of p0..p7 into `out[at + u·step]`. Even outputs depend only on the sums
 * p[x] + p[7−x] and odd ones on the differences (the basis is symmetric / antisymmetric), which
 * halves the products; the constants live in registers instead of a table.
 */
function dct8(out: Float32Array, at: number, step: number, p0: number, p1: number, p2: number, p3: number, p4: number, p5: number, p6: number, p7: number) {
  const s0 = p0 + p7, s1 = p1 + p6, s2 = p2 + p5, s3 = p3 + p4;
  const d0 = p0 - p7, d1 = p1 - p6, d2 = p2 - p5, d3 = p3 - p4;
  const a0 = s0 + s3, a1 = s1 + s2, b0 = s0 - s3, b1 = s1 - s2;
  out[at] = C0 * (a0 + a1);
  out[at + 4 * step] = C0 * (a0 - a1);
  out[at + 2 * step] = C2 * b0 + C6 * b1;
  out[at + 6 * step] = C6 * b0 - C2 * b1;
  out[at + step] = C1 * d0 + C3 * d1 + C5 * d2 + C7 * d3;
  out[at + 3 * step] = C3 * d0 - C7 * d1 - C1 * d2 - C5 * d3;
  out[at + 5 * step] = C5 * d0 - C1 * d1 + C7 * d2 + C3 * d3;
  out[at + 7 * step] = C7 * d0 - C5 * d1 + C3 * d2 - C1 * d3;
}

export function blockDct(plane: Float32Array, width: number, height: number): BlockDct {
  const cols = Math.ceil(width / 8), rows = Math.ceil(height / 8);
  const coefficients = new Float32Array(cols * rows * 64);
  // Float32 throughout, like the plane and the result: one array type keeps dct8 monomorphic.
  const block = new Float32Array(8), rowPass = new Float32Array(64);
  for (let by = 0; by < rows; by++) {
    for (let bx = 0; bx < cols; bx++) {
      const partial = bx * 8 + 8 > width || by * 8 + 8 > height;
      for (let y = 0; y < 8; y++) {
        let p = Math.min(height - 1, by * 8 + y) * width + bx * 8;
        if (partial) {
          // Edge block: repeat the last column (and, by the clamp above, the last row).
          const last = Math.min(height - 1, by * 8 + y) * width + width - 1;
          for (let x = 0; x < 8; x++) block[x] = plane[Math.min(last, p + x)]!;
          p = 0;
        }
        const source = partial ? block : plane;
        dct8(rowPass, y * 8, 1, source[p]! - 128, source[p + 1]! - 128, source[p + 2]! - 128, source[p + 3]! - 128, source[p + 4]! - 128, source[p + 5]! - 128, source[p + 6]! - 128, source[p + 7]! - 128);
      }
      const base = (by * cols + bx) * 64;
      for (let u = 0; u < 8; u++) {
        dct8(coefficients, base + u, 8, rowPass[u]!, rowPass[8 + u]!, rowPass[16 + u]!, rowPass[24 + u]!, rowPass[32 + u]!, rowPass[40 + u]!, rowPass[48 + u]!, rowPass[56 + u]!);
      }
    }
  }
  return { coefficients, cols, rows, fullCols: Math.floor(width / 8), fullRows: Math.floor(height / 8) };
}

/** One coefficient (natural order) of every whole block, row-major over fullCols x fullRows. */
export function wholeBlockCoefficient(dct: BlockDct, natural: number): Float32Array {
  const column = new Float32Array(dct.fullCols * dct.fullRows);
  for (let by = 0; by < dct.fullRows; by++) {
    for (let bx = 0; bx < dct.fullCols; bx++) column[by * dct.fullCols + bx] = dct.coefficients[(by * dct.cols + bx) * 64 + natural]!;
  }
  return column;
}

/**
 * Whole 8x8 blocks (row-major, `cols` x `rows`) with a colour sample within `margin` levels of 0
 * or 255 (`rgb` interleaved): the decoder clipped its samples there (ringing cut at 0 or 255,
 * blown highlights, white text on black), so the block's coefficients recomputed from the decoded
 * pixels leave the quantiser steps without any editing.
 */
export function clippedBlocks(rgb: Uint8Array, width: number, cols: number, rows: number, margin = 0): Uint8Array {
  const clipped = new Uint8Array(cols * rows);
  const low = margin, high = 255 - margin;
  for (let y = 0; y < rows * 8; y++) {
    const rowStart = y * width * 3, blockRow = (y >> 3) * cols;
    for (let c = 0; c < cols; c++) {
      if (clipped[blockRow + c]) continue;
      for (let p = rowStart + c * 24, end = p + 24; p < end; p++) {
        const v = rgb[p]!;
        if (v <= low || v >= high) {
          clipped[blockRow + c] = 1;
          break;
        }
      }
    }
  }
  return clipped;
}
