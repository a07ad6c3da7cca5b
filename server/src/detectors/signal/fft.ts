/**
 * The one FFT of the detectors: a radix-4 complex transform (J. W. Cooley and J. W. Tukey,
 * "An Algorithm for the Machine Calculation of Complex Fourier Series", Math. Comp. 19 (1965),
 * 297–301: the factorisation N = r1·r2·…, here every r = 4 and, when log2(N) is odd, one
 * r = 2), and the 2-D power spectrum that the image and face spectral cues use.
 *
 * `transform` permutes the input to bit-reversed order and runs decimation in time: one
 * radix-2 stage first when log2(size) is odd, then radix-4 stages whose twiddles W^k, W^2k,
 * W^3k are precomputed per stage in the order the butterflies read them. Three complex
 * multiplications per four points instead of four, half the passes over the data and
 * sequential twiddle reads: at 1024 to 4096 points it takes a half to a third of the time of
 * the radix-2 transform it replaced. For callers that visit bins through `bitReversed`
 * (speech-denoise.ts), two variants skip the permutation: `transformToBitReversed`
 * (decimation in frequency, output left bit-reversed) and `transformFromBitReversed`
 * (`transform` on an input already bit-reversed).
 *
 * After bit reversal a group of 4Q points holds the Q-point DFTs of its subsequence's
 * residues r = 0, 2, 1, 3 (mod 4), in that order; with A = F0[k], B = W^2k F2[k],
 * C = W^k F1[k], D = W^3k F3[k] the outputs are X[k] = A + B + C + D,
 * X[k + Q] = A − B ∓ i(C − D), X[k + 2Q] = A + B − C − D, X[k + 3Q] = A − B ± i(C − D)
 * (upper signs forward).
 */

export class Fft {
  readonly size: number;
  /** Position of bin k in a bit-reversed spectrum: where transformToBitReversed leaves it and transformFromBitReversed reads it. */
  readonly bitReversed: Uint32Array;
  /** Pairs (i, j), i < j, swapped by the bit reversal. */
  private readonly swaps: Uint32Array;
  /** Per radix-4 stage, Q entries each of W^k, W^2k, W^3k (forward), stages concatenated. */
  private readonly twiddleRe: Float64Array;
  private readonly twiddleIm: Float64Array;
  private readonly oddStage: boolean;

  constructor(size: number) {
    if (size < 2 || (size & (size - 1)) !== 0) throw new Error(`FFT size ${size} is not a power of two`);
    this.size = size;
    const bits = Math.log2(size);
    const swaps: number[] = [];
    this.bitReversed = new Uint32Array(size);
    for (let i = 0; i < size; i++) {
      let reversed = 0;
      for (let b = 0; b < bits; b++) reversed |= ((i >> b) & 1) << (bits - 1 - b);
      this.bitReversed[i] = reversed;
      if (reversed > i) swaps.push(i, reversed);
    }
    this.swaps = Uint32Array.from(swaps);
    this.oddStage = bits % 2 === 1;
    let entries = 0;
    for (let q = this.oddStage ? 2 : 1; q < size; q *= 4) entries += 3 * q;
    this.twiddleRe = new Float64Array(entries);
    this.twiddleIm = new Float64Array(entries);
    let offset = 0;
    for (let q = this.oddStage ? 2 : 1; q < size; q *= 4) {
      const n = 4 * q;
      for (let k = 0; k < q; k++) {
        for (let m = 1; m <= 3; m++) {
          const angle = (-2 * Math.PI * m * k) / n;
          this.twiddleRe[offset + 3 * k + m - 1] = Math.cos(angle);
          this.twiddleIm[offset + 3 * k + m - 1] = Math.sin(angle);
        }
      }
      offset += 3 * q;
    }
  }

  /** In-place forward transform of (re, im); `inverse` conjugates the twiddles (no 1/N). */
  transform(re: Float64Array, im: Float64Array, inverse = false): void {
    this.permute(re, im);
    this.transformFromBitReversed(re, im, inverse);
  }

  private permute(re: Float64Array, im: Float64Array): void {
    const swaps = this.swaps;
    for (let s = 0; s < swaps.length; s += 2) {
      const i = swaps[s]!;
      const j = swaps[s + 1]!;
      const tr = re[i]!;
      re[i] = re[j]!;
      re[j] = tr;
      const ti = im[i]!;
      im[i] = im[j]!;
      im[j] = ti;
    }
  }

