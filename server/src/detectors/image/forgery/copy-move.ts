/**
 * Copy-move detection on a dense field of nearest neighbours: D. Cozzolino, G. Poggi and
 * L. Verdoliva, "Efficient Dense-Field Copy–Move Forgery Detection", IEEE TIFS 10(11), 2015.
 *
 * Every pixel is described by rotation-invariant features (§III-A: the paper uses Zernike
 * moment magnitudes; here the circular harmonics of the Gaussian-derivative jet at two scales,
 * the same kind of invariant computed with separable filters, several times cheaper), so
 * rotated copies match too. PatchMatch (C. Barnes et al., SIGGRAPH 2009; §III-B), coarse to
 * fine, finds for every textured pixel its most similar pixel at least MIN_SHIFT away, and the
 * best one well apart from that. The offset field is median-filtered, and a copy shows where it
 * is locally affine (§III-C, dense linear fitting: a moved copy has a constant offset, a rotated
 * one an offset linear in position) over a large, solid region; its source is found too.
 * Repeated structure (tiles, a periodic pattern, an edge slid along itself) also gives smooth
 * fields, but there a pixel has another match about as good: components made mostly of such
 * ambiguous pixels are dropped (the uniqueness test of D. Lowe, IJCV 2004, §7.1), and thin
 * ones (a word repeated in a line of text) too. Genuinely repeated content (signs, a logo
 * backdrop, the same word twice) is found as a copy: it is one. Copies scaled by more than a
 * few per cent are outside what the features match.
 *
 * Which side was pasted: a copy rotated (or shifted by a fraction of a pixel) was resampled,
 * and interpolation attenuates the finest frequencies (A. C. Popescu and H. Farid, "Exposing
 * Digital Forgeries by Detecting Traces of Resampling", IEEE TSP 53(2), 2005). Both sides hold
 * the same content, so the side whose full-resolution Laplacian residual is clearly weaker than
 * its match's is the pasted one, and only it stays marked. A copy moved by whole pixels has
 * no such trace, but in a JPEG saved twice its blocks left the 8x8 grid they were first
 * compressed on: the aligned double-JPEG map (T. Bianchi and A. Piva, IEEE TIFS 7(3), 2012)
 * reads them as compressed once, while the source shows both compressions. The side that map
 * rates clearly more singly compressed is the pasted one. Saved losslessly after a JPEG life
 * (a PNG or TIFF export), the source's blocks still sit on the JPEG grid and the copy's do not
 * (grid-alignment.ts). Where no cue decides, or they disagree, both sides stay marked.
 */
import { quantile, selectInPlace, smoothMap, type BlockMap } from '../forensic-map.js';
import { jpegGridAlignment, type GridAlignment, type JpegGrid } from './grid-alignment.js';
import { skippedMethod, type MethodResult } from './method.js';

/**
 * Scale (pixels) of the Gaussian-derivative features. They are taken at this σ on the image and
 * on a half-size copy (σ ≈ 4 at full size): the coarse scale sees the structure around a pixel
 * at a quarter of the cost.
 */
const SIGMA = 2;
/** Half-width of the window whose grey-level spread decides whether a pixel is textured. */
const TEXTURE_RADIUS = 8;
const MIN_SHIFT = 40; // pixels: nearer matches are the self-similarity of texture
/** A copied region's median shift is at least this long: shorter repeats were mostly texture in untouched photos. */
const MIN_COPY_SHIFT = 64;
const MIN_STD = 6; // grey levels over the texture window: flatter pixels match everywhere
const ITERATIONS = 3;
/** After the first scan, random search stays within this many pixels of the offsets found. */
const LATE_SEARCH_RADIUS = 8;
/** The second offset's random search stays at the long radii of the first scan: it looks for another place, not a refinement. */
const SECOND_SEARCH_MIN_RADIUS = 32;
/** The second match must lie this far (pixels, per axis) from the first to count as another place. */
const SEPARATION = 8;
/** How far (pixels) a copy's match is slid along its shift to test for an edge matching itself. */
const SLIDE = 12;
const MEDIAN_RADIUS = 2; // 5x5 median of the offset field
const FIT_RADIUS = 6; // 13x13 windows for the dense linear fit
/** Mean squared residual (pixels²) of the affine fit of the offsets in a window. */
const MAX_FIT_ERROR = 15;
/** A pixel belongs to a copy only if its own match lies this close (pixels, per axis) to the filtered field. */
const AGREEMENT = 2;
/** A copied region covers at least this share of the analysed image, and this many pixels. */
const MIN_AREA_SHARE = 0.004;
const MIN_AREA = 400;
/** A copied region holds at least this many pixels whose (2·CORE_RADIUS+1)² square lies wholly inside it. */
const CORE_RADIUS = 6;
const MIN_CORE = 20;
/** A pixel whose second match costs under this times its best (or under the floor) is ambiguous. */
const AMBIGUOUS_RATIO = 2;
const AMBIGUOUS_FLOOR = 1;
/** A component with this share of ambiguous pixels is repeated structure, not a copy. */
const PERIODIC_SHARE = 0.3;
const CELL = 8;
/** Shifts within this many pixels per axis are reported as one copy. */
const SAME_SHIFT = 2;
/**
 * A side whose residual energy is under this share of its match's was resampled: the pasted
 * copy. Chosen on copy-move tuning sets (scripts/copy-move-tuning-set.py seeds 31-33, and 41-43
 * with a first JPEG at quality 70-90): rotated copies measured 0.57-0.83 against their sources,
 * copies moved by whole pixels 0.87-1.15 either way round.
 */
const RESAMPLED_RATIO = 0.85;
/**
 * A side whose mean probability of single compression (aligned double-JPEG map) exceeds its
 * match's by this much left the JPEG grid: the pasted copy. On the quality 70-90 tuning sets
 * (seeds 41-43) every copy with the map measured a gap of 0.21-0.90, genuinely repeated content
 * at most 0.05.
 */
