/**
 * Block-level suspicion maps shared by the forgery methods: a grid of cells over a raster,
 * one value 0..1 per cell, plus robust normalisation, resampling onto a common grid and
 * region extraction (connected components of high cells, as bounding boxes).
 */

export interface BlockMap {
  /** Row-major, `cols * rows` values in 0..1 (1 = most suspicious). */
  values: Float32Array;
  cols: number;
  rows: number;
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Rearranges `a` so that a[k] is its k-th smallest value, everything before it no larger and
 * everything after no smaller, and returns a[k] (Hoare's selection, C. A. R. Hoare, "Algorithm
 * 65: Find", CACM 4(7), 1961): linear on average where sorting is n log n, and the maps of a
 * 12 MP image have 190,000 cells. Only a[0 .. length) takes part. NaN-free input only.
 */
export function selectInPlace(a: Float64Array, k: number, length = a.length): number {
  let left = 0, right = length - 1;
  while (right > left) {
    const pivot = a[(left + right) >> 1]!;
    let i = left, j = right;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const swap = a[i]!;
        a[i++] = a[j]!;
        a[j--] = swap;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else break; // a[j + 1 .. i − 1] all equal the pivot
  }
  return a[k]!;
}

/** A copy as Float64Array, or null if a NaN would break selection (then the caller sorts). */
function copyWithoutNaN(values: ArrayLike<number>): { copy: Float64Array; hasNaN: boolean } {
  const copy = new Float64Array(values.length);
  let hasNaN = false;
  for (let i = 0; i < copy.length; i++) {
    const v = values[i]!;
    copy[i] = v;
    if (v !== v) hasNaN = true;
  }
  return { copy, hasNaN };
}

export function median(values: ArrayLike<number>): number {
  if (values.length === 0) return 0;
  const { copy, hasNaN } = copyWithoutNaN(values);
  const mid = copy.length >> 1;
  if (hasNaN) {
    copy.sort();
    return copy.length % 2 ? copy[mid]! : (copy[mid - 1]! + copy[mid]!) / 2;
  }
  const upper = selectInPlace(copy, mid);
  if (copy.length % 2) return upper;
  let lower = -Infinity;
  for (let i = 0; i < mid; i++) lower = Math.max(lower, copy[i]!);
  return (lower + upper) / 2;
}

export function quantile(values: ArrayLike<number>, q: number): number {
  if (values.length === 0) return 0;
  const { copy, hasNaN } = copyWithoutNaN(values);
  const k = Math.min(copy.length - 1, Math.max(0, Math.round(q * (copy.length - 1))));
  if (hasNaN) return copy.sort()[k]!;
  return selectInPlace(copy, k);
}

/** How many values are at least `threshold` (the fusion's area feature). */
export function countAtLeast(values: ArrayLike<number>, threshold: number): number {
  let count = 0;
  for (let i = 0; i < values.length; i++) if (values[i]! >= threshold) count++;
  return count;
}

/**
 * Robust outlier map: (v - median) / (1.4826 MAD), mapped through a logistic so a cell at
 * `zAtHalf` robust deviations reads 0.5. Cells below the median read ~0. Null cells (NaN)
 * are ignored and read 0. `minSpread`: the scale is never taken below it (a MAD of 0, when most
 * cells hold one value, would make every other cell an outlier).
 */
export function robustOutlierMap(raw: Float32Array, zAtHalf = 4, minSpread = 0): { values: Float32Array; medianValue: number; mad: number } {
  const finite = new Float64Array(raw.length);
  let count = 0;
  for (let i = 0; i < raw.length; i++) if (Number.isFinite(raw[i]!)) finite[count++] = raw[i]!;
  const kept = finite.subarray(0, count);
  const medianValue = median(kept);
  for (let i = 0; i < count; i++) kept[i] = Math.abs(kept[i]! - medianValue);
  const mad = Math.max(minSpread, median(kept) * 1.4826 || 1e-6);
  const values = new Float32Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const v = raw[i]!;
    if (!Number.isFinite(v)) continue;
    const z = (v - medianValue) / mad;
    values[i] = 1 / (1 + Math.exp(-(z - zAtHalf) * 1.2));
  }
  return { values, medianValue, mad };
}

/** Bilinear resampling of a map onto another grid (maps from different resolutions meet here). */
export function resampleMap(map: BlockMap, cols: number, rows: number): BlockMap {
  if (map.cols === cols && map.rows === rows) return map;
  const values = new Float32Array(cols * rows);
  for (let r = 0; r < rows; r++) {
    const sy = Math.min(map.rows - 1, Math.max(0, ((r + 0.5) * map.rows) / rows - 0.5));
    const y0 = Math.floor(sy), y1 = Math.min(map.rows - 1, y0 + 1), fy = sy - y0;
    for (let c = 0; c < cols; c++) {
      const sx = Math.min(map.cols - 1, Math.max(0, ((c + 0.5) * map.cols) / cols - 0.5));
      const x0 = Math.floor(sx), x1 = Math.min(map.cols - 1, x0 + 1), fx = sx - x0;
      const top = map.values[y0 * map.cols + x0]! * (1 - fx) + map.values[y0 * map.cols + x1]! * fx;
      const bottom = map.values[y1 * map.cols + x0]! * (1 - fx) + map.values[y1 * map.cols + x1]! * fx;
      values[r * cols + c] = top * (1 - fy) + bottom * fy;
    }
  }
  return { values, cols, rows };
}

/**
 * The map drawn at `width` x `height` pixels, bilinear between cell centres, as 8-bit grey
 * (0..1 → 0..255). Each map row is interpolated across the width once; an output row then
 * only blends two of them. A libvips resize of the map cost about three times more at 12 MP.
 */
export function mapToGrey(map: BlockMap, width: number, height: number): Uint8Array {
  const wide = new Float32Array(map.rows * width);
  for (let r = 0; r < map.rows; r++) {
    for (let x = 0; x < width; x++) {
      const sx = Math.min(map.cols - 1, Math.max(0, ((x + 0.5) * map.cols) / width - 0.5));
      const x0 = Math.floor(sx), x1 = Math.min(map.cols - 1, x0 + 1);
      const v = map.values[r * map.cols + x0]! + (map.values[r * map.cols + x1]! - map.values[r * map.cols + x0]!) * (sx - x0);
      wide[r * width + x] = Math.min(1, Math.max(0, v)) * 255 + 0.5; // + 0.5: the store truncates, so it rounds
    }
  }
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(map.rows - 1, Math.max(0, ((y + 0.5) * map.rows) / height - 0.5));
    const y0 = Math.floor(sy), fy = sy - y0;
    const top = y0 * width, bottom = Math.min(map.rows - 1, y0 + 1) * width, row = y * width;
    for (let x = 0; x < width; x++) out[row + x] = wide[top + x]! + (wide[bottom + x]! - wide[top + x]!) * fy;
  }
  return out;
}

