/**
 * The local object store's signed URLs, served by the API itself: PUT uploads and GET
 * downloads of inputs and artifacts. Neither needs an API key: the signature is the grant.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AppError } from '../errors.js';
import type { LocalObjectStore } from '../repositories/local-object-store.js';
import type { UploadService } from '../services/upload.service.js';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { errorResponses } from '../schemas/job.schema.js';

export const storageRoutes: FastifyPluginAsyncTypebox<{ uploads: UploadService; store: LocalObjectStore }> = async (app, { uploads, store }) => {
  // The body is the raw file: hand the stream to the service instead of parsing it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  app.put('/uploads/:jobId/:slotName', {
    schema: {
      tags: ['storage'],
      summary: 'Upload a file to a pre-signed URL (local object store)',
      params: Type.Object({ jobId: Type.String({ maxLength: 128 }), slotName: Type.String({ maxLength: 64 }) }),
      querystring: Type.Object({ expires: Type.Optional(Type.String({ maxLength: 20 })), sig: Type.Optional(Type.String({ maxLength: 128 })) }),
      response: { 200: Type.Object({ jobId: Type.String(), slotName: Type.String(), sizeBytes: Type.Number(), uploadedAt: Type.String() }), ...errorResponses(400, 403, 413) },
    },
  }, async (request) =>
    uploads.receive({
      jobId: request.params.jobId,
      slotName: request.params.slotName,
      expires: request.query.expires,
      sig: request.query.sig,
      contentType: request.headers['content-type'],
      contentLength: request.headers['content-length'],
      body: request.raw,
    }),
  );

  app.get('/downloads/*', {
    schema: {
      tags: ['storage'],
      summary: 'Download an input or artifact through a signed URL',
      querystring: Type.Object({ expires: Type.String({ maxLength: 20 }), ct: Type.String({ maxLength: 255 }), sig: Type.String({ maxLength: 128 }) }),
    },
  }, async (request, reply) => {
    const key = (request.params as { '*': string })['*'];
    const path = store.verifiedDownloadPath(key, Number(request.query.expires), request.query.ct, request.query.sig);
    if (!path) throw new AppError('UPLOAD_URL_INVALID', 'Download URL rejected: the signature does not match or has expired');
    const size = await stat(path).then((s) => s.size).catch(() => null);
    if (size === null) throw new AppError('ARTIFACT_NOT_FOUND', 'The file no longer exists');
    return reply.header('content-type', request.query.ct).header('content-length', size).send(createReadStream(path));
  });
};