const RECOMPRESSION_GAP = 0.15;
/**
 * In a losslessly saved image with a JPEG history, a side is off the JPEG grid (pasted) when its
 * match's blocks clearly sit on the grid (mean alignment at least MIN_GRID_ALIGNMENT) and its
 * own reach under OFF_GRID_SHARE of that. On PNG tuning sets (seeds 51-53): copies 0.55-0.95 on
 * the source against at most 0.03 on the copy; genuinely repeated content never under 0.45 of
 * its match.
 */
const MIN_GRID_ALIGNMENT = 0.3;
const OFF_GRID_SHARE = 0.25;

const LABEL = 'Copy-move dense-field matching (Cozzolino, Poggi & Verdoliva 2015)';

/** Sampled Gaussian derivatives of orders 0-3 at scale σ, each times σ^order (scale-normalised). */
function derivativeKernels(sigma: number): Float32Array[] {
  const radius = Math.ceil(3 * sigma);
  const g = Array.from({ length: 2 * radius + 1 }, (_, i) => Math.exp(-((i - radius) ** 2) / (2 * sigma * sigma)));
  const total = g.reduce((a, b) => a + b, 0);
  const s2 = sigma * sigma;
  const polynomials = [(_x: number) => 1, (x: number) => -x / s2, (x: number) => (x * x) / (s2 * s2) - 1 / s2, (x: number) => (-x * x * x) / (s2 * s2 * s2) + (3 * x) / (s2 * s2)];
  return polynomials.map((poly, order) => Float32Array.from(g, (v, i) => (poly(i - radius) * v * sigma ** order) / total));
}

/** One separable pass with mirrored edges: along rows (`horizontal`) or columns. */
function filter1d(input: Float32Array, width: number, height: number, kernel: Float32Array, horizontal: boolean): Float32Array {
  const out = new Float32Array(width * height);
  const radius = (kernel.length - 1) >> 1;
  const mirror = (i: number, n: number) => (i < 0 ? -i - 1 : i >= n ? 2 * n - i - 1 : i);
  if (horizontal) {
    const line = new Float32Array(width + 2 * radius);
    for (let y = 0; y < height; y++) {
      for (let i = 0; i < line.length; i++) line[i] = input[y * width + mirror(i - radius, width)]!;
      for (let x = 0; x < width; x++) {
        let sum = 0;
        for (let k = 0; k < kernel.length; k++) sum += kernel[k]! * line[x + k]!;
        out[y * width + x] = sum;
      }
    }
  } else {
    for (let k = 0; k < kernel.length; k++) {
      const c = kernel[k]!;
      for (let y = 0; y < height; y++) {
        const from = mirror(y + k - radius, height) * width, to = y * width;
        for (let x = 0; x < width; x++) out[to + x]! += c * input[from + x]!;
      }
    }
  }
  return out;
}

/**
 * Rotation-invariant features of every pixel: at each scale, the magnitudes of the circular
 * harmonics of its Gaussian-derivative jet up to order 3 (J. J. Koenderink and A. J. van
 * Doorn, "Representation of local geometry in the visual system", Biol. Cybern. 55, 1987):
 * gradient magnitude, Laplacian, second-order anisotropy and the two third-order harmonics.
 * They play the part of the paper's Zernike magnitudes (the same harmonics, Gaussian- rather
 * than disk-weighted) at a fraction of the cost, since every derivative is separable.
 */
function jetFeatures(grey: Float32Array, width: number, height: number) {
  const n = width * height;
  const perScale = 5, dimensions = 2 * perScale;
  const features = new Float32Array(n * dimensions);
  const kernels = derivativeKernels(SIGMA);
  /** The five invariants at SIGMA of an image, as planes. */
  const invariants = (image: Float32Array, w: number, h: number): Float32Array[] => {
    const rows = kernels.map((kernel) => filter1d(image, w, h, kernel, true)); // ∂x^k
    const d = (oy: number, ox: number) => filter1d(rows[ox]!, w, h, kernels[oy]!, false);
    const ix = d(0, 1), iy = d(1, 0), ixx = d(0, 2), ixy = d(1, 1), iyy = d(2, 0), ixxx = d(0, 3), ixxy = d(1, 2), ixyy = d(2, 1), iyyy = d(3, 0);
    const planes = Array.from({ length: perScale }, () => new Float32Array(w * h));
    for (let p = 0; p < w * h; p++) {
      planes[0]![p] = Math.sqrt(ix[p]! * ix[p]! + iy[p]! * iy[p]!); // Math.sqrt, not Math.hypot: several times faster in V8
      planes[1]![p] = ixx[p]! + iyy[p]!;
      const anisotropy = ixx[p]! - iyy[p]!;
      planes[2]![p] = Math.sqrt(anisotropy * anisotropy + 4 * ixy[p]! * ixy[p]!);
      const a1 = ixxx[p]! + ixyy[p]!, b1 = ixxy[p]! + iyyy[p]!;
      planes[3]![p] = Math.sqrt(a1 * a1 + b1 * b1);
      const a3 = ixxx[p]! - 3 * ixyy[p]!, b3 = 3 * ixxy[p]! - iyyy[p]!;
      planes[4]![p] = Math.sqrt(a3 * a3 + b3 * b3);
    }
    return planes;
  };
  const fine = invariants(grey, width, height);
  // Half size by 2x2 means; its invariants read back at full size bilinearly.
  const hw = width >> 1, hh = height >> 1;
  const half = new Float32Array(hw * hh);
  for (let y = 0; y < hh; y++) for (let x = 0; x < hw; x++) {
    const p = 2 * y * width + 2 * x;
    half[y * hw + x] = (grey[p]! + grey[p + 1]! + grey[p + width]! + grey[p + width + 1]!) / 4;
  }
  const coarse = invariants(half, hw, hh);
  for (let y = 0; y < height; y++) {
    const fy = Math.min(hh - 1, Math.max(0, (y - 0.5) / 2)), y0 = Math.min(hh - 2, Math.floor(fy)), wy = fy - y0;
    for (let x = 0; x < width; x++) {
      const fx = Math.min(hw - 1, Math.max(0, (x - 0.5) / 2)), x0 = Math.min(hw - 2, Math.floor(fx)), wx = fx - x0;
      const p = y * width + x, base = p * dimensions, q = y0 * hw + x0;
      for (let k = 0; k < perScale; k++) {
        features[base + k] = fine[k]![p]!;
        const c = coarse[k]!;
        // Scale-normalised derivatives: at half size the same structure reads the same.
        features[base + perScale + k] = (1 - wy) * ((1 - wx) * c[q]! + wx * c[q + 1]!) + wy * ((1 - wx) * c[q + hw]! + wx * c[q + hw + 1]!);
      }
    }
  }
  return { features, dimensions };
}

