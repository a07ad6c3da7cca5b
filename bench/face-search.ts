/**
 * `node --import tsx bench/face-search.ts [--queries 20]`
 *
 * Face-index search over 1k, 10k and 100k enrolled faces of 1,024 dimensions: the service's
 * exact search (`EmbeddingMatrix`, unit rows in one Float32Array, a bounded top-k) against a
 * baseline in the same run, the plain way of writing it (embeddings as number[] arrays as they
 * come out of JSON, cosine of each, sort all). Prints median and p95 latency per query, the
 * index's memory (bytes of vectors; and the heap the baseline's arrays take) and whether both
 * return the same top 10. Embeddings are random unit vectors, with each query a noisy copy of
 * one enrolled face (the search cost does not depend on what the vectors are).
 */
import { EmbeddingMatrix } from '../server/src/services/face-index.service.js';

const DIMENSIONS = 1024;
const args = process.argv.slice(2);
const QUERIES = Number(args[args.indexOf('--queries') + 1]) || 20;

function randomUnit(seed: { value: number }): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  let norm = 0;
  for (let i = 0; i < DIMENSIONS; i++) {
    // xorshift: reproducible across runs.
    seed.value ^= seed.value << 13;
    seed.value ^= seed.value >>> 17;
    seed.value ^= seed.value << 5;
    vector[i] = ((seed.value >>> 0) / 2 ** 32) * 2 - 1;
    norm += vector[i]! * vector[i]!;
  }
  return vector.map((v) => v / Math.sqrt(norm));
}

function baselineSearch(rows: number[][], query: number[], limit: number): number[] {
  const scored = rows.map((row, index) => {
    let dot = 0;
    let a = 0;
    let b = 0;
    for (let i = 0; i < row.length; i++) {
      dot += row[i]! * query[i]!;
      a += row[i]! * row[i]!;
      b += query[i]! * query[i]!;
    }
    return { index, cosine: dot / Math.sqrt(a * b) };
  });
  return scored.sort((x, y) => y.cosine - x.cosine).slice(0, limit).map((s) => s.index);
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]!;
const time = (work: () => void) => {
  const start = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - start) / 1e6;
};

console.log(`face search, ${DIMENSIONS} dimensions, ${QUERIES} queries per size, top 10`);
console.log('| faces | exact (service) median / p95 | baseline median / p95 | vectors | baseline heap | same top 10 |');
console.log('|---|---|---|---|---|---|');
for (const size of [1_000, 10_000, 100_000]) {
  const seed = { value: 0x9e3779b9 ^ size };
  const rows = Array.from({ length: size }, () => randomUnit(seed));
  const heapBefore = process.memoryUsage().heapUsed;
  const baselineRows = rows.map((row) => [...row]);
  const baselineHeap = process.memoryUsage().heapUsed - heapBefore;
  const matrix = new EmbeddingMatrix(DIMENSIONS, rows);
  const queries = Array.from({ length: QUERIES }, (_, i) => {
    const noisy = rows[(i * 7919) % size]!.map((v) => v + (randomUnit(seed)[0]! * 0.01));
    return noisy;
  });
  const exact: number[] = [];
  const baseline: number[] = [];
  let agree = 0;
  for (const query of queries) {
    let ours: number[] = [];
    let theirs: number[] = [];
    exact.push(time(() => (ours = matrix.nearest(query, 10).map((r) => r.row))));
    baseline.push(time(() => (theirs = baselineSearch(baselineRows, [...query], 10))));
    if (ours.join() === theirs.join()) agree++;
  }
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  console.log(
    `| ${size.toLocaleString('en')} | ${percentile(exact, 0.5).toFixed(1)} / ${percentile(exact, 0.95).toFixed(1)} ms | ${percentile(baseline, 0.5).toFixed(1)} / ${percentile(baseline, 0.95).toFixed(1)} ms | ${mb(matrix.vectors.byteLength)} | ${mb(baselineHeap)} | ${agree}/${QUERIES} |`,
  );
}
