/**
 * The one FFT of the detectors: an iterative radix-2 Cooley–Tukey transform with precomputed
 * twiddles and bit-reversal (audio STFTs run it millions of times), and the 2-D power
 * spectrum that the image and face spectral cues use.
 */

export class Fft {
  readonly size: number;
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  private readonly bitReversed: Uint32Array;

  constructor(size: number) {
    if (size < 2 || (size & (size - 1)) !== 0) throw new Error(`FFT size ${size} is not a power of two`);
    this.size = size;
    this.cos = new Float64Array(size / 2);
    this.sin = new Float64Array(size / 2);
    for (let i = 0; i < size / 2; i++) {
      this.cos[i] = Math.cos((2 * Math.PI * i) / size);
      this.sin[i] = -Math.sin((2 * Math.PI * i) / size);
    }
    this.bitReversed = new Uint32Array(size);
    const bits = Math.log2(size);
    for (let i = 0; i < size; i++) {
      let reversed = 0;
      for (let b = 0; b < bits; b++) reversed |= ((i >> b) & 1) << (bits - 1 - b);
      this.bitReversed[i] = reversed;
    }
  }

  /** In-place forward transform of (re, im); `inverse` conjugates the twiddles (no 1/N). */
  transform(re: Float64Array, im: Float64Array, inverse = false): void {
    const n = this.size;
    for (let i = 0; i < n; i++) {
      const j = this.bitReversed[i]!;
      if (j > i) {
        const tr = re[i]!;
        re[i] = re[j]!;
        re[j] = tr;
        const ti = im[i]!;
        im[i] = im[j]!;
        im[j] = ti;
      }
    }
    const direction = inverse ? -1 : 1;
    const cos = this.cos;
    const sin = this.sin;
    for (let half = 1; half < n; half *= 2) {
      const step = n / (2 * half);
      const span = 2 * half;
      // Twiddle outer, butterflies inner: each twiddle is read once per stage.
      for (let k = 0; k < half; k++) {
        const wr = cos[k * step]!;
        const wi = direction * sin[k * step]!;
        for (let a = k; a < n; a += span) {
          const b = a + half;
          const br = re[b]!;
          const bi = im[b]!;
          const xr = br * wr - bi * wi;
          const xi = br * wi + bi * wr;
          const ar = re[a]!;
          const ai = im[a]!;
          re[b] = ar - xr;
          im[b] = ai - xi;
          re[a] = ar + xr;
          im[a] = ai + xi;
        }
      }
    }
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