/**
 * Summed-area table of value(p, x, y): (width+1)×(height+1), first row and column zero, so any
 * box's sum costs four reads (F. C. Crow, "Summed-area tables for texture mapping", SIGGRAPH 1984).
 */
function integralImage(width: number, height: number, value: (p: number, x: number, y: number) => number): Float64Array {
  const iw = width + 1;
  const table = new Float64Array(iw * (height + 1));
  for (let y = 0; y < height; y++) {
    let row = 0;
    for (let x = 0; x < width; x++) {
      row += value(y * width + x, x, y);
      table[(y + 1) * iw + x + 1] = table[y * iw + x + 1]! + row;
    }
  }
  return table;
}

/** Sum of a summed-area table's values over columns x0 .. x1−1 and rows y0 .. y1−1. */
function boxSum(table: Float64Array, width: number, x0: number, y0: number, x1: number, y1: number): number {
  const iw = width + 1;
  return table[y1 * iw + x1]! - table[y0 * iw + x1]! - table[y1 * iw + x0]! + table[y0 * iw + x0]!;
}

/** Standard deviation of the grey levels in every (2r+1)² window (edges clamped). */
function localSpread(grey: Float32Array, width: number, height: number, radius: number): Float32Array {
  const sum = integralImage(width, height, (p) => grey[p]!), squares = integralImage(width, height, (p) => grey[p]! * grey[p]!);
  const spread = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const y0 = Math.max(0, y - radius), y1 = Math.min(height, y + radius + 1);
    for (let x = 0; x < width; x++) {
      const x0 = Math.max(0, x - radius), x1 = Math.min(width, x + radius + 1);
      const count = (y1 - y0) * (x1 - x0);
      const mean = boxSum(sum, width, x0, y0, x1, y1) / count;
      spread[y * width + x] = Math.sqrt(Math.max(0, boxSum(squares, width, x0, y0, x1, y1) / count - mean * mean));
    }
  }
  return spread;
}

/** Squared feature distance between pixels p and q, stopping once it reaches `bound`. */
function featureDistance(features: Float32Array, dimensions: number, p: number, q: number, bound = Infinity): number {
  let d = 0;
  for (let a = p * dimensions, b = q * dimensions, end = a + dimensions; a < end && d < bound; a++, b++) {
    const e = features[a]! - features[b]!;
    d += e * e;
  }
  return d;
}

/** Whether offset (dx, dy) from (x, y) stays in the image and is long enough to be a copy, not texture. */
function admissible(x: number, y: number, dx: number, dy: number, width: number, height: number): boolean {
  const tx = x + dx, ty = y + dy;
  return tx >= 0 && tx < width && ty >= 0 && ty < height && dx * dx + dy * dy >= MIN_SHIFT * MIN_SHIFT;
}

interface NearestNeighbours { ox: Int32Array; oy: Int32Array; cost: Float32Array; ox2: Int32Array; oy2: Int32Array; cost2: Float32Array }

/**
 * PatchMatch over the textured pixels: random offsets, then scans that alternate direction,
 * each pixel trying its scan-order neighbours' offsets and random ones around its own at
 * halving radii. Two offsets are kept per pixel: the best, and the best at least SEPARATION
 * away from it.
 */
