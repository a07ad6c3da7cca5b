/**
 * Face indexing (1:N search). A subject is enrolled with 1–10 photos; each photo is an ordinary
 * face-embedding job (charged like one, its credits reserved at enrolment as on the media API)
 * that starts when its upload lands. A face is settled from its job: one face found → its
 * embedding is stored and it becomes searchable; no face or several → `failed` with the reason.
 * Search embeds the query photo the same way (a job, deleted afterwards) and ranks the tenant's
 * faces by cosine similarity of L2-normalised embeddings (Schroff et al., FaceNet, 2015, §3):
 * exactly over an in-memory matrix up to FACE_SEARCH_EXACT_MAX faces, beyond it through an HNSW
 * graph (Malkov & Yashunin, 2018) of int8-quantised vectors (usearch). Each API process keeps
 * its tenant indexes in step with the database: a search first asks whether the set of
 * searchable faces changed, and an HNSW index then adds and removes only the difference.
 */
import usearch from 'usearch';
import { TASK_TYPES } from '../detectors/catalogue.js';
import { similarityFromCosine } from '../detectors/face/verification.js';
import { AppError } from '../errors.js';
import type { IndexedFaceTable } from '../db/schema.js';
import { isoAt, SYSTEM_SOURCES, type Sources } from '../repositories/clock.js';
import type { Repositories } from '../repositories/index.js';
import { objectKeys, type ObjectStore } from '../repositories/object-store.js';
import type { DownloadUrls } from './download-urls.js';
import type { JobService } from './job.service.js';

export const MIN_ENROLL_IMAGES = 1;
export const MAX_ENROLL_IMAGES = 10;
export const MAX_SEARCH_LIMIT = 50;
const EMBEDDING_BATCH = 500;
const HNSW_ADD_BATCH = 256;
const FACE_EMBEDDING = TASK_TYPES.find((t) => t.slug === 'face-embedding')!;
/** How long a search waits for its query embedding (a busy queue answers 503, nothing kept). */
const QUERY_TIMEOUT_MS = 120_000;

export type FaceStatus = 'pending' | 'uploaded' | 'processing' | 'processed' | 'failed';

export interface EnrollImage {
  name: string;
  contentType: string;
  sizeBytes: number;
}

export const encodeEmbedding = (values: readonly number[]): string => Buffer.from(new Float32Array(values).buffer).toString('base64');

