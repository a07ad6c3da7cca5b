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

/** basis[u * 8 + x] = c(u)/2 · cos((2x + 1)uπ/16), c(0) = 1/√2. */
const basis = new Float64Array(64);
for (let u = 0; u < 8; u++) for (let x = 0; x < 8; x++) basis[u * 8 + x] = (u === 0 ? Math.SQRT1_2 : 1) * 0.5 * Math.cos(((2 * x + 1) * u * Math.PI) / 16);

/**
 * One 8-point DCT of `input[from + k·step]`, k = 0..7, into `output[to + u·step]`. Even
 * basis rows are symmetric and odd ones antisymmetric about the centre, so each output needs
 * four products instead of eight.
 */
function dct8(input: Float64Array, from: number, output: Float64Array, to: number, step: number, sums: Float64Array, differences: Float64Array) {
  for (let x = 0; x < 4; x++) {
    const a = input[from + x * step]!, b = input[from + (7 - x) * step]!;
    sums[x] = a + b;
    differences[x] = a - b;
  }
  for (let u = 0; u < 8; u++) {
    const half = u & 1 ? differences : sums;
    const row = u * 8;
    output[to + u * step] = basis[row]! * half[0]! + basis[row + 1]! * half[1]! + basis[row + 2]! * half[2]! + basis[row + 3]! * half[3]!;
  }
}

export function blockDct(plane: Float32Array, width: number, height: number): BlockDct {
  const cols = Math.ceil(width / 8), rows = Math.ceil(height / 8);
  const coefficients = new Float32Array(cols * rows * 64);
  const block = new Float64Array(64), rowPass = new Float64Array(64), columnPass = new Float64Array(64);
  const sums = new Float64Array(4), differences = new Float64Array(4);
  for (let by = 0; by < rows; by++) {
    for (let bx = 0; bx < cols; bx++) {
      for (let y = 0; y < 8; y++) {
        const row = Math.min(height - 1, by * 8 + y) * width;
        for (let x = 0; x < 8; x++) block[y * 8 + x] = plane[row + Math.min(width - 1, bx * 8 + x)]! - 128;
      }
      for (let y = 0; y < 8; y++) dct8(block, y * 8, rowPass, y * 8, 1, sums, differences);
      for (let u = 0; u < 8; u++) dct8(rowPass, u, columnPass, u, 8, sums, differences);
      coefficients.set(columnPass, (by * cols + bx) * 64);
    }
  }
  return { coefficients, cols, rows, fullCols: Math.floor(width / 8), fullRows: Math.floor(height / 8) };
}