function patchMatch(features: Float32Array, dimensions: number, textured: Uint8Array, width: number, height: number): NearestNeighbours {
  const n = width * height;
  const ox = new Int32Array(n), oy = new Int32Array(n), ox2 = new Int32Array(n), oy2 = new Int32Array(n);
  const cost = new Float32Array(n).fill(Infinity), cost2 = new Float32Array(n).fill(Infinity);
  // xorshift32, inline: this loop draws millions of numbers.
  let state = 0x5eed1234;
  const uniform = () => { state ^= state << 13; state ^= state >>> 17; state ^= state << 5; return (state >>> 0) / 4_294_967_296; };
  /** Tries offset (dx, dy) for pixel p at (x, y); keeps it as best or second best. One function, small and monomorphic, so V8 inlines it. */
  function consider(p: number, x: number, y: number, dx: number, dy: number): void {
    if (!admissible(x, y, dx, dy, width, height)) return;
    const bx = ox[p]!, by = oy[p]!;
    const nearBest = Math.abs(dx - bx) <= SEPARATION && Math.abs(dy - by) <= SEPARATION;
    if (nearBest && dx === bx && dy === by) return;
    const bound = nearBest ? cost[p]! : cost2[p]!;
    const d = featureDistance(features, dimensions, p, (y + dy) * width + x + dx, bound);
    if (d >= bound) return;
    if (d < cost[p]!) {
      if (!nearBest) { ox2[p] = bx; oy2[p] = by; cost2[p] = cost[p]!; }
      ox[p] = dx; oy[p] = dy; cost[p] = d;
    } else {
      ox2[p] = dx; oy2[p] = dy; cost2[p] = d;
    }
  }
  // Coarse to fine: the scans run on every other pixel of every other row (a quarter of the
  // work; a copy is far larger than that grid), then each pixel starts from its grid
  // neighbours' offsets and refines them nearby.
  const onGrid = (x: number, y: number) => (x & 1) === 0 && (y & 1) === 0;
  for (let p = 0; p < n; p++) {
    const x = p % width, y = (p - x) / width;
    if (!textured[p] || !onGrid(x, y)) continue;
    for (let tries = 0; tries < 2; tries++) consider(p, x, y, Math.floor(uniform() * width) - x, Math.floor(uniform() * height) - y);
  }
  const longSide = Math.max(width, height);
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    const step = iteration % 2 === 0 ? 2 : -2;
    for (let k = 0; k < n; k++) {
      const p = step > 0 ? k : n - 1 - k;
      const x = p % width, y = (p - x) / width;
      if (!textured[p] || !onGrid(x, y)) continue;
      // Propagation: the offsets of the grid neighbours already visited in this scan.
      if (x - step >= 0 && x - step < width) { const q = p - step; consider(p, x, y, ox[q]!, oy[q]!); consider(p, x, y, ox2[q]!, oy2[q]!); }
      if (y - step >= 0 && y - step < height) { const q = p - step * width; consider(p, x, y, ox[q]!, oy[q]!); consider(p, x, y, ox2[q]!, oy2[q]!); }
      // Random search around the best offset (and, in the first scan, the second, far only) at
      // halving radii: the whole image in the first scan, which is what finds a copy; nearby later.
      for (let radius = iteration === 0 ? longSide : LATE_SEARCH_RADIUS; radius >= 1; radius >>= 1) {
        const span = 2 * radius + 1;
        consider(p, x, y, ox[p]! + Math.floor(uniform() * span) - radius, oy[p]! + Math.floor(uniform() * span) - radius);
        if (iteration === 0 && radius >= SECOND_SEARCH_MIN_RADIUS && cost2[p]! < Infinity) consider(p, x, y, ox2[p]! + Math.floor(uniform() * span) - radius, oy2[p]! + Math.floor(uniform() * span) - radius);
      }
    }
  }
  for (let p = 0; p < n; p++) {
    const x = p % width, y = (p - x) / width;
    if (!textured[p] || onGrid(x, y)) continue;
    const gx = x & ~1, gy = y & ~1;
    for (const [cx, cy] of [[gx, gy], [gx + 2, gy], [gx, gy + 2], [gx + 2, gy + 2]] as const) {
      if (cx >= width || cy >= height) continue;
      const q = cy * width + cx;
      if (cost[q]! < Infinity) consider(p, x, y, ox[q]!, oy[q]!);
      if (cost2[q]! < Infinity) consider(p, x, y, ox2[q]!, oy2[q]!);
    }
    for (let radius = 2; radius >= 1; radius >>= 1) {
      const span = 2 * radius + 1;
      if (cost[p]! < Infinity) consider(p, x, y, ox[p]! + Math.floor(uniform() * span) - radius, oy[p]! + Math.floor(uniform() * span) - radius);
    }
  }
  return { ox, oy, cost, ox2, oy2, cost2 };
}

/**
 * A rotated copy's offsets change by a fraction of a pixel from one pixel to the next, so
 * propagation hands each pixel a neighbour's offset that is slightly off. Each textured pixel
 * tries the filtered field's offset and its four neighbours, and keeps a better match.
 */
const FIELD_STEPS = [[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]] as const;
function refineTowardsField(nn: NearestNeighbours, fieldX: Int32Array, fieldY: Int32Array, features: Float32Array, dimensions: number, textured: Uint8Array, width: number, height: number): void {
  for (let p = 0; p < width * height; p++) {
    if (!textured[p]) continue;
    const x = p % width, y = (p - x) / width;
    for (const [ex, ey] of FIELD_STEPS) {
      const dx = fieldX[p]! + ex, dy = fieldY[p]! + ey;
      if (!admissible(x, y, dx, dy, width, height) || (dx === nn.ox[p] && dy === nn.oy[p])) continue;
      const d = featureDistance(features, dimensions, p, (y + dy) * width + x + dx, nn.cost[p]!);
      if (d < nn.cost[p]!) { nn.ox[p] = dx; nn.oy[p] = dy; nn.cost[p] = d; }
    }
  }
}

/**
 * Median of the matched offsets in each (2r+1)² window (edges clamped), both components from one
 * gather of the window: flat pixels are never matched and must not drag a copy's field towards 0.
 * A window without a matched pixel keeps 0, and so does every pixel not `wanted`.
 */
function medianFilter(ox: Int32Array, oy: Int32Array, matched: Uint8Array, wanted: Uint8Array, width: number, height: number, radius: number): { fieldX: Int32Array; fieldY: Int32Array } {
  const fieldX = new Int32Array(ox.length), fieldY = new Int32Array(oy.length);
  const side = 2 * radius + 1;
  // Float64 like every other caller of selectInPlace, which keeps it monomorphic; offsets are exact in it.
  const windowX = new Float64Array(side * side), windowY = new Float64Array(side * side);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * width + x;
      if (!wanted[p]) continue;
      let k = 0;
      for (let dy = -radius; dy <= radius; dy++) {
        const row = Math.min(height - 1, Math.max(0, y + dy)) * width;
        for (let dx = -radius; dx <= radius; dx++) {
          const q = row + Math.min(width - 1, Math.max(0, x + dx));
          if (matched[q]) { windowX[k] = ox[q]!; windowY[k++] = oy[q]!; }
        }
      }
      if (k > 0) {
        // No subarray: a view per pixel costs more than the median.
        fieldX[p] = selectInPlace(windowX, k >> 1, k);
        fieldY[p] = selectInPlace(windowY, k >> 1, k);
      }
    }
  }
  return { fieldX, fieldY };
}