/**
 * 3x3 box smoothing: isolated cells are noise, forged regions span several cells. Cells marked
 * `unknown` hold no measurement: each cell averages the others of its window (0 if none is left).
 */
export function smoothMap(map: BlockMap, radius = 1, unknown?: Uint8Array): BlockMap {
  const values = new Float32Array(map.values.length);
  for (let r = 0; r < map.rows; r++) {
    for (let c = 0; c < map.cols; c++) {
      let sum = 0, count = 0;
      for (let dr = -radius; dr <= radius; dr++) {
        const rr = r + dr;
        if (rr < 0 || rr >= map.rows) continue;
        for (let dc = -radius; dc <= radius; dc++) {
          const cc = c + dc;
          if (cc < 0 || cc >= map.cols || unknown?.[rr * map.cols + cc]) continue;
          sum += map.values[rr * map.cols + cc]!;
          count++;
        }
      }
      values[r * map.cols + c] = count ? sum / count : 0;
    }
  }
  return { values, cols: map.cols, rows: map.rows };
}

/**
 * Bounding boxes of 8-connected components of cells >= threshold, in the coordinates of an
 * image of `width` x `height` pixels, largest first; components under `minCells` are dropped.
 */
export function regionsOf(map: BlockMap, threshold: number, width: number, height: number, minCells = 4): Array<Box & { score: number; cells: number }> {
  const seen = new Uint8Array(map.values.length);
  const boxes: Array<Box & { score: number; cells: number }> = [];
  const cellW = width / map.cols, cellH = height / map.rows;
  for (let start = 0; start < map.values.length; start++) {
    if (seen[start] || map.values[start]! < threshold) continue;
    const stack = [start];
    seen[start] = 1;
    let minC = Infinity, maxC = -1, minR = Infinity, maxR = -1, cells = 0, sum = 0;
    while (stack.length) {
      const index = stack.pop()!;
      const r = Math.floor(index / map.cols), c = index % map.cols;
      cells++;
      sum += map.values[index]!;
      minC = Math.min(minC, c); maxC = Math.max(maxC, c); minR = Math.min(minR, r); maxR = Math.max(maxR, r);
      for (let dr = -1; dr <= 1; dr++) {
        for (let dc = -1; dc <= 1; dc++) {
          const rr = r + dr, cc = c + dc;
          if (rr < 0 || rr >= map.rows || cc < 0 || cc >= map.cols) continue;
          const next = rr * map.cols + cc;
          if (!seen[next] && map.values[next]! >= threshold) {
            seen[next] = 1;
            stack.push(next);
          }
        }
      }
    }
    if (cells < minCells) continue;
    const x = Math.floor(minC * cellW), y = Math.floor(minR * cellH);
    boxes.push({
      x,
      y,
      width: Math.min(width, Math.ceil((maxC + 1) * cellW)) - x,
      height: Math.min(height, Math.ceil((maxR + 1) * cellH)) - y,
      score: Math.round((sum / cells) * 1000) / 1000,
      cells,
    });
  }
  return boxes.sort((a, b) => b.cells - a.cells);
}

/** Mean of each `cell` x `cell` block of a per-pixel array. */
export function blockMeans(values: Float32Array, width: number, height: number, cell: number): BlockMap & { raw: Float32Array } {
  const cols = Math.ceil(width / cell), rows = Math.ceil(height / cell);
  const sums = new Float64Array(cols * rows), counts = new Uint32Array(cols * rows);
  for (let y = 0; y < height; y++) {
    const row = Math.floor(y / cell) * cols;
    for (let x = 0; x < width; x++) {
      const index = row + Math.floor(x / cell);
      sums[index]! += values[y * width + x]!;
      counts[index]!++;
    }
  }
  const raw = new Float32Array(cols * rows);
  for (let i = 0; i < raw.length; i++) raw[i] = sums[i]! / Math.max(1, counts[i]!);
  return { values: raw, raw, cols, rows };
}