  /**
   * The transform (forward, or inverse with `inverse`) of a bit-reversed input, element k at
   * bitReversed[k], output in natural order: `transform` without its permutation. With
   * `inverse` it undoes transformToBitReversed up to a factor N.
   */
  transformFromBitReversed(re: Float64Array, im: Float64Array, inverse = false): void {
    const n = this.size;
    let q = 1;
    if (this.oddStage) {
      // log2(size) odd: one radix-2 stage, whose twiddles are all 1.
      radix2Stage(re, im, n);
      q = 2;
    } else {
      // First radix-4 stage: all twiddles are 1.
      const sign = inverse ? -1 : 1;
      for (let a = 0; a < n; a += 4) {
        const ar = re[a]!;
        const ai = im[a]!;
        const br = re[a + 1]!;
        const bi = im[a + 1]!;
        const cr = re[a + 2]!;
        const ci = im[a + 2]!;
        const dr = re[a + 3]!;
        const di = im[a + 3]!;
        const rotR = sign * (ci - di);
        const rotI = sign * (dr - cr);
        re[a] = ar + br + cr + dr;
        im[a] = ai + bi + ci + di;
        re[a + 1] = ar - br + rotR;
        im[a + 1] = ai - bi + rotI;
        re[a + 2] = ar + br - cr - dr;
        im[a + 2] = ai + bi - ci - di;
        re[a + 3] = ar - br - rotR;
        im[a + 3] = ai - bi - rotI;
      }
      q = 4;
    }
    const tre = this.twiddleRe;
    const tim = this.twiddleIm;
    // Twiddles of the stage with this q start at 3 * (sum of the earlier stages' q).
    let offset = this.oddStage ? 0 : 3;
    const sign = inverse ? -1 : 1;
    for (; q < n; q *= 4) {
      const span = 4 * q;
      for (let group = 0; group < n; group += span) {
        for (let k = 0, t = offset; k < q; k++, t += 3) {
          const a = group + k;
          const b = a + q;
          const c = b + q;
          const d = c + q;
          const w1r = tre[t]!;
          const w1i = sign * tim[t]!;
          const w2r = tre[t + 1]!;
          const w2i = sign * tim[t + 1]!;
          const w3r = tre[t + 2]!;
          const w3i = sign * tim[t + 2]!;
          // b holds F2 (twiddle W^2k), c holds F1 (W^k), d holds F3 (W^3k).
          const f2r = re[b]!;
          const f2i = im[b]!;
          const f1r = re[c]!;
          const f1i = im[c]!;
          const f3r = re[d]!;
          const f3i = im[d]!;
          const br = f2r * w2r - f2i * w2i;
          const bi = f2r * w2i + f2i * w2r;
          const cr = f1r * w1r - f1i * w1i;
          const ci = f1r * w1i + f1i * w1r;
          const dr = f3r * w3r - f3i * w3i;
          const di = f3r * w3i + f3i * w3r;
          const ar = re[a]!;
          const ai = im[a]!;
          const sumR = ar + br;
          const sumI = ai + bi;
          const diffR = ar - br;
          const diffI = ai - bi;
          const cdSumR = cr + dr;
          const cdSumI = ci + di;
          // ∓i(C − D) forward / inverse.
          const rotR = sign * (ci - di);
          const rotI = sign * (dr - cr);
          re[a] = sumR + cdSumR;
          im[a] = sumI + cdSumI;
          re[b] = diffR + rotR;
          im[b] = diffI + rotI;
          re[c] = sumR - cdSumR;
          im[c] = sumI - cdSumI;
          re[d] = diffR - rotR;
          im[d] = diffI - rotI;
        }
      }
      offset += 3 * q;
    }
  }