/**
 * Dense linear fitting (§III-C): per window, the mean squared residual of the best affine fit
 * of the offsets to position, both components summed, over the matched pixels only (weighted
 * least squares from box sums of integral images, in coordinates centred on the window).
 * Windows reaching past the edge, or with under a quarter of their pixels matched, get Infinity.
 */
function fitError(ox: Int32Array, oy: Int32Array, matched: Uint8Array, width: number, height: number, radius: number): Float32Array {
  const error = new Float32Array(width * height).fill(Infinity);
  const side = 2 * radius + 1;
  const iw = width + 1;
  const integral = (value: (p: number, x: number, y: number) => number) => integralImage(width, height, (p, x, y) => (matched[p] ? value(p, x, y) : 0));
  const s1 = integral(() => 1), sx = integral((_p, x) => x), sy = integral((_p, _x, y) => y);
  const sxx = integral((_p, x) => x * x), sxy = integral((_p, x, y) => x * y), syy = integral((_p, _x, y) => y * y);
  const fields = [ox, oy].map((f) => ({ sd: integral((p) => f[p]!), sxd: integral((p, x) => x * f[p]!), syd: integral((p, _x, y) => y * f[p]!), sdd: integral((p) => f[p]! * f[p]!) }));
  // One window's box sum of an integral image; its corners are set per window (no closure per pixel).
  const box = Object.assign((s: Float64Array) => s[box.d]! - s[box.b]! - s[box.c]! + s[box.a]!, { a: 0, b: 0, c: 0, d: 0 });
  for (let yc = radius; yc < height - radius; yc++) {
    for (let xc = radius; xc < width - radius; xc++) {
      const a = (yc - radius) * iw + xc - radius;
      box.a = a; box.b = a + side; box.c = a + side * iw; box.d = box.c + side;
      const n = box(s1);
      if (n < (side * side) / 4) continue;
      // Centred moments of the matched pixels' coordinates.
      const mx = box(sx) - xc * n, my = box(sy) - yc * n;
      const mxx = box(sxx) - 2 * xc * box(sx) + xc * xc * n, myy = box(syy) - 2 * yc * box(sy) + yc * yc * n;
      const mxy = box(sxy) - xc * box(sy) - yc * box(sx) + xc * yc * n;
      // Normal equations M [u v w] = r for d ≈ u x' + v y' + w, solved by Cramer's rule.
      const det = mxx * (myy * n - my * my) - mxy * (mxy * n - my * mx) + mx * (mxy * my - myy * mx);
      if (Math.abs(det) < 1e-9) continue;
      let residual = 0;
      for (const { sd, sxd, syd, sdd } of fields) {
        const rd = box(sd), rx = box(sxd) - xc * rd, ry = box(syd) - yc * rd;
        const u = (rx * (myy * n - my * my) - mxy * (ry * n - my * rd) + mx * (ry * my - myy * rd)) / det;
        const v = (mxx * (ry * n - my * rd) - rx * (mxy * n - my * mx) + mx * (mxy * rd - ry * mx)) / det;
        const w = (mxx * (myy * rd - ry * my) - mxy * (mxy * rd - ry * mx) + rx * (mxy * my - myy * mx)) / det;
        residual += box(sdd) - (u * rx + v * ry + w * rd);
      }
      error[yc * width + xc] = Math.max(0, residual) / n;
    }
  }
  return error;
}

/** What decides that a region of the dense field is a copy; the defaults are the method's. */
export interface CopyRegionRules {
  maxFitError: number;
  minAreaShare: number;
  minArea: number;
  /** Shortest median shift (pixels) of a copied region. */
  minShift: number;
  ambiguousRatio: number;
  periodicShare: number;
}
export const COPY_REGION_RULES: CopyRegionRules = {
  maxFitError: MAX_FIT_ERROR,
  minAreaShare: MIN_AREA_SHARE,
  minArea: MIN_AREA,
  minShift: MIN_COPY_SHIFT,
  ambiguousRatio: AMBIGUOUS_RATIO,
  periodicShare: PERIODIC_SHARE,
};

export interface DenseField extends NearestNeighbours {
  width: number;
  height: number;
  textured: Uint8Array;
  /** Median-filtered offsets and their dense-linear-fit error. */
  fieldX: Int32Array;
  fieldY: Int32Array;
  fitError: Float32Array;
  features: Float32Array;
  dimensions: number;
  grey: Float32Array;
}

/** The expensive half: features, nearest neighbours, the filtered field and its fit error. */
export function denseField(grey: Float32Array, width: number, height: number, signal: AbortSignal): DenseField {
  const { features, dimensions } = jetFeatures(grey, width, height);
  signal.throwIfAborted();
  const spread = localSpread(grey, width, height, TEXTURE_RADIUS);
  const textured = new Uint8Array(width * height);
  for (let p = 0; p < textured.length; p++) textured[p] = spread[p]! >= MIN_STD ? 1 : 0;
  const nn = patchMatch(features, dimensions, textured, width, height);
  signal.throwIfAborted();
  const matched = new Uint8Array(width * height);
  for (let p = 0; p < matched.length; p++) matched[p] = nn.cost[p]! < Infinity ? 1 : 0;
  // Only textured pixels' filtered offsets are ever read (refinement, fit and regions all skip flat ones).
  const { fieldX, fieldY } = medianFilter(nn.ox, nn.oy, matched, textured, width, height, MEDIAN_RADIUS);
  refineTowardsField(nn, fieldX, fieldY, features, dimensions, textured, width, height);
  return { ...nn, width, height, textured, fieldX, fieldY, fitError: fitError(fieldX, fieldY, matched, width, height, FIT_RADIUS), features, dimensions, grey };
}

