/**
 * TypeBox schemas of the job API: they validate requests, serialise responses and produce
 * the OpenAPI document at /openapi.json.
 */
import { Type, type Static } from '@sinclair/typebox';

export const ErrorBody = Type.Object(
  { code: Type.String(), statusCode: Type.Integer(), message: Type.String() },
  { $id: 'Error', description: 'Error body of the job API (SPEC.md §2.6)' },
);

export const JobStatus = Type.Union([
  Type.Literal('waiting_for_finalize'),
  Type.Literal('queued'),
  Type.Literal('processing'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);

const Timestamp = Type.String({ description: 'ISO 8601 UTC with milliseconds' });

export const InputDeclaration = Type.Object({
  contentType: Type.String({ minLength: 1, maxLength: 255 }),
  fileName: Type.String({ minLength: 1, maxLength: 255 }),
  sizeBytes: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  slotName: Type.String({ minLength: 1, maxLength: 64 }),
});

export const CreateJobBody = Type.Object({
  inputs: Type.Array(InputDeclaration, { minItems: 1, maxItems: 8 }),
  taskTypeId: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 16 })])),
  parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 64 })),
  webhookUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'POSTed (signed) when the job ends' })),
});
export type CreateJobBody = Static<typeof CreateJobBody>;

export const CreateJobQuery = Type.Object({
  taskTypeId: Type.Optional(Type.String({ maxLength: 16 })),
});

export const InputSlot = Type.Object({
  contentType: Type.String(),
  fileName: Type.String(),
  sizeBytes: Type.Number(),
  slotName: Type.String(),
});

export const JobSummary = Type.Object({
  jobId: Type.String(),
  id: Type.String(),
  taskTypeId: Type.Integer(),
  status: JobStatus,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const CreateJobResponse = Type.Composite([
  JobSummary,
  Type.Object({
    inputs: Type.Array(Type.Composite([InputSlot, Type.Object({ uploadUrl: Type.String(), uploadUrlExpiresAt: Timestamp })])),
    job: Type.Object({
      id: Type.String(),
      tenantId: Type.String(),
      taskTypeId: Type.Integer(),
      status: JobStatus,
      cost: Type.Number(),
      createdAt: Timestamp,
      updatedAt: Timestamp,
    }),
  }),
]);

export const Artifact = Type.Object({
  id: Type.String(),
  kind: Type.String({ description: 'input | result | heatmap | track | frame | report' }),
  slotName: Type.Optional(Type.String()),
  contentType: Type.String(),
  sizeBytes: Type.Number(),
  downloadUrl: Type.String({ description: 'signed, expiring GET URL usable without auth' }),
  createdAt: Timestamp,
});

export const JobDetail = Type.Composite([
  JobSummary,
  Type.Object({
    taskTypeSlug: Type.String(),
    queuedAt: Type.Optional(Timestamp),
    completedAt: Type.Optional(Timestamp),
    cost: Type.Number(),
    inputs: Type.Array(InputSlot),
    result: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "DESIGN.md §3: the task type's result document, shaped by the schema its task type names (GET /task-types: resultSchema; components.schemas)" })),
    errorMessage: Type.Optional(Type.String()),
    artifacts: Type.Array(Artifact),
  }),
]);

export const FinalizeResponse = Type.Object({
  jobId: Type.String(),
  id: Type.String(),
  taskTypeId: Type.Integer(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('processing')]),
  queuedAt: Timestamp,
  updatedAt: Timestamp,
  message: Type.String(),
});

export const CancelResponse = Type.Object({
  jobId: Type.String(),
  id: Type.String(),
  taskTypeId: Type.Integer(),
  status: Type.Literal('cancelled'),
  updatedAt: Timestamp,
  message: Type.String(),
});

export const ListJobsQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  status: Type.Optional(JobStatus),
  taskTypeId: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'only jobs of this task type' })),
});
export type ListJobsQuery = Static<typeof ListJobsQuery>;

export const ListJobsResponse = Type.Object({
  data: Type.Array(JobSummary),
  pagination: Type.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer(), pages: Type.Integer() }),
  items: Type.Array(JobSummary, { description: 'the same as data, as Authenta SDKs read it' }),
  total: Type.Integer(),
  page: Type.Integer(),
  pageSize: Type.Integer(),
});

export const JobIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });

export const TaskTypeView = Type.Object({
  id: Type.Integer(),
  slug: Type.String(),
  purpose: Type.String(),
  formats: Type.Array(Type.String()),
  mimeTypes: Type.Array(Type.String()),
  timeoutSeconds: Type.Integer(),
  maxFileBytes: Type.Number(),
  price: Type.Object({ base: Type.Number(), perMiB: Type.Number() }),
  slots: Type.Array(Type.Object({ name: Type.String(), required: Type.Boolean(), formats: Type.Array(Type.String()), mimeTypes: Type.Array(Type.String()), description: Type.String() })),
  available: Type.Boolean(),
  /** Its result document's schema, by name under the OpenAPI document's components.schemas. */
  resultSchema: Type.String(),
});

export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [status, { $ref: 'Error#' }])) as Record<number, { $ref: string }>;
