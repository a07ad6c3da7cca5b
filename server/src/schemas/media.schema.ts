/** Request and response shapes of the media-record API (SPEC.md §4.8), in its own error shape (§7.3). */
import { Type } from '@sinclair/typebox';
import { MODEL_CODES } from '../detectors/catalogue.js';

export const MediaError = Type.Object({ code: Type.String(), type: Type.String(), message: Type.String() }, { $id: 'MediaError' });
export const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, { $ref: 'MediaError#' }]));

export const MediaSummary = Type.Object({
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
export const MediaDetail = Type.Composite([
  MediaSummary,
  Type.Object({
    resultURL: Type.Optional(Type.String()),
    heatmap: Type.Optional(Type.String()),
    heatmapURL: Type.Optional(Type.String()),
    participants: Type.Optional(Type.Array(Type.Object({ id: Type.Number(), fake: Type.Boolean(), confidence: Type.Optional(Type.Number()), heatmap: Type.Optional(Type.String()) }))),
  }),
]);
export const MidParams = Type.Object({ mid: Type.String({ maxLength: 64 }) });

export const CreateMediaBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  contentType: Type.String({ minLength: 1, maxLength: 255 }),
  size: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  modelType: Type.String({ minLength: 1, maxLength: 16, description: `a model code: ${MODEL_CODES.join(', ')}` }),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 32, description: 'FI-1: {isSingleFace, faceswapCheck | faceSwapCheck, livenessCheck, faceSimilarityCheck}; absent flags are false' })),
  referenceName: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  referenceContentType: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'FI-1 with faceSimilarityCheck: the reference image' })),
  referenceSize: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'FI-1 with faceSimilarityCheck: bytes of the reference image (its upload URL is bound to it)' })),
});

export const CreatedMedia = Type.Composite([MediaSummary, Type.Object({ uploadUrl: Type.String(), referenceUploadUrl: Type.Optional(Type.String()) })]);

export const ListMediaQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
});

export const MediaList = Type.Object({
  limit: Type.Integer(), offset: Type.Integer(), total: Type.Integer(), data: Type.Array(MediaSummary),
  items: Type.Array(MediaSummary), page: Type.Integer(), pageSize: Type.Integer(),
});

export const DeletedMedia = Type.Object({ mid: Type.String(), deleted: Type.Boolean() });