/** Feature distance between pixel p and the pixel at offset (dx, dy) from it, rounded; Infinity outside. */
function slidCost(field: DenseField, p: number, dx: number, dy: number): number {
  const x = p % field.width, y = (p - x) / field.width;
  const tx = Math.round(x + dx), ty = Math.round(y + dy);
  if (tx < 0 || tx >= field.width || ty < 0 || ty >= field.height) return Infinity;
  return featureDistance(field.features, field.dimensions, p, ty * field.width + tx);
}

/**
 * The largest entry per shift, largest first, at most five: one copy is found as several
 * components (both ways round, or split by a flat patch) whose median shifts differ by a pixel.
 */
function largestPerShift<T extends { shift: string; pixels: number }>(entries: T[]): T[] {
  const kept: Array<{ entry: T; dx: number; dy: number }> = [];
  for (const entry of [...entries].sort((a, b) => b.pixels - a.pixels)) {
    const [dx, dy] = entry.shift.split(',').map(Number) as [number, number];
    if (!kept.some((k) => Math.abs(k.dx - dx) <= SAME_SHIFT && Math.abs(k.dy - dy) <= SAME_SHIFT)) kept.push({ entry, dx, dy });
  }
  return kept.slice(0, 5).map((k) => k.entry);
}

/** One accepted component (`here`), the pixels its matches point at (`there`), and its median shift. */
export interface CopySides {
  here: Int32Array;
  there: Int32Array;
  dx: number;
  dy: number;
}

/** The copied regions of a dense field: each copy's two sides (pixels) and its shift. */
export function copiedRegions(field: DenseField, rules: CopyRegionRules = COPY_REGION_RULES) {
  const { width, height, textured, cost, cost2, fieldX: ox, fieldY: oy } = field;
  const n = width * height;
  // Candidate pixels: textured, matched to where the filtered field points (within a pixel or
  // two), on a locally affine field.
  const candidate = new Uint8Array(n);
  for (let p = 0; p < n; p++) {
    if (textured[p] && cost[p]! < Infinity && field.fitError[p]! < rules.maxFitError && Math.abs(field.ox[p]! - ox[p]!) <= AGREEMENT && Math.abs(field.oy[p]! - oy[p]!) <= AGREEMENT) candidate[p] = 1;
  }
  // Solid pixels: the whole (2·CORE_RADIUS+1)² square around them is candidate. A copied
  // region has a solid core; words repeated in a line of text (identical glyphs) match
  // exactly too, but only in thin strips.
  const candidates = integralImage(width, height, (p) => candidate[p]!);
  const side = 2 * CORE_RADIUS + 1;
  const solid = (p: number) => {
    const x = p % width, y = (p - x) / width;
    if (x < CORE_RADIUS || y < CORE_RADIUS || x + CORE_RADIUS >= width || y + CORE_RADIUS >= height) return false;
    return boxSum(candidates, width, x - CORE_RADIUS, y - CORE_RADIUS, x + CORE_RADIUS + 1, y + CORE_RADIUS + 1) === side * side;
  };
  const minArea = Math.max(rules.minArea, rules.minAreaShare * n);
  const seen = new Uint8Array(n);
  const accepted: Array<{ shift: string; pixels: number; ambiguousShare: number }> = [];
  /** Each accepted component (one side of a copy) and the pixels its matches point at (the other side). */
  const sides: CopySides[] = [];
  let rejectedAsPeriodic = 0, rejectedAsThin = 0;
  const stack: number[] = [];
  for (let start = 0; start < n; start++) {
    if (!candidate[start] || seen[start]) continue;
    const component: number[] = [];
    stack.push(start);
    seen[start] = 1;
    while (stack.length) {
      const p = stack.pop()!;
      component.push(p);
      const x = p % width;
      for (const q of [x > 0 ? p - 1 : -1, x < width - 1 ? p + 1 : -1, p - width, p + width]) {
        if (q >= 0 && q < n && candidate[q] && !seen[q]) { seen[q] = 1; stack.push(q); }
      }
    }
    if (component.length < minArea) continue;
    let core = 0;
    for (const p of component) if (solid(p)) core++;
    if (core < MIN_CORE) { rejectedAsThin++; continue; }
    const shiftsX = component.map((p) => ox[p]!), shiftsY = component.map((p) => oy[p]!);
    let dx = quantile(shiftsX, 0.5), dy = quantile(shiftsY, 0.5);
    const length = Math.hypot(dx, dy);
    if (length < rules.minShift) continue;
    // Ambiguous: a second match about as good elsewhere, or the same match slid along the
    // shift's own direction (a straight edge or a stripe matches itself all along).
    const ux = (SLIDE * dx) / length, uy = (SLIDE * dy) / length;
    let ambiguous = 0;
    for (const p of component) {
      const bound = Math.max(rules.ambiguousRatio * cost[p]!, AMBIGUOUS_FLOOR);
      if (cost2[p]! < bound || slidCost(field, p, ox[p]! + ux, oy[p]! + uy) < bound || slidCost(field, p, ox[p]! - ux, oy[p]! - uy) < bound) ambiguous++;
    }
    const ambiguousShare = ambiguous / component.length;
    if (ambiguousShare >= rules.periodicShare) { rejectedAsPeriodic++; continue; }
    // The component and the pixels it copies from (or to).
    const there: number[] = [];
    for (const p of component) {
      const x = p % width, y = (p - x) / width;
      const tx = x + ox[p]!, ty = y + oy[p]!;
      if (tx >= 0 && tx < width && ty >= 0 && ty < height) there.push(ty * width + tx);
    }
    sides.push({ here: Int32Array.from(component), there: Int32Array.from(there), dx, dy });
    if (dx < 0 || (dx === 0 && dy < 0)) { dx = -dx; dy = -dy; } // one orientation for a pair found both ways round
    accepted.push({ shift: `${Math.round(dx)},${Math.round(dy)}`, pixels: component.length, ambiguousShare: Math.round(ambiguousShare * 1000) / 1000 });
  }
  return { sides, shiftVectors: largestPerShift(accepted), rejectedAsPeriodic, rejectedAsThin };
}