export function decodeEmbedding(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** Unit-length copies of the embeddings, one row per face, in one Float32Array. */
export class EmbeddingMatrix {
  readonly vectors: Float32Array;

  constructor(
    readonly dimensions: number,
    rows: Float32Array[],
  ) {
    this.vectors = new Float32Array(rows.length * dimensions);
    rows.forEach((row, i) => this.vectors.set(normalised(row), i * dimensions));
  }

  get size(): number {
    return this.vectors.length / this.dimensions;
  }

  /** The `limit` rows most similar to `query` (cosine), best first. */
  nearest(query: Float32Array, limit: number): Array<{ row: number; cosine: number }> {
    const unit = normalised(query);
    const best: Array<{ row: number; cosine: number }> = [];
    const d = this.dimensions;
    for (let row = 0, offset = 0; row < this.size; row++, offset += d) {
      let dot = 0;
      for (let i = 0; i < d; i++) dot += this.vectors[offset + i]! * unit[i]!;
      if (best.length < limit || dot > best[best.length - 1]!.cosine) {
        best.push({ row, cosine: dot });
        best.sort((a, b) => b.cosine - a.cosine);
        if (best.length > limit) best.pop();
      }
    }
    return best;
  }
}

function normalised(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  return vector.map((value) => value / norm);
}

interface FaceRef {
  id: string;
  subjectId: string;
  jobId: string;
  name: string;
}

/** One tenant's search structure and the database version it reflects. */
interface TenantIndex {
  version: string;
  size: number;
  nearest(query: Float32Array, limit: number): Array<{ face: FaceRef; cosine: number }>;
}

class ExactIndex implements TenantIndex {
  private readonly matrix: EmbeddingMatrix;

  constructor(
    readonly version: string,
    private readonly faces: FaceRef[],
    vectors: Float32Array[],
  ) {
    this.matrix = new EmbeddingMatrix(vectors[0]!.length, vectors);
  }

  get size() {
    return this.matrix.size;
  }

  nearest(query: Float32Array, limit: number) {
    return this.matrix.nearest(query, limit).map(({ row, cosine }) => ({ face: this.faces[row]!, cosine }));
  }
}

/** HNSW over int8-quantised unit vectors; faces are added and removed as the database changes. */
export class HnswIndex implements TenantIndex {
  private readonly index: InstanceType<typeof usearch.Index>;
  private readonly keys = new Map<string, bigint>();
  private readonly faces = new Map<bigint, FaceRef>();
  private nextKey = 1n;

  constructor(
    public version: string,
    dimensions: number,
  ) {
    this.index = new usearch.Index({ dimensions, metric: usearch.MetricKind.Cos, quantization: usearch.ScalarKind.I8, connectivity: 16, expansion_add: 128, expansion_search: 96, multi: false });
  }

  get size() {
    return this.faces.size;
  }

  has(faceId: string): boolean {
    return this.keys.has(faceId);
  }

  /**
   * Adds faces in batches, giving the event loop a turn between them: building the graph of
   * 100,000 faces takes about a minute of native work, and the API must keep answering meanwhile.
   */
  async add(entries: Array<{ face: FaceRef; vector: Float32Array }>): Promise<void> {
    for (let start = 0; start < entries.length; start += HNSW_ADD_BATCH) {
      const batch = entries.slice(start, start + HNSW_ADD_BATCH);
      const dimensions = batch[0]!.vector.length;
      const keys = new BigUint64Array(batch.length);
      const vectors = new Float32Array(batch.length * dimensions);
      batch.forEach(({ face, vector }, i) => {
        const key = this.nextKey++;
        keys[i] = key;
        vectors.set(vector, i * dimensions);
        this.keys.set(face.id, key);
        this.faces.set(key, face);
      });
      this.index.add(keys, vectors);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  remove(faceIds: string[]): void {
    for (const id of faceIds) {
      const key = this.keys.get(id);
      if (key === undefined) continue;
      this.index.remove(key);
      this.keys.delete(id);
      this.faces.delete(key);
    }
  }

  ids(): string[] {
    return [...this.keys.keys()];
  }

  nearest(query: Float32Array, limit: number) {
    const found = this.index.search(query, Math.min(limit, this.size), 0);
    const matches: Array<{ face: FaceRef; cosine: number }> = [];
    found.keys.forEach((key, i) => {
      const face = this.faces.get(key);
      // usearch's cosine distance is 1 − cos.
      if (face) matches.push({ face, cosine: 1 - found.distances[i]! });
    });
    return matches;
  }
}

export class FaceIndexService {
  private readonly indexes = new Map<string, TenantIndex>();
  /** Index updates under way, one per tenant: concurrent searches wait for the same one. */
  private readonly updating = new Map<string, Promise<TenantIndex | null>>();

  constructor(
    private readonly deps: {
      repos: Pick<Repositories, 'faces' | 'jobs'>;
      jobs: JobService;
      store: ObjectStore;
      downloadUrls: DownloadUrls;
      /** Up to this many faces a tenant is searched exactly, beyond it through HNSW (FACE_SEARCH_EXACT_MAX; see bench/face-search.ts). */
      exactSearchMaxFaces: number;
      sources?: Sources;
    },
  ) {}

  private get sources(): Sources {
    return this.deps.sources ?? SYSTEM_SOURCES;
  }

  async enroll(tenantId: string, images: EnrollImage[]) {
    if (images.length < MIN_ENROLL_IMAGES || images.length > MAX_ENROLL_IMAGES) {
      throw new AppError('VALIDATION_ERROR', `Enrolment takes ${MIN_ENROLL_IMAGES}–${MAX_ENROLL_IMAGES} images of one person; ${images.length} were sent`);
    }
    const subjectId = this.sources.ids();
    const createdAt = isoAt(this.sources.clock.now());
    await this.deps.repos.faces.insertSubject({ id: subjectId, tenant_id: tenantId, created_at: createdAt });
    const faces = [];
    try {
      for (const image of images) {
        const job = await this.deps.jobs.create(
          tenantId,
          { taskTypeId: FACE_EMBEDDING.id, inputs: [{ slotName: 'original', fileName: image.name, contentType: image.contentType, sizeBytes: image.sizeBytes }] },
          { reserveCredits: true },
        );
        const input = job.inputs[0]!;
        const faceId = this.sources.ids();
        await this.deps.repos.faces.insertFace({
          id: faceId, subject_id: subjectId, tenant_id: tenantId, job_id: job.jobId, name: image.name, status: 'pending',
          embedding: null, error: null, upload_expires_at: input.uploadUrlExpiresAt, processed_at: null, created_at: createdAt,
        });
        faces.push({ face_id: faceId, status: 'pending' as const, upload_url: input.uploadUrl, headers: { 'Content-Type': image.contentType }, expiresAt: input.uploadUrlExpiresAt });
      }
    } catch (error) {
      // All or nothing: a refused image (format, size, credits) leaves no half-enrolled subject.
      await this.deleteSubject(tenantId, subjectId).catch(() => {});
      throw error;
    }
    return {
      subject_id: subjectId,
      status: 'pending' as const,
      faces: faces.map(({ expiresAt: _expiresAt, ...face }) => face),
      expires_at: faces[0]!.expiresAt,
    };
  }

  /** After a photo lands on its upload URL: its embedding job starts. */
  async onUploaded(jobId: string): Promise<void> {
    const face = await this.deps.repos.faces.findFaceByJob(jobId);
    if (!face) return;
    await this.deps.jobs.finalize(face.tenant_id, jobId).catch(async (error: unknown) => {
      // Finalized meanwhile by another request (the upload route and a listing can race): fine.
      if (error instanceof AppError && error.code === 'JOB_ALREADY_FINALIZED') return;
      await this.fail(face, error instanceof Error ? error.message : String(error));
    });
  }

  /** Every subject of the tenant with its faces, their status, embedding and image. */
  async subjects(tenantId: string) {
    const subjects = await this.deps.repos.faces.subjects(tenantId);
    const faces = await this.deps.repos.faces.faces(tenantId);
    const views = await Promise.all(faces.map((face) => this.faceView(face)));
    return {
      tenant_id: tenantId,
      subjects: subjects.map((subject) => ({
        subject_id: subject.id,
        created_at: subject.created_at,
        faces: views.filter((view) => view.subject_id === subject.id).map(({ subject_id: _subject, ...view }) => view),
      })),
    };
  }

  async search(tenantId: string, image: { bytes: Buffer; contentType: string }, limit: number) {
    const query = await this.embedQuery(tenantId, image);
    await this.settlePending(tenantId);
    const index = await this.index(tenantId);
    const expiresAt = this.deps.downloadUrls.expiresAt();
    const results = await Promise.all(
      (index ? index.nearest(query.embedding, Math.min(limit, MAX_SEARCH_LIMIT)) : []).map(async ({ face, cosine }, rank) => {
        return {
          rank: rank + 1,
          subject_id: face.subjectId,
          face_id: face.id,
          name: face.name,
          image_url: await this.imageUrl(face.jobId, expiresAt),
          similarity_score: Math.round(similarityFromCosine(cosine) * 10_000) / 10_000,
        };
      }),
    );
    return { tenant_id: tenantId, count: results.length, query_face: query.face, searched: index?.size ?? 0, exact: !(index instanceof HnswIndex), results };
  }

  async deleteFace(tenantId: string, faceId: string): Promise<void> {
    const face = await this.deps.repos.faces.findFace(tenantId, faceId);
    if (!face) throw new AppError('NOT_FOUND', `No face ${faceId}`);
    await this.deleteJob(tenantId, face.job_id);
    await this.deps.repos.faces.deleteFace(faceId);
  }

  /** Forgets a person: every face's embedding, photo and job go with the subject. */
  async deleteSubject(tenantId: string, subjectId: string): Promise<void> {
    if (!(await this.deps.repos.faces.findSubject(tenantId, subjectId))) throw new AppError('NOT_FOUND', `No subject ${subjectId}`);
    for (const face of await this.deps.repos.faces.faces(tenantId, subjectId)) await this.deleteJob(tenantId, face.job_id);
    await this.deps.repos.faces.deleteSubject(subjectId);
  }

  /** Starts faces whose photo reached the bucket (S3 uploads bypass the API) and settles the rest. */
  async sweep(): Promise<void> {
    for (const face of await this.deps.repos.faces.pending(null)) await this.statusOf(face);
  }

  private async deleteJob(tenantId: string, jobId: string): Promise<void> {
    // A job still processing cannot be deleted: cancel what can be, wait for the rest.
    await this.deps.jobs.delete(tenantId, jobId).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'JOB_NOT_FOUND') return;
      if (error instanceof AppError && error.code === 'JOB_PROCESSING') throw new AppError('JOB_PROCESSING', 'A face of this subject is being processed; delete it again in a few seconds');
      throw error;
    });
  }

  private async fail(face: IndexedFaceTable, reason: string): Promise<void> {
    await this.deps.repos.faces.settle(face.id, { status: 'failed', embedding: null, error: reason, processed_at: isoAt(this.sources.clock.now()) });
  }

  private async settlePending(tenantId: string): Promise<void> {
    for (const face of await this.deps.repos.faces.pending(tenantId)) await this.statusOf(face);
  }

  /** A face's status, settling it from its job when the job has ended. */
  private async statusOf(face: IndexedFaceTable): Promise<{ status: FaceStatus; error: string | null; embedding: string | null }> {
    if (face.status !== 'pending') return { status: face.status, error: face.error, embedding: face.embedding };
    const job = await this.deps.repos.jobs.findById(face.job_id);
    const settleAs = async (status: 'processed' | 'failed', error: string | null, embedding: string | null = null) => {
      await this.deps.repos.faces.settle(face.id, { status, error, embedding, processed_at: isoAt(this.sources.clock.now()) });
      return { status, error, embedding };
    };
    if (!job) return settleAs('failed', 'the embedding job was deleted');
    if (job.status === 'waiting_for_finalize') {
      // With S3 the upload never passes through the API: look in the bucket. (Through the API,
      // the upload route starts the job itself, and a half-written file must not be taken.)
      const uploaded = this.deps.store.uploadsBypassApi && (await this.deps.store.size(objectKeys.input(job.id, 0)).catch(() => null)) !== null;
      if (uploaded) {
        await this.onUploaded(job.id);
        return { status: 'uploaded', error: null, embedding: null };
      }
      if (face.upload_expires_at < isoAt(this.sources.clock.now())) {
        await this.deps.jobs.cancel(face.tenant_id, job.id).catch(() => {});
        return settleAs('failed', 'No image was uploaded before the upload URL expired');
      }
      return { status: 'pending', error: null, embedding: null };
    }
    if (job.status === 'queued') return { status: 'uploaded', error: null, embedding: null };
    if (job.status === 'processing') return { status: 'processing', error: null, embedding: null };
    if (job.status !== 'completed') return settleAs('failed', job.error_message ?? `the embedding job was ${job.status}`);
    const faces = (JSON.parse(job.result ?? '{}') as { faces?: Array<{ embedding?: number[] }> }).faces ?? [];
    if (faces.length === 0) return settleAs('failed', 'no face was found in the image');
    if (faces.length > 1) return settleAs('failed', `${faces.length} faces were found; enrol photos that show only the person being enrolled`);
    return settleAs('processed', null, encodeEmbedding(faces[0]!.embedding!));
  }

  private async faceView(face: IndexedFaceTable) {
    const { status, error, embedding } = await this.statusOf(face);
    return {
      subject_id: face.subject_id,
      face_id: face.id,
      name: face.name,
      status,
      embedding: embedding ? [...decodeEmbedding(embedding)].map((value) => Math.round(value * 1e6) / 1e6) : null,
      image_url: status === 'pending' ? null : await this.imageUrl(face.job_id, this.deps.downloadUrls.expiresAt()),
      error,
    };
  }

  private async imageUrl(jobId: string, expiresAt: Date): Promise<string | null> {
    const input = await this.deps.repos.jobs.input(jobId, 'original');
    return input?.uploaded_size != null ? this.deps.downloadUrls.url(input.object_key, input.content_type, expiresAt) : null;
  }

  /**
   * The tenant's search index as the database has it now: unchanged when the set of searchable
   * faces is; otherwise the exact matrix is rebuilt, and an HNSW index takes only the difference.
   */
  private async index(tenantId: string): Promise<TenantIndex | null> {
    const running = this.updating.get(tenantId);
    if (running) return running;
    const update = this.updateIndex(tenantId).finally(() => this.updating.delete(tenantId));
    this.updating.set(tenantId, update);
    return update;
  }

  private async updateIndex(tenantId: string): Promise<TenantIndex | null> {
    const version = await this.deps.repos.faces.searchableVersion(tenantId);
    const cached = this.indexes.get(tenantId);
    if (cached?.version === version) return cached;
    const faces = (await this.deps.repos.faces.searchable(tenantId)).map((row) => ({ id: row.id, subjectId: row.subject_id, jobId: row.job_id, name: row.name }));
    if (faces.length === 0) {
      this.indexes.delete(tenantId);
      return null;
    }
    let index: TenantIndex;
    if (faces.length <= this.deps.exactSearchMaxFaces) {
      const vectors = await this.vectors(tenantId, faces);
      // A face deleted between the two reads has no vector: it is left out.
      const present = faces.filter((face) => vectors.has(face.id));
      if (present.length === 0) return null;
      index = new ExactIndex(version, present, present.map((face) => vectors.get(face.id)!));
    } else {
      const hnsw = cached instanceof HnswIndex ? cached : null;
      const current = new Set(faces.map((face) => face.id));
      const added = faces.filter((face) => !hnsw?.has(face.id));
      const vectors = await this.vectors(tenantId, added);
      const graph = hnsw ?? new HnswIndex(version, vectors.values().next().value?.length ?? 1024);
      graph.remove(graph.ids().filter((id) => !current.has(id)));
      await graph.add(added.filter((face) => vectors.has(face.id)).map((face) => ({ face, vector: vectors.get(face.id)! })));
      graph.version = version;
      index = graph;
    }
    this.indexes.set(tenantId, index);
    return index;
  }

  private async vectors(tenantId: string, faces: FaceRef[]): Promise<Map<string, Float32Array>> {
    const vectors = new Map<string, Float32Array>();
    for (let start = 0; start < faces.length; start += EMBEDDING_BATCH) {
      const rows = await this.deps.repos.faces.embeddings(tenantId, faces.slice(start, start + EMBEDDING_BATCH).map((face) => face.id));
      for (const row of rows) vectors.set(row.id, decodeEmbedding(row.embedding!));
    }
    return vectors;
  }

  /**
   * The query photo's embedding, from a face-embedding job like any other (charged as one),
   * deleted once read: the query photo is not kept. With several faces the largest is used.
   */
  private async embedQuery(tenantId: string, image: { bytes: Buffer; contentType: string }) {
    const job = await this.deps.jobs.create(tenantId, {
      taskTypeId: FACE_EMBEDDING.id,
      inputs: [{ slotName: 'original', fileName: 'query', contentType: image.contentType, sizeBytes: image.bytes.byteLength }],
    });
    try {
      await this.deps.store.put(objectKeys.input(job.jobId, 0), image.bytes, image.contentType);
      await this.deps.repos.jobs.completeUpload(job.jobId, 'original', image.bytes.byteLength);
      await this.deps.jobs.finalize(tenantId, job.jobId);
      // Real time, not the injected clock: this bounds an actual wait for the worker.
      const deadline = Date.now() + QUERY_TIMEOUT_MS;
      for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
        const row = await this.deps.repos.jobs.findById(job.jobId);
        if (row?.status === 'failed' || row?.status === 'cancelled') throw new AppError('VALIDATION_ERROR', `The query image could not be analysed: ${row.error_message ?? row.status}`);
        if (row?.status === 'completed') {
          const faces = (JSON.parse(row.result ?? '{}') as { faces?: Array<{ embedding: number[]; box: number[] }> }).faces ?? [];
          if (faces.length === 0) throw new AppError('VALIDATION_ERROR', 'No face was found in the query image');
          const largest = faces.reduce((a, b) => ((a.box[2] ?? 0) * (a.box[3] ?? 0) >= (b.box[2] ?? 0) * (b.box[3] ?? 0) ? a : b));
          return { embedding: new Float32Array(largest.embedding), face: { box: largest.box, facesInImage: faces.length } };
        }
        if (Date.now() > deadline) throw new AppError('SERVICE_UNAVAILABLE', 'The query embedding did not finish in time; the workers are busy, retry shortly');
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    } finally {
      await this.deps.jobs.delete(tenantId, job.jobId).catch(() => {});
    }
  }
}
