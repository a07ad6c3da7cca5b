/** Request and response shapes of face indexing (/api/v1/facesim/v1). */
import { Type } from '@sinclair/typebox';

const FaceStatus = Type.Union(['pending', 'uploaded', 'processing', 'processed', 'failed'].map((status) => Type.Literal(status)));

export const EnrollBody = Type.Object(
  {
    tenant_id: Type.Optional(Type.String({ maxLength: 64, description: 'if sent, must be the API key’s tenant' })),
    images: Type.Array(
      Type.Object({
        name: Type.String({ minLength: 1, maxLength: 255 }),
        contentType: Type.String({ maxLength: 100 }),
        sizeBytes: Type.Integer({ minimum: 1, description: 'the upload URL is bound to this size' }),
      }),
      { maxItems: 100 },
    ),
  },
  { additionalProperties: false },
);

export const EnrollResponse = Type.Object({
  subject_id: Type.String(),
  status: FaceStatus,
  faces: Type.Array(Type.Object({ face_id: Type.String(), status: FaceStatus, upload_url: Type.String(), headers: Type.Record(Type.String(), Type.String()) })),
  expires_at: Type.String(),
});

export const SubjectsQuery = Type.Object({ tenant_id: Type.Optional(Type.String({ maxLength: 64 })) });

export const SubjectsResponse = Type.Object({
  tenant_id: Type.String(),
  subjects: Type.Array(
    Type.Object({
      subject_id: Type.String(),
      created_at: Type.String(),
      faces: Type.Array(
        Type.Object({
          face_id: Type.String(),
          name: Type.String(),
          status: FaceStatus,
          embedding: Type.Union([Type.Array(Type.Number()), Type.Null()]),
          image_url: Type.Union([Type.String(), Type.Null()]),
          error: Type.Union([Type.String(), Type.Null()]),
        }),
      ),
    }),
  ),
});

export const SearchQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1 })) });

export const SearchResponse = Type.Object({
  tenant_id: Type.String(),
  count: Type.Integer(),
  query_face: Type.Object({ box: Type.Array(Type.Number()), facesInImage: Type.Integer() }),
  searched: Type.Integer(),
  exact: Type.Boolean({ description: 'false when the HNSW index answered' }),
  results: Type.Array(
    Type.Object({
      rank: Type.Integer(),
      subject_id: Type.String(),
      face_id: Type.String(),
      name: Type.String(),
      image_url: Type.Union([Type.String(), Type.Null()]),
      similarity_score: Type.Number({ description: 'cosine similarity clamped to 0–1: the same person at 0.65 and above, someone else under 0.51, undecided between (face verification)' }),
    }),
  ),
});

export const IdParams = (name: string) => Type.Object({ [name]: Type.String({ pattern: '^[0-9a-f-]{36}$' }) });