/** The image's own grey pixels when the dense field was computed on a smaller copy of it. */
export interface FullResolution {
  luma: Float32Array;
  width: number;
  height: number;
}

/** What tells a copy's pasted side from its source, read on the image at full size. */
export interface PastedSideCues {
  /** The image's grey pixels, when the field was computed on a smaller copy. */
  full?: FullResolution;
  /** The aligned double-JPEG map over the full image's 8x8 blocks, when the file shows two compressions. */
  singleCompression?: BlockMap | null;
  /** The JPEG steps estimated on a losslessly saved image's 8x8 grid: its blocks' alignment with that JPEG's grid is read when a copy is found. */
  priorJpegGrid?: JpegGrid | null;
}

/** Mean absolute Laplacian of the full-resolution pixels that fall in each analysis pixel. */
function residualPerPixel(full: FullResolution, width: number, height: number): Float32Array {
  const { luma, width: fullWidth, height: fullHeight } = full;
  const sum = new Float64Array(width * height), count = new Uint32Array(width * height);
  const columnOf = Int32Array.from({ length: fullWidth }, (_, x) => Math.min(width - 1, Math.floor((x * width) / fullWidth)));
  for (let y = 1; y < fullHeight - 1; y++) {
    const row = Math.min(height - 1, Math.floor((y * height) / fullHeight)) * width;
    for (let x = 1, q = y * fullWidth + 1; x < fullWidth - 1; x++, q++) {
      const cell = row + columnOf[x]!;
      sum[cell] = sum[cell]! + Math.abs(4 * luma[q]! - luma[q - 1]! - luma[q + 1]! - luma[q - fullWidth]! - luma[q + fullWidth]!);
      count[cell] = count[cell]! + 1;
    }
  }
  const mean = new Float32Array(width * height); // a loop: Float32Array.from with a map function costs more than the pass
  for (let i = 0; i < mean.length; i++) if (count[i]) mean[i] = sum[i]! / count[i]!;
  return mean;
}

/** Residual energy of a component over that of the pixels its filtered matches point at. */
function residualRatio(field: DenseField, side: CopySides, residual: Float32Array): number {
  let here = 0, there = 0;
  for (const p of side.here) {
    const x = p % field.width, y = (p - x) / field.width;
    const tx = x + field.fieldX[p]!, ty = y + field.fieldY[p]!;
    if (tx < 0 || tx >= field.width || ty < 0 || ty >= field.height) continue;
    here += residual[p]!;
    there += residual[ty * field.width + tx]!;
  }
  return there > 0 ? here / there : 1;
}

/** Column and row of the full image's 8x8 block under analysis pixel p (unclamped). */
function blockUnder(p: number, width: number, scale: number): [number, number] {
  const x = p % width, y = (p - x) / width;
  return [Math.floor(((x + 0.5) * scale) / 8), Math.floor(((y + 0.5) * scale) / 8)];
}

/** Mean of a full-image 8x8-block map over the blocks under the given analysis pixels (edge pixels take the last whole block). */
function meanOverBlocks(map: BlockMap, pixels: Int32Array, width: number, scale: number): number {
  let sum = 0;
  for (const p of pixels) {
    const [column, row] = blockUnder(p, width, scale);
    sum += map.values[Math.min(map.rows - 1, row) * map.cols + Math.min(map.cols - 1, column)]!;
  }
  return pixels.length ? sum / pixels.length : 0;
}

/** Mean grid alignment of the informative 8x8 blocks under the given analysis pixels (null if none). */
function meanAlignment(alignment: GridAlignment, pixels: Int32Array, width: number, scale: number): number | null {
  let sum = 0, count = 0;
  for (const p of pixels) {
    const [column, row] = blockUnder(p, width, scale);
    if (column >= alignment.cols || row >= alignment.rows) continue;
    const block = row * alignment.cols + column;
    if (!alignment.informative[block]) continue;
    sum += alignment.values[block]!;
    count++;
  }
  return count ? sum / count : null;
}

function boxOf(pixels: Int32Array, width: number, scale: number) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const p of pixels) {
    const x = p % width, y = (p - x) / width;
    x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
  }
  return { x: Math.floor(x0 * scale), y: Math.floor(y0 * scale), width: Math.ceil((x1 - x0 + 1) * scale), height: Math.ceil((y1 - y0 + 1) * scale) };
}

type Side = 'here' | 'there';

/**
 * The pixels to mark: for each copy whose pasted side is known, that side only; for the
 * others, both sides, except pixels another copy showed to be a source.
 */
