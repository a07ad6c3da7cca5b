import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AppError } from '../errors.js';
import { FORMATS, TASK_TYPES } from '../detectors/catalogue.js';
import { MAX_ENROLL_IMAGES, MAX_SEARCH_LIMIT, type FaceIndexService } from '../services/face-index.service.js';
import { errorResponses } from '../schemas/job.schema.js';
import { EnrollBody, EnrollResponse, IdParams, SearchQuery, SearchResponse, SubjectsQuery, SubjectsResponse } from '../schemas/face-index.schema.js';
import { requirePermission, tenantOf, type Authenticators } from './auth.js';

export interface FaceIndexRoutesOptions {
  faces: FaceIndexService;
  auth: Authenticators;
}

const FACE_MIME_TYPES = TASK_TYPES.find((t) => t.slug === 'face-embedding')!.formats.flatMap((f) => FORMATS[f].mimeTypes);
/** Query photos: the face-embedding task type's limit would do, but a search needs no 30 MiB selfie. */
const MAX_QUERY_BYTES = 10 * 1024 * 1024;

/** Sniffs the query photo's format (the declared type of an upload is not trusted). */
function imageType(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  throw new AppError('UNSUPPORTED_MEDIA_TYPE', `The query image must be one of ${FACE_MIME_TYPES.join(', ')}`);
}

/** Face indexing (1:N search), under /api/v1/facesim/v1, with `faces:*` key permissions. */
export const faceIndexRoutes: FastifyPluginAsyncTypebox<FaceIndexRoutesOptions> = async (app, { faces, auth }) => {
  await app.register(multipart, { limits: { files: 1, fileSize: MAX_QUERY_BYTES, fields: 4, fieldSize: 100 } });
  const read = requirePermission(auth, 'faces:read');
  const write = requirePermission(auth, 'faces:write');
  const remove = requirePermission(auth, 'faces:delete');
  // SDKs send the tenant in the body; it must be the key's own (another tenant's is not found).
  const checkTenant = (request: FastifyRequest, tenantId: unknown) => {
    if (tenantId !== undefined && tenantId !== tenantOf(request)) throw new AppError('NOT_FOUND', `No tenant ${String(tenantId)} for this API key`);
  };

  app.post('/enroll', {
    onRequest: write,
    schema: { tags: ['faces'], summary: `Enrol a subject with 1–${MAX_ENROLL_IMAGES} photos (one upload URL per photo)`, body: EnrollBody, response: { 200: EnrollResponse, ...errorResponses(400, 401, 402, 403, 404, 413) } },
  }, async (request) => {
    checkTenant(request, request.body.tenant_id);
    return faces.enroll(tenantOf(request), request.body.images);
  });

  app.get('/subjects', {
    onRequest: read,
    schema: { tags: ['faces'], summary: 'Every enrolled subject and face, with status, embedding and image', querystring: SubjectsQuery, response: { 200: SubjectsResponse, ...errorResponses(401, 403, 404) } },
  }, async (request) => {
    checkTenant(request, request.query.tenant_id);
    return faces.subjects(tenantOf(request));
  });
  // The React Native SDK's name for the same listing.
  app.get('/tenant', { onRequest: read, schema: { hide: true, querystring: SubjectsQuery, response: { 200: SubjectsResponse } } }, async (request) => {
    checkTenant(request, request.query.tenant_id);
    return faces.subjects(tenantOf(request));
  });

  app.post('/search', {
    onRequest: read,
    // JSON carries the photo as base64 (a third larger than the photo).
    bodyLimit: Math.ceil((MAX_QUERY_BYTES * 4) / 3) + 4096,
    schema: {
      tags: ['faces'],
      summary: `Rank enrolled faces against a query photo (multipart "image" and "limit", or JSON image_bytes); at most ${MAX_SEARCH_LIMIT} results`,
      querystring: SearchQuery,
      response: { 200: SearchResponse, ...errorResponses(400, 401, 402, 403, 404, 413, 503) },
    },
  }, async (request) => {
    let bytes: Buffer;
    let limit = request.query.limit;
    if (request.isMultipart()) {
      let image: Buffer | null = null;
      for await (const part of request.parts()) {
        if (part.type === 'file' && part.fieldname === 'image') {
          image = await part.toBuffer();
          if (part.file.truncated) throw new AppError('FILE_TOO_LARGE', `The query image is over ${MAX_QUERY_BYTES} bytes`);
        } else if (part.type === 'file') {
          await part.toBuffer();
        } else if (part.fieldname === 'limit') {
          limit = Number(part.value);
        } else if (part.fieldname === 'tenant_id') {
          checkTenant(request, part.value);
        }
      }
      if (!image) throw new AppError('VALIDATION_ERROR', 'Send the query photo as the multipart file field "image"');
      bytes = image;
    } else {
      const body = request.body as { tenant_id?: string; image_bytes?: string; limit?: number } | undefined;
      if (!body || typeof body.image_bytes !== 'string') throw new AppError('VALIDATION_ERROR', 'Send the query photo as multipart field "image" or JSON {image_bytes}');
      checkTenant(request, body.tenant_id);
      bytes = Buffer.from(body.image_bytes.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
      limit = body.limit ?? limit;
      if (bytes.byteLength > MAX_QUERY_BYTES) throw new AppError('FILE_TOO_LARGE', `The query image is over ${MAX_QUERY_BYTES} bytes`);
    }
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw new AppError('VALIDATION_ERROR', 'limit must be a positive integer');
    if (bytes.byteLength === 0) throw new AppError('VALIDATION_ERROR', 'The query image is empty');
    return faces.search(tenantOf(request), { bytes, contentType: imageType(bytes) }, Math.min(limit ?? MAX_SEARCH_LIMIT, MAX_SEARCH_LIMIT));
  });

  app.delete('/subjects/:subjectId', {
    onRequest: remove,
    schema: { tags: ['faces'], summary: 'Forget a subject: its faces, embeddings and photos', params: IdParams('subjectId'), response: { 204: Type.Null(), ...errorResponses(401, 403, 404, 409) } },
  }, async (request, reply) => {
    await faces.deleteSubject(tenantOf(request), request.params.subjectId as string);
    return reply.code(204).send(null);
  });

  app.delete('/faces/:faceId', {
    onRequest: remove,
    schema: { tags: ['faces'], summary: 'Forget one face: its embedding and photo', params: IdParams('faceId'), response: { 204: Type.Null(), ...errorResponses(401, 403, 404, 409) } },
  }, async (request, reply) => {
    await faces.deleteFace(tenantOf(request), request.params.faceId as string);
    return reply.code(204).send(null);
  });
};
