/**
 * The local object store's signed URLs, served by the API itself: PUT uploads and GET
 * downloads of inputs and artifacts. Neither needs an API key: the signature is the grant
 * (checked by the storage service).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { StorageService } from '../services/storage.service.js';
import { errorResponses } from '../schemas/job.schema.js';
import { DownloadQuery, UploadParams, UploadQuery, UploadReceipt } from '../schemas/storage.schema.js';

export const storageRoutes: FastifyPluginAsyncTypebox<{ storage: StorageService }> = async (app, { storage }) => {
  // The body is the raw file: hand the stream to the service instead of parsing it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  app.put('/uploads/:jobId/:slotName', {
    schema: {
      tags: ['storage'],
      summary: 'Upload a file to a pre-signed URL (local object store)',
      params: UploadParams,
      querystring: UploadQuery,
      response: { 200: UploadReceipt, ...errorResponses(400, 403, 413) },
    },
  }, async (request) =>
    storage.receive({
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
      querystring: DownloadQuery,
    },
  }, async (request, reply) => {
    const key = (request.params as { '*': string })['*'];
    const file = await storage.openDownload({ key, expires: request.query.expires, contentType: request.query.ct, sig: request.query.sig });
    return reply.header('content-type', file.contentType).header('content-length', file.size).send(file.stream);
  });
};
