/**
 * Face indexing (1:N search) under /api/v1/facesim/v1: enrol a person with 1–10 photos, follow
 * their processing, search by photo, and forget a person or one face. Needs a key with
 * `faces:read`, `faces:write` and `faces:delete` as the call requires.
 */
import type { Mediaproof, RequestOptions } from '../client.js';
import { sleep } from '../internal.js';
import { MediaproofError, WaitTimeoutError } from '../errors.js';
import { resolveFile, type Uploadable } from '../uploadable.js';
import type { EnrolledFace, FaceEnrollment, FaceSearchResponse, FaceSubject } from '../types.js';

const BASE = '/api/v1/facesim/v1';
const SETTLED = new Set(['processed', 'failed']);

/** Standard base64 of bytes, in Node and browsers (btoa takes a binary string). */
function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export class Faces {
  constructor(private readonly client: Mediaproof) {}

  /** Creates the subject and uploads each photo to its URL; the embeddings follow (see waitForEnrollment). */
  async enroll(photos: Uploadable[], options?: RequestOptions): Promise<FaceEnrollment> {
    const files = await Promise.all(photos.map((photo) => resolveFile(photo)));
    const enrollment = await this.client.request<FaceEnrollment>({
      ...options,
      method: 'POST',
      path: `${BASE}/enroll`,
      body: { images: files.map((file) => ({ name: file.fileName, contentType: file.contentType, sizeBytes: file.sizeBytes })) },
    });
    for (const [i, face] of enrollment.faces.entries()) {
      const file = files[i]!;
      await this.client.request<unknown>({
        ...options,
        method: 'PUT',
        path: face.upload_url,
        auth: 'none',
        headers: { ...face.headers, 'content-length': String(file.sizeBytes) },
        rawBody: () => file.open(),
      });
    }
    return enrollment;
  }

  /** Every enrolled subject of the tenant with its faces (status, embedding, image URL, error). */
  async subjects(options?: RequestOptions): Promise<FaceSubject[]> {
    return (await this.client.request<{ subjects: FaceSubject[] }>({ ...options, method: 'GET', path: `${BASE}/subjects` })).subjects;
  }

  /** Polls until every face of the subject is `processed` or `failed`. */
  async waitForEnrollment(subjectId: string, options: { intervalMs?: number; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<EnrolledFace[]> {
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    for (;;) {
      const subject = (await this.subjects({ signal: options.signal })).find((s) => s.subject_id === subjectId);
      if (!subject) throw new MediaproofError(`No subject ${subjectId}`, { code: 'NOT_FOUND', statusCode: 404 });
      if (subject.faces.every((face) => SETTLED.has(face.status))) return subject.faces;
      if (Date.now() > deadline) {
        const statuses = subject.faces.map((face) => face.status).join(', ');
        throw new WaitTimeoutError(`Subject ${subjectId} still has faces being processed (${statuses})`, subjectId, statuses);
      }
      await sleep(options.intervalMs ?? 1000, options.signal);
    }
  }

  /** Ranks the enrolled faces against a photo (the largest face in it), best first; at most 50. */
  async search(photo: Uploadable, params: { limit?: number } = {}, options?: RequestOptions): Promise<FaceSearchResponse> {
    const file = await resolveFile(photo);
    const bytes = new Uint8Array(await new Response(file.open()).arrayBuffer());
    return this.client.request<FaceSearchResponse>({ ...options, method: 'POST', path: `${BASE}/search`, query: { limit: params.limit }, body: { image_bytes: base64(bytes) } });
  }

  /** Forgets a person: their faces, embeddings and photos. */
  async deleteSubject(subjectId: string, options?: RequestOptions): Promise<void> {
    await this.client.request<void>({ ...options, method: 'DELETE', path: `${BASE}/subjects/${encodeURIComponent(subjectId)}` });
  }

  /** Forgets one face: its embedding and photo. */
  async deleteFace(faceId: string, options?: RequestOptions): Promise<void> {
    await this.client.request<void>({ ...options, method: 'DELETE', path: `${BASE}/faces/${encodeURIComponent(faceId)}` });
  }
}