function pastedSides(field: DenseField, sides: CopySides[], cues: PastedSideCues) {
  const n = field.width * field.height;
  const pasted = new Uint8Array(n), source = new Uint8Array(n), undetermined = new Uint8Array(n);
  const decisions: Array<{
    shift: string;
    pixels: number;
    residualRatio: number;
    singleCompressionGap: number | null;
    gridAlignment: { weaker: number; stronger: number } | null;
    decidedBy: Array<'resampling' | 'recompression' | 'grid alignment'> | 'conflicting cues' | null;
    pasted: ReturnType<typeof boxOf> | null;
    source: ReturnType<typeof boxOf> | null;
  }> = [];
  if (!sides.length) return { marked: pasted, decisions };
  const { full, singleCompression, priorJpegGrid } = cues;
  const gridAlignment = priorJpegGrid ? jpegGridAlignment(priorJpegGrid) : null;
  const residual = residualPerPixel(full ?? { luma: field.grey, width: field.width, height: field.height }, field.width, field.height);
  const scale = full ? full.width / field.width : 1;
  const round3 = (v: number) => Math.round(v * 1000) / 1000;
  for (const side of sides) {
    const ratio = residualRatio(field, side, residual);
    const gap = singleCompression ? meanOverBlocks(singleCompression, side.here, field.width, scale) - meanOverBlocks(singleCompression, side.there, field.width, scale) : null;
    const alignedHere = gridAlignment ? meanAlignment(gridAlignment, side.here, field.width, scale) : null;
    const alignedThere = gridAlignment ? meanAlignment(gridAlignment, side.there, field.width, scale) : null;
    const offGrid = (weaker: number, stronger: number) => stronger >= MIN_GRID_ALIGNMENT && weaker <= OFF_GRID_SHARE * stronger;
    const votes = {
      resampling: ratio < RESAMPLED_RATIO ? 'here' : ratio > 1 / RESAMPLED_RATIO ? 'there' : null,
      recompression: gap === null ? null : gap >= RECOMPRESSION_GAP ? 'here' : gap <= -RECOMPRESSION_GAP ? 'there' : null,
      'grid alignment': alignedHere === null || alignedThere === null ? null : offGrid(alignedHere, alignedThere) ? 'here' : offGrid(alignedThere, alignedHere) ? 'there' : null,
    } satisfies Record<string, Side | null>;
    const cast = (Object.keys(votes) as Array<keyof typeof votes>).filter((cue) => votes[cue] !== null);
    const conflict = new Set(cast.map((cue) => votes[cue])).size > 1;
    const decided = conflict || !cast.length ? null : votes[cast[0]!];
    const [copy, original] = decided === 'here' ? [side.here, side.there] : decided === 'there' ? [side.there, side.here] : [null, null];
    if (copy && original) {
      for (const p of copy) pasted[p] = 1;
      for (const p of original) source[p] = 1;
    } else {
      for (const p of side.here) undetermined[p] = 1;
      for (const p of side.there) undetermined[p] = 1;
    }
    const flip = side.dx < 0 || (side.dx === 0 && side.dy < 0); // one orientation for a pair found both ways round
    decisions.push({
      shift: `${Math.round(flip ? -side.dx : side.dx)},${Math.round(flip ? -side.dy : side.dy)}`,
      pixels: side.here.length,
      // Weaker side over stronger: under RESAMPLED_RATIO, the weaker side was resampled.
      residualRatio: round3(Math.min(ratio, 1 / ratio)),
      singleCompressionGap: gap === null ? null : round3(Math.abs(gap)),
      gridAlignment: alignedHere === null || alignedThere === null ? null : { weaker: round3(Math.min(alignedHere, alignedThere)), stronger: round3(Math.max(alignedHere, alignedThere)) },
      decidedBy: conflict ? 'conflicting cues' : cast.length ? cast : null,
      pasted: copy ? boxOf(copy, field.width, scale) : null,
      source: original ? boxOf(original, field.width, scale) : null,
    });
  }
  for (let p = 0; p < n; p++) if (undetermined[p] && !source[p]) pasted[p] = 1;
  return { marked: pasted, decisions: largestPerShift(decisions) };
}

/** `cues`: what the full-size image tells about which side of a copy was pasted (see PastedSideCues). */
export function copyMoveDetection(grey: Float32Array, width: number, height: number, signal: AbortSignal, cues: PastedSideCues = {}): MethodResult {
  if (width < MIN_SHIFT + 2 * TEXTURE_RADIUS || height < 2 * TEXTURE_RADIUS + 1 || width * height < 4 * MIN_AREA) {
    return skippedMethod('copy-move', LABEL, 'image too small');
  }
  const field = denseField(grey, width, height, signal);
  if (!field.textured.includes(1)) return skippedMethod('copy-move', LABEL, `no textured pixel: nowhere do the grey levels vary by ${MIN_STD} or more, so nothing can be matched`);
  const { sides, shiftVectors, rejectedAsPeriodic, rejectedAsThin } = copiedRegions(field);
  const { marked, decisions } = pastedSides(field, sides, cues);
  // Cells covered by marked pixels, grown by the reach of the fine features (about 2σ).
  const cols = Math.ceil(width / CELL), rows = Math.ceil(height / CELL);
  const covered = new Float32Array(cols * rows);
  const grow = SIGMA * 2;
  for (let p = 0; p < width * height; p++) {
    if (!marked[p]) continue;
    const x = p % width, y = (p - x) / width;
    for (let cy = Math.max(0, Math.floor((y - grow) / CELL)); cy <= Math.min(rows - 1, Math.floor((y + grow) / CELL)); cy++) {
      for (let cx = Math.max(0, Math.floor((x - grow) / CELL)); cx <= Math.min(cols - 1, Math.floor((x + grow) / CELL)); cx++) covered[cy * cols + cx] = 1;
    }
  }
  const map = smoothMap({ values: covered, cols, rows });
  return {
    id: 'copy-move',
    label: LABEL,
    map,
    peak: quantile(map.values, 0.99),
    area: covered.reduce((s, v) => s + v, 0) / covered.length,
    evidence: {
      texturedPixels: field.textured.reduce((s, v) => s + v, 0),
      shiftVectors,
      whichSidePasted: decisions,
      rejectedAsRepeatedStructure: rejectedAsPeriodic,
      rejectedAsThin,
      sigma: SIGMA,
    },
  };
}
