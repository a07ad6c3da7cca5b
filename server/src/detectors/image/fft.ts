/** In-place radix-2 FFT (Cooley–Tukey) and a 2-D power spectrum for square power-of-two tiles. */

export function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j]!, re[i]!];
      [im[i], im[j]] = [im[j]!, im[i]!];
    }
  }
  for (let size = 2; size <= n; size <<= 1) {
    const angle = (-2 * Math.PI) / size;
    const wRe = Math.cos(angle), wIm = Math.sin(angle);
    for (let start = 0; start < n; start += size) {
      let cRe = 1, cIm = 0;
      for (let k = 0; k < size / 2; k++) {
        const a = start + k, b = a + size / 2;
        const tRe = re[b]! * cRe - im[b]! * cIm;
        const tIm = re[b]! * cIm + im[b]! * cRe;
        re[b] = re[a]! - tRe;
        im[b] = im[a]! - tIm;
        re[a] = re[a]! + tRe;
        im[a] = im[a]! + tIm;
        const next = cRe * wRe - cIm * wIm;
        cIm = cRe * wIm + cIm * wRe;
        cRe = next;
      }
    }
  }
}

/** |FFT2(tile · Hann window)|² of an n x n tile (n a power of two), DC at index 0. */
export function powerSpectrum2d(tile: Float64Array, n: number): Float64Array {
  const re = new Float64Array(n * n), im = new Float64Array(n * n);
  const window = Float64Array.from({ length: n }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1 || 1)));
  for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) re[y * n + x] = tile[y * n + x]! * window[x]! * window[y]!;
  const rowRe = new Float64Array(n), rowIm = new Float64Array(n);
  for (let y = 0; y < n; y++) {
    rowRe.set(re.subarray(y * n, y * n + n));
    rowIm.set(im.subarray(y * n, y * n + n));
    fft(rowRe, rowIm);
    re.set(rowRe, y * n);
    im.set(rowIm, y * n);
  }
  for (let x = 0; x < n; x++) {
    for (let y = 0; y < n; y++) { rowRe[y] = re[y * n + x]!; rowIm[y] = im[y * n + x]!; }
    fft(rowRe, rowIm);
    for (let y = 0; y < n; y++) { re[y * n + x] = rowRe[y]!; im[y * n + x] = rowIm[y]!; }
  }
  const power = new Float64Array(n * n);
  for (let i = 0; i < power.length; i++) power[i] = re[i]! * re[i]! + im[i]! * im[i]!;
  return power;
}
