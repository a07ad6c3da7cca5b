/** The media-record API of SPEC.md §4.8 under /api/media, with its own error shape (§7.3). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyRequest } from 'fastify';
import type { MediaClientPrincipal, MediaService } from '../services/media.service.js';
import { AppError, mediaApiErrorBody } from '../errors.js';
import type { MediaPermission } from '../services/credential.service.js';
import { CreateMediaBody, CreatedMedia, DeletedMedia, ListMediaQuery, MediaDetail, MediaError, MediaList, MidParams, errors } from '../schemas/media.schema.js';

declare module 'fastify' {
  interface FastifyRequest {
    mediaClient?: MediaClientPrincipal;
  }
}

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
      body: CreateMediaBody,
      response: { 201: CreatedMedia, ...errors(400, 401, 402, 403, 413, 429) },
    },
  }, async (request, reply) => reply.code(201).send(await media.create(request.mediaClient!, request.body)));

  app.get('/media', {
    preValidation: allow('media:read', 'query'),
    schema: {
      tags: ['media'],
      summary: 'List media records',
      querystring: ListMediaQuery,
      response: { 200: MediaList, ...errors(400, 401, 403, 429) },
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
      response: { 200: DeletedMedia, ...errors(401, 403, 404, 409, 429) },
    },
  }, async (request) => media.delete(request.mediaClient!, request.params.mid));
};

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
