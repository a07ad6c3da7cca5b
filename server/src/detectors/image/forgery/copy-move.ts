/**
 * Copy-move detection by block matching: V. Christlein, C. Riess, J. Jordan, C. Riess and
 * E. Angelopoulou, "An Evaluation of Popular Copy-Move Forgery Detection Approaches", IEEE
 * TIFS 7(6), 2012, §III (the common pipeline: overlapping blocks, features, lexicographic
 * sorting, matching, same-shift-vector filtering) with intensity features in the spirit of
 * their "Luo"/"Lin" block features: the 16 sub-block means of a 16x16 block, made invariant
 * to brightness offsets. Matches only count when many block pairs share one shift vector
 * (a copied region moves as a whole); flat blocks (sky, walls) are excluded because they
 * match everywhere. Blocks of repeated structure (text, tiles, a straight edge slid along
 * itself) match many others; those of a copied region match their copy, so shift clusters
 * made of such many-match blocks are dropped (this replaces an older blanket exclusion of
 * horizontal and vertical shifts, which missed real copies moved along an axis). Rotated or
 * scaled copies are outside what this variant sees.
 */
import { quantile, smoothMap } from '../forensic-map.js';
import type { MethodResult } from './method.js';

const BLOCK = 16;
const STRIDE = 1; // every offset: a copy moved by an odd number of pixels must still align
const SUB = 4; // 4x4 sub-blocks of 4x4 pixels
const MIN_STD = 6; // grey levels: flatter blocks are excluded
const MAX_FEATURE_DISTANCE = 2.2; // RMS difference of sub-block means, grey levels
const MAX_SQUARED_DISTANCE = MAX_FEATURE_DISTANCE ** 2 * 16;
const MIN_SHIFT = 40; // pixels: nearer matches are self-similarity of texture
/** Matched blocks must form one connected patch this large (blocks at STRIDE): repeated letters or stripes match in scattered small pieces. */
const MIN_COMPONENT_BLOCKS = 150;
/** A block matching more than this many others belongs to repeated structure, not to a copy. */
const MAX_PARTNERS = 3;
/** A shift cluster with this share of such pairs is a period (tiles, text, edges), not a copy. */
const PERIODIC_SHARE = 0.25;
const NEIGHBOURS = 12; // compared in sorted order
const CELL = 8;

/**
 * The 16 brightness-free sub-block means of every 16x16 block (stride 1), and the textured
 * blocks among them. Each phase of the method is its own function: V8 optimises a function
 * from its loops, and one long function with several loops kept deoptimising on the loops it
 * had not reached yet.
 */
function blockFeatures(grey: Float32Array, width: number, height: number): { features: Float32Array; keys: number[]; bx: number; by: number } {
  // Integral image for O(1) sub-block sums.
  const iw = width + 1;
  const integral = new Float64Array(iw * (height + 1));
  for (let y = 0; y < height; y++) {
    let rowSum = 0;
    for (let x = 0; x < width; x++) {
      rowSum += grey[y * width + x]!;
      integral[(y + 1) * iw + x + 1] = integral[y * iw + x + 1]! + rowSum;
    }
  }
  const subSize = BLOCK / SUB;
  // Sum of the sub-block at every position, once: each is shared by up to sixteen blocks.
  const boxWidth = width - subSize + 1;
  const boxes = new Float64Array(boxWidth * (height - subSize + 1));
  for (let y = 0; y + subSize <= height; y++) {
    for (let x = 0; x < boxWidth; x++) boxes[y * boxWidth + x] = integral[(y + subSize) * iw + x + subSize]! - integral[y * iw + x + subSize]! - integral[(y + subSize) * iw + x]! + integral[y * iw + x]!;
  }
  const bx = Math.floor((width - BLOCK) / STRIDE) + 1, by = Math.floor((height - BLOCK) / STRIDE) + 1;
  const features = new Float32Array(bx * by * 16);
  const keys: number[] = [];
  for (let j = 0; j < by; j++) {
    for (let i = 0; i < bx; i++) {
      const x0 = i * STRIDE, y0 = j * STRIDE, base = (j * bx + i) * 16;
      let mean = 0;
      for (let s = 0; s < 16; s++) {
        const v = boxes[(y0 + (s >> 2) * subSize) * boxWidth + x0 + (s & 3) * subSize]! / (subSize * subSize); // SUB = 4
        features[base + s] = v;
        mean += v;
      }
      mean /= 16;
      let variance = 0;
      for (let s = 0; s < 16; s++) { features[base + s]! -= mean; variance += features[base + s]! ** 2; }
      if (Math.sqrt(variance / 16) >= MIN_STD) keys.push(j * bx + i);
    }
  }
  return { features, keys, bx, by };
}

