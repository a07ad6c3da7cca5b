/**
 * `node --import tsx bench/face-search.ts [--queries 50] [--sizes 1000,10000,20000,100000]`
 *
 * Face-index search over enrolled faces of 1,024 dimensions: the service's exact search
 * (`EmbeddingMatrix`, the baseline) and its HNSW index (`HnswIndex`, usearch, int8) in the same
 * run, on the same data. Prints per size: median and p95 latency of each, the HNSW build time,
 * how often HNSW returns the exact top 5, and memory: the exact matrix's bytes and the HNSW
 * index's (its saved size: int8 vectors and graph).
 *
 * The data imitates enrolled people: one random centre per person and five photos each
 * (centre plus noise, so photos of one person have cosine ≈ 0.7 and of two people ≈ 0); each
 * query is a new photo of an enrolled person, whose five photos are the exact top 5.
 */
import { rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddingMatrix, HnswIndex } from '../server/src/services/face-index.service.js';
import { numberOption, stringOption } from './measure.js';

const DIMENSIONS = 1024;
const PHOTOS_PER_PERSON = 5;
const QUERIES = numberOption('queries', 50);
const SIZES = stringOption('sizes', '1000,10000,20000,100000').split(',').map(Number);

let state = 0x2545f491;
/** Standard normal samples from a seeded xorshift (Box–Muller), so every run sees the same data. */
function gaussian(): number {
  const uniform = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return ((state >>> 0) + 1) / 2 ** 32;
  };
  return Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}
const unit = (v: Float32Array) => {
  const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
  return v.map((x) => x / norm);
};
const randomVector = () => unit(Float32Array.from({ length: DIMENSIONS }, gaussian));
// Noise of norm 0.65 around the centre: two photos of one person then have cosine ≈ 1 / (1 + 0.65²) ≈ 0.7.
const photoOf = (centre: Float32Array) => unit(centre.map((x) => x + (0.65 / Math.sqrt(DIMENSIONS)) * gaussian()));

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]!;
function timed<T>(work: () => T): [T, number] {
  const start = process.hrtime.bigint();
  const value = work();
  return [value, Number(process.hrtime.bigint() - start) / 1e6];
}
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

console.log(`face search, ${DIMENSIONS} dimensions, ${QUERIES} queries per size (2-core machine, shared: compare columns within a row)`);
console.log('| faces | exact median / p95 | HNSW int8 median / p95 | HNSW build | HNSW = exact top 5 | exact matrix | HNSW index |');
console.log('|---|---|---|---|---|---|---|');
for (const size of SIZES) {
  const centres = Array.from({ length: size / PHOTOS_PER_PERSON }, randomVector);
  const photos = centres.flatMap((centre) => Array.from({ length: PHOTOS_PER_PERSON }, () => photoOf(centre)));
  const faces = photos.map((_, i) => ({ id: `face-${i}`, subjectId: `person-${Math.floor(i / PHOTOS_PER_PERSON)}`, jobId: '', name: '' }));

  const exact = new EmbeddingMatrix(DIMENSIONS, photos);
  const hnsw = new HnswIndex('bench', DIMENSIONS);
  const buildStart = process.hrtime.bigint();
  await hnsw.add(faces.map((face, i) => ({ face, vector: photos[i]! })));
  const buildMs = Number(process.hrtime.bigint() - buildStart) / 1e6;
  // The saved index (int8 vectors and graph) is what it holds in memory; usearch's JS binding has no size call.
  const saved = join(tmpdir(), `face-bench-${process.pid}.usearch`);
  (hnsw as unknown as { index: { save(path: string): void } }).index.save(saved);
  const hnswBytes = statSync(saved).size;
  rmSync(saved);

  const exactTimes: number[] = [];
  const hnswTimes: number[] = [];
  let agree = 0;
  for (let q = 0; q < QUERIES; q++) {
    const person = (q * 7919) % centres.length;
    const query = photoOf(centres[person]!);
    const [exactTop, exactMs] = timed(() => exact.nearest(query, 5).map((r) => faces[r.row]!.id));
    const [hnswTop, hnswMs] = timed(() => hnsw.nearest(query, 5).map((r) => r.face.id));
    exactTimes.push(exactMs);
    hnswTimes.push(hnswMs);
    if ([...exactTop].sort().join() === [...hnswTop].sort().join()) agree++;
  }
  console.log(
    `| ${size.toLocaleString('en')} | ${percentile(exactTimes, 0.5).toFixed(1)} / ${percentile(exactTimes, 0.95).toFixed(1)} ms | ${percentile(hnswTimes, 0.5).toFixed(2)} / ${percentile(hnswTimes, 0.95).toFixed(2)} ms | ${(buildMs / 1000).toFixed(1)} s | ${agree}/${QUERIES} | ${mb(exact.vectors.byteLength)} | ${mb(hnswBytes)} |`,
  );
}