  /**
   * The transform (forward, or inverse with `inverse`) of a natural-order input, output
   * bit-reversed (bin k at bitReversed[k]), without the permutation: the
   * decimation-in-frequency transpose of the stages above, run from the widest down, for
   * callers that only visit bins through a table.
   * For each four points s = a − c, t = b − d: a' = (a + c) + (b + d),
   * b' = W^2k ((a + c) − (b + d)), c' = W^k (s ∓ it), d' = W^3k (s ± it).
   */
  transformToBitReversed(re: Float64Array, im: Float64Array, inverse = false): void {
    const n = this.size;
    const tre = this.twiddleRe;
    const tim = this.twiddleIm;
    const sign = inverse ? -1 : 1;
    const firstQ = this.oddStage ? 2 : 4;
    let offset = tre.length;
    let widest = firstQ;
    while (widest * 4 < n) widest *= 4;
    // Stages with twiddles exist only from eight points on (q < n).
    for (let q = widest; q >= firstQ && q < n; q /= 4) {
      offset -= 3 * q;
      const span = 4 * q;
      for (let group = 0; group < n; group += span) {
        for (let k = 0, t = offset; k < q; k++, t += 3) {
          const a = group + k;
          const b = a + q;
          const c = b + q;
          const d = c + q;
          const ar = re[a]!;
          const ai = im[a]!;
          const br = re[b]!;
          const bi = im[b]!;
          const cr = re[c]!;
          const ci = im[c]!;
          const dr = re[d]!;
          const di = im[d]!;
          const acR = ar + cr;
          const acI = ai + ci;
          const bdR = br + dr;
          const bdI = bi + di;
          const sR = ar - cr;
          const sI = ai - ci;
          // ∓i·t forward / inverse.
          const rotR = sign * (bi - di);
          const rotI = sign * (dr - br);
          re[a] = acR + bdR;
          im[a] = acI + bdI;
          const w1r = tre[t]!;
          const w1i = sign * tim[t]!;
          const w2r = tre[t + 1]!;
          const w2i = sign * tim[t + 1]!;
          const w3r = tre[t + 2]!;
          const w3i = sign * tim[t + 2]!;
          const xR = acR - bdR;
          const xI = acI - bdI;
          re[b] = xR * w2r - xI * w2i;
          im[b] = xR * w2i + xI * w2r;
          const yR = sR + rotR;
          const yI = sI + rotI;
          re[c] = yR * w1r - yI * w1i;
          im[c] = yR * w1i + yI * w1r;
          const zR = sR - rotR;
          const zI = sI - rotI;
          re[d] = zR * w3r - zI * w3i;
          im[d] = zR * w3i + zI * w3r;
        }
      }
    }
    if (this.oddStage) {
      radix2Stage(re, im, n);
      return;
    }
    for (let a = 0; a < n; a += 4) {
      const ar = re[a]!;
      const ai = im[a]!;
      const br = re[a + 1]!;
      const bi = im[a + 1]!;
      const cr = re[a + 2]!;
      const ci = im[a + 2]!;
      const dr = re[a + 3]!;
      const di = im[a + 3]!;
      const acR = ar + cr;
      const acI = ai + ci;
      const bdR = br + dr;
      const bdI = bi + di;
      const sR = ar - cr;
      const sI = ai - ci;
      const rotR = sign * (bi - di);
      const rotI = sign * (dr - br);
      re[a] = acR + bdR;
      im[a] = acI + bdI;
      re[a + 1] = acR - bdR;
      im[a + 1] = acI - bdI;
      re[a + 2] = sR + rotR;
      im[a + 2] = sI + rotI;
      re[a + 3] = sR - rotR;
      im[a + 3] = sI - rotI;
    }
  }
}

/** Butterflies of adjacent pairs: the radix-2 stage whose twiddles are all 1. */
function radix2Stage(re: Float64Array, im: Float64Array, n: number): void {
  for (let a = 0; a < n; a += 2) {
    const br = re[a + 1]!;
    const bi = im[a + 1]!;
    const ar = re[a]!;
    const ai = im[a]!;
    re[a] = ar + br;
    im[a] = ai + bi;
    re[a + 1] = ar - br;
    im[a + 1] = ai - bi;
  }
}

/**
 * |FFT2(tile · Hann window)|² of an n×n tile (row-major, n a power of two), index [v * n + u],
 * DC at index 0 (not shifted: u > n/2 are the negative frequencies). `subtractMean` removes
 * the tile's mean first so that DC does not leak into the low frequencies.
 */
export function powerSpectrum2d(tile: Float64Array, n: number, options: { subtractMean?: boolean } = {}): Float64Array {
  if ((n & (n - 1)) !== 0 || tile.length !== n * n) throw new Error('powerSpectrum2d needs an n×n tile, n a power of two');
  let mean = 0;
  if (options.subtractMean) {
    for (const value of tile) mean += value;
    mean /= tile.length;
  }
  // Symmetric Hann: the window's borders do not leak into every frequency.
  const window = Float64Array.from({ length: n }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1 || 1)));
  const re = new Float64Array(n * n);
  const im = new Float64Array(n * n);
  for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) re[y * n + x] = (tile[y * n + x]! - mean) * window[x]! * window[y]!;
  const fft = new Fft(n);
  const rowRe = new Float64Array(n);
  const rowIm = new Float64Array(n);
  for (let y = 0; y < n; y++) {
    rowRe.set(re.subarray(y * n, y * n + n));
    rowIm.set(im.subarray(y * n, y * n + n));
    fft.transform(rowRe, rowIm);
    re.set(rowRe, y * n);
    im.set(rowIm, y * n);
  }
  for (let x = 0; x < n; x++) {
    for (let y = 0; y < n; y++) {
      rowRe[y] = re[y * n + x]!;
      rowIm[y] = im[y * n + x]!;
    }
    fft.transform(rowRe, rowIm);
    for (let y = 0; y < n; y++) {
      re[y * n + x] = rowRe[y]!;
      im[y * n + x] = rowIm[y]!;
    }
  }
  const power = new Float64Array(n * n);
  for (let i = 0; i < power.length; i++) power[i] = re[i]! * re[i]! + im[i]! * im[i]!;
  return power;
}