/** `keys` (textured blocks) put in lexicographic order of their coarsely quantised features, in place. */
function sortBlocks(features: Float32Array, keys: number[], blockCount: number): void {
  if (blockCount >= 2 ** 21) throw new Error('copy-move: too many blocks'); // guarded by COPY_MOVE_MAX_PIXELS
  // Lexicographic order of coarsely quantised features brings similar blocks together. The
  // leading four quantised values are packed into one number with the block index below
  // them, so a native numeric sort does the work.
  const coarse = new Int16Array(blockCount * 16);
  for (const index of keys) for (let s = 0; s < 16; s++) coarse[index * 16 + s] = Math.floor(features[index * 16 + s]! / 4 + 0.5); // Math.round, faster in V8
  const packed = new Float64Array(keys.length);
  for (let k = 0; k < keys.length; k++) {
    const index = keys[k]!;
    let key = 0;
    for (let s = 0; s < 4; s++) key = key * 128 + Math.max(0, Math.min(127, coarse[index * 16 + s]! + 64));
    packed[k] = key * 2 ** 21 + index;
  }
  packed.sort();
  for (let k = 0; k < keys.length; k++) keys[k] = packed[k]! % 2 ** 21;
  // Blocks sharing the packed prefix are ordered by their remaining twelve values.
  // Ties keep block order (the packed sort put them so), in place on a typed array.
  const rest = (a: number, b: number) => {
    for (let s = 4; s < 16; s++) {
      const d = coarse[a * 16 + s]! - coarse[b * 16 + s]!;
      if (d !== 0) return d;
    }
    return a - b;
  };
  const order = Int32Array.from(keys);
  for (let start = 0; start < order.length; ) {
    const prefix = Math.floor(packed[start]! / 2 ** 21);
    let end = start + 1;
    while (end < order.length && Math.floor(packed[end]! / 2 ** 21) === prefix) end++;
    if (end - start > 2) order.subarray(start, end).sort(rest);
    start = end;
  }
  for (let k = 0; k < order.length; k++) keys[k] = order[k]!;
}

