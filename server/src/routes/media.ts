/** The media-record API of SPEC.md §4.8 under /api/media, with its own error shape (§7.3). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { MediaClientPrincipal, MediaService } from '../services/media.service.js';
import { AppError, mediaApiErrorBody } from '../errors.js';
import type { MediaPermission } from '../services/credential.service.js';
import { MODEL_CODES } from '../detectors/catalogue.js';

declare module 'fastify' {
  interface FastifyRequest {
    mediaClient?: MediaClientPrincipal;
  }
}

const MediaError = Type.Object({ code: Type.String(), type: Type.String(), message: Type.String() }, { $id: 'MediaError' });
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, { $ref: 'MediaError#' }]));

const MediaSummary = Type.Object({
  mid: Type.String(),
  name: Type.String(),
  type: Type.Union([Type.Literal('Video'), Type.Literal('Image'), Type.Literal('Audio'), Type.Literal('Document')]),
  status: Type.Union([Type.Literal('INITED'), Type.Literal('UPLOADED'), Type.Literal('PROCESSED'), Type.Literal('FAILED')]),
  modelType: Type.String({ description: MODEL_CODES.join(', ') }),
  createdAt: Type.String(),
  srcURL: Type.Optional(Type.String()),
  faces: Type.Optional(Type.Number()),
  deepFakes: Type.Optional(Type.Number()),
  fake: Type.Optional(Type.Boolean()),
  confidence: Type.Optional(Type.Number()),
  errorMessage: Type.Optional(Type.String()),
});
const MediaDetail = Type.Composite([
  MediaSummary,
  Type.Object({
    resultURL: Type.Optional(Type.String()),
    heatmap: Type.Optional(Type.String()),
    heatmapURL: Type.Optional(Type.String()),
    participants: Type.Optional(Type.Array(Type.Object({ id: Type.Number(), fake: Type.Boolean(), confidence: Type.Optional(Type.Number()), heatmap: Type.Optional(Type.String()) }))),
  }),
]);
const MidParams = Type.Object({ mid: Type.String({ maxLength: 64 }) });

export const mediaRoutes: FastifyPluginAsyncTypebox<{ media: MediaService }> = async (app, { media }) => {
  app.addSchema(MediaError);

  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof AppError) {
      if (error.retryAfterSeconds) reply.header('retry-after', String(error.retryAfterSeconds));
      if (error.statusCode >= 500) request.log.error({ err: error, code: error.code }, 'request failed');
      return reply.code(error.statusCode).send(mediaApiErrorBody(error));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ code: 'VALIDATION_ERROR', type: 'CLIENT_ERROR', message: error.validation ? `Invalid request: ${error.message}` : error.message });
    }
    request.log.error({ err: error, code: 'INTERNAL_ERROR' }, 'unhandled error in media API');
    return reply.code(500).send({ code: 'INTERNAL_ERROR', type: 'SERVER_ERROR', message: 'Internal server error' });
  });

  // Every media call authenticates first (IAM001), before its body is even validated.
  app.addHook('onRequest', async (request) => {
    request.mediaClient = await media.authenticate(header(request, 'x-client-id'), header(request, 'x-client-secret'));
  });
  const allow = (permission: MediaPermission, kind: 'query' | 'mutation') => async (request: FastifyRequest) =>
    media.authorize(request.mediaClient!, permission, kind);

  app.post('/media', {
    preValidation: allow('media:write', 'mutation'),
    schema: {
      tags: ['media'],
      summary: 'Create a media record and get its upload URL',
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 255 }),
        contentType: Type.String({ minLength: 1, maxLength: 255 }),
        size: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
        modelType: Type.String({ minLength: 1, maxLength: 16, description: `a model code: ${MODEL_CODES.join(', ')}` }),
        metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 32, description: 'FI-1: {isSingleFace, faceswapCheck | faceSwapCheck, livenessCheck, faceSimilarityCheck}; absent flags are false' })),
        referenceName: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        referenceContentType: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'FI-1 with faceSimilarityCheck: the reference image' })),
        referenceSize: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'FI-1 with faceSimilarityCheck: bytes of the reference image (its upload URL is bound to it)' })),
      }),
      response: { 201: Type.Composite([MediaSummary, Type.Object({ uploadUrl: Type.String(), referenceUploadUrl: Type.Optional(Type.String()) })]), ...errors(400, 401, 402, 403, 413, 429) },
    },
  }, async (request, reply) => reply.code(201).send(await media.create(request.mediaClient!, request.body)));

  app.get('/media', {
    preValidation: allow('media:read', 'query'),
    schema: {
      tags: ['media'],
      summary: 'List media records',
      querystring: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
        offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
        page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
        pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
      }),
      response: {
        200: Type.Object({
          limit: Type.Integer(), offset: Type.Integer(), total: Type.Integer(), data: Type.Array(MediaSummary),
          items: Type.Array(MediaSummary), page: Type.Integer(), pageSize: Type.Integer(),
        }),
        ...errors(400, 401, 403, 429),
      },
    },
  }, async (request) => media.list(request.mediaClient!, request.query));

  app.get('/media/:mid', {
    preValidation: allow('media:read', 'query'),
    schema: { tags: ['media'], summary: 'Get a media record with its results', params: MidParams, response: { 200: MediaDetail, ...errors(401, 403, 404, 429) } },
  }, async (request) => media.get(request.mediaClient!, request.params.mid));

  app.delete('/media/:mid', {
    preValidation: allow('media:delete', 'mutation'),
    schema: {
      tags: ['media'],
      summary: 'Delete a media record and its files',
      params: MidParams,
      response: { 200: Type.Object({ mid: Type.String(), deleted: Type.Boolean() }), ...errors(401, 403, 404, 409, 429) },
    },
  }, async (request) => media.delete(request.mediaClient!, request.params.mid));
};

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