export function copyMoveDetection(grey: Float32Array, width: number, height: number, signal: AbortSignal): MethodResult {
  const label = 'Copy-move block matching (Christlein et al. 2012)';
  if (width < BLOCK * 3 || height < BLOCK * 3) return { id: 'copy-move', label, map: null, peak: 0, area: 0, evidence: { note: 'image too small' }, skipped: 'image too small' };
  const { features, keys, bx, by } = blockFeatures(grey, width, height);
  if (signal.aborted) throw new Error('analysis aborted');
  sortBlocks(features, keys, bx * by);
  const pairs: Array<[number, number, number, number]> = []; // a, b, dx, dy
  // Per matched block, the distinct directions of its partners; partners within two pixels of
  // each other are one (in smooth texture a copy also matches its neighbours one pixel off).
  const partnerShifts = new Map<number, number[]>();
  const addPartner = (block: number, vx: number, vy: number) => {
    let seen = partnerShifts.get(block);
    if (!seen) partnerShifts.set(block, (seen = []));
    if (seen.length / 2 > MAX_PARTNERS) return; // enough to tell
    for (let i = 0; i < seen.length; i += 2) if (Math.abs(seen[i]! - vx) <= 2 && Math.abs(seen[i + 1]! - vy) <= 2) return;
    seen.push(vx, vy);
  };
  const partners = (block: number) => (partnerShifts.get(block)?.length ?? 0) / 2;
  const shiftCounts = new Map<number, number>();
  const shiftKey = (dx: number, dy: number) => (dx + 4096) * 8192 + (dy + 4096);
  // A pair matched either way round is one shift: keys live in the half-plane dx > 0 or
  // (dx = 0, dy > 0), so a neighbour of (0, dy) such as (−1, dy) is looked up as (1, −dy).
  const canonicalKey = (dx: number, dy: number) => (dx < 0 || (dx === 0 && dy < 0) ? shiftKey(-dx, -dy) : shiftKey(dx, dy));
  // Features copied in sorted order: neighbours are then adjacent in memory, not scattered.
  const sorted = new Float32Array(keys.length * 16);
  for (let k = 0; k < keys.length; k++) for (let s = 0; s < 16; s++) sorted[k * 16 + s] = features[keys[k]! * 16 + s]!;
  for (let k = 0; k < keys.length; k++) {
    const a = keys[k]!;
    for (let m = k + 1; m < Math.min(keys.length, k + 1 + NEIGHBOURS); m++) {
      const b = keys[m]!;
      // Squared distance with an early exit: most neighbours in sorted order are not matches.
      let d = 0;
      for (let s = 0; s < 16 && d <= MAX_SQUARED_DISTANCE; s++) {
        const e = sorted[k * 16 + s]! - sorted[m * 16 + s]!;
        d += e * e;
      }
      if (d > MAX_SQUARED_DISTANCE) continue;
      let dx = ((b % bx) - (a % bx)) * STRIDE, dy = (Math.floor(b / bx) - Math.floor(a / bx)) * STRIDE;
      if (Math.hypot(dx, dy) < MIN_SHIFT) continue;
      if (dx < 0 || (dx === 0 && dy < 0)) { dx = -dx; dy = -dy; }
      pairs.push([a, b, dx, dy]);
      const ax = a % bx, ay = Math.floor(a / bx), bX = b % bx, bY = Math.floor(b / bx);
      addPartner(a, bX - ax, bY - ay);
      addPartner(b, ax - bX, ay - bY);
      const key = shiftKey(dx, dy);
      shiftCounts.set(key, (shiftCounts.get(key) ?? 0) + 1);
    }
  }
  // A shift vector (with its ±STRIDE neighbours, for sub-stride offsets) must gather enough
  // pairs to cover at least a ~24x24 pixel region.
  const minPairs = 60;
  const support = (dx: number, dy: number) => {
    let total = 0;
    for (let ddx = -STRIDE; ddx <= STRIDE; ddx += STRIDE) for (let ddy = -STRIDE; ddy <= STRIDE; ddy += STRIDE) total += shiftCounts.get(canonicalKey(dx + ddx, dy + ddy)) ?? 0;
    return total;
  };
  /**
   * Share of a cluster's pairs whose source or target matches blocks in more than
   * MAX_PARTNERS directions: repeated structure (every multiple of a period matches, and so does any slide of
   * a straight edge along itself) gives a block many partners; a region copied once or twice
   * gives its blocks one or two.
   */
  const repetition = (clusterPairs: Array<[number, number]>) => {
    let repeated = 0;
    for (const [source, target] of clusterPairs) if (partners(source) > MAX_PARTNERS || partners(target) > MAX_PARTNERS) repeated++;
    return clusterPairs.length ? repeated / clusterPairs.length : 0;
  };
  // Group pairs by shift cluster, then keep only source blocks in large connected patches.
  const clusterOf = new Map<number, number>();
  const clusters: Array<{ dx: number; dy: number; pairs: Array<[number, number]> }> = [];
  for (const [a, b, dx, dy] of pairs) {
    if (support(dx, dy) < minPairs) continue;
    let cluster: number | undefined;
    for (let ddx = -STRIDE; ddx <= STRIDE && cluster === undefined; ddx += STRIDE) {
      for (let ddy = -STRIDE; ddy <= STRIDE && cluster === undefined; ddy += STRIDE) cluster = clusterOf.get(canonicalKey(dx + ddx, dy + ddy));
    }
    if (cluster === undefined) {
      cluster = clusters.length;
      clusters.push({ dx, dy, pairs: [] });
    }
    clusterOf.set(shiftKey(dx, dy), cluster);
    const source = a < b ? a : b, target = a < b ? b : a;
    clusters[cluster]!.pairs.push([source, target]);
  }
  const cols = Math.ceil(width / CELL), rows = Math.ceil(height / CELL);
  const covered = new Float32Array(cols * rows);
  const accepted: Array<{ shift: string; pairs: number; patchBlocks: number }> = [];
  const mark = (index: number) => {
    const x0 = (index % bx) * STRIDE, y0 = Math.floor(index / bx) * STRIDE;
    for (let cy = Math.floor(y0 / CELL); cy <= Math.floor((y0 + BLOCK - 1) / CELL); cy++) {
      for (let cx = Math.floor(x0 / CELL); cx <= Math.floor((x0 + BLOCK - 1) / CELL); cx++) covered[cy * cols + cx] = 1;
    }
  };
  for (const cluster of clusters) {
    if (repetition(cluster.pairs) >= PERIODIC_SHARE) continue;
    const partner = new Map<number, number>(cluster.pairs);
    const seen = new Set<number>();
    let kept = 0;
    for (const start of partner.keys()) {
      if (seen.has(start)) continue;
      const component: number[] = [];
      const stack = [start];
      seen.add(start);
      while (stack.length) {
        const index = stack.pop()!;
        component.push(index);
        const i = index % bx, j = Math.floor(index / bx);
        for (let dj = -2 * STRIDE; dj <= 2 * STRIDE; dj++) for (let di = -2 * STRIDE; di <= 2 * STRIDE; di++) {
          const ni = i + di, nj = j + dj;
          if (ni < 0 || ni >= bx || nj < 0 || nj >= by) continue;
          const next = nj * bx + ni;
          if (partner.has(next) && !seen.has(next)) { seen.add(next); stack.push(next); }
        }
      }
      if (component.length < MIN_COMPONENT_BLOCKS) continue;
      kept += component.length;
      for (const index of component) { mark(index); mark(partner.get(index)!); }
    }
    if (kept > 0) accepted.push({ shift: `${cluster.dx},${cluster.dy}`, pairs: cluster.pairs.length, patchBlocks: kept });
  }
  const map = smoothMap({ values: covered, cols, rows });
  const shifts = accepted.sort((x, y) => y.patchBlocks - x.patchBlocks).slice(0, 5);
  return {
    id: 'copy-move',
    label,
    map,
    peak: quantile(map.values, 0.99),
    area: covered.reduce((s, v) => s + v, 0) / covered.length,
    evidence: { texturedBlocks: keys.length, candidatePairs: pairs.length, shiftVectors: shifts, blockSize: BLOCK },
  };
}
