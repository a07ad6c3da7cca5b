/**
 * Request and response types of the job API (SPEC.md §2–§4, DESIGN.md §2–§3).
 * sdk/test/openapi-contract.test.ts reads these declarations with the TypeScript compiler
 * and checks them against the server's /openapi.json, so they cannot drift from the API.
 */

export type JobStatus = 'waiting_for_finalize' | 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';
export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];

export * from './generated.js';
import type {
  AiGeneratedResult, AudioSplitterResult, DeepFakeResult, FaceEmbeddingResult, FaceIntelligenceResult, ForgeryResult, ResultBySlug, SpoofResult, TASK_TYPE_IDS, TaskTypeSlug,
} from './generated.js';

/** Input slot, request form (SPEC.md §2.3). */
export interface InputDeclaration {
  contentType: string;
  fileName: string;
  sizeBytes: number;
  /** `original` everywhere; `reference` for a second face image (face-intelligence, ekyc-deepfake). */
  slotName: string;
}

export interface InputSlot {
  contentType: string;
  fileName: string;
  sizeBytes: number;
  slotName: string;
}

export interface CreatedInputSlot extends InputSlot {
  /** Pre-signed single-use URL: PUT the file's bytes here with the declared Content-Type. */
  uploadUrl: string;
  uploadUrlExpiresAt: string;
}

export interface JobCreateBody {
  inputs: InputDeclaration[];
  /** Task type id, or a numeric string. */
  taskTypeId?: number | string;
  /** Task-specific options, e.g. face-intelligence `{isSimilarityCheck: true}`. */
  parameters?: Record<string, unknown>;
}

export interface JobSummary {
  jobId: string;
  /** Equal to jobId (compatibility field). */
  id: string;
  taskTypeId: number;
  status: JobStatus;
  createdAt: string;
  updatedAt: string;
}

export interface CreatedJob extends JobSummary {
  inputs: CreatedInputSlot[];
  /** Compatibility object (DESIGN.md §2), with the job's price in credits. */
  job: {
    id: string;
    tenantId: string;
    taskTypeId: number;
    status: JobStatus;
    cost: number;
    createdAt: string;
    updatedAt: string;
  };
}

export type ArtifactKind = 'input' | 'result' | 'heatmap' | 'track' | 'frame' | 'report';

export interface Artifact {
  id: string;
  /** input | result | heatmap | track | frame | report */
  kind: string;
  slotName?: string;
  contentType: string;
  sizeBytes: number;
  /** Signed, expiring GET URL usable without an auth header. */
  downloadUrl: string;
  createdAt: string;
}

export interface Job<R = DetectionResult | PayloadResult> extends JobSummary {
  taskTypeSlug: string;
  queuedAt?: string;
  completedAt?: string;
  cost: number;
  inputs: InputSlot[];
  /** Present once completed: the DESIGN.md §3 envelope. */
  result?: R;
  errorMessage?: string;
  artifacts: Artifact[];
}

/** A job that ended `completed`: its result is present. */
export type CompletedJob<R = DetectionResult | PayloadResult> = Job<R> & { status: 'completed'; result: R };

export interface FinalizedJob {
  jobId: string;
  id: string;
  taskTypeId: number;
  status: 'queued' | 'processing';
  queuedAt: string;
  updatedAt: string;
  message: string;
}

export interface CancelledJob {
  jobId: string;
  id: string;
  taskTypeId: number;
  status: 'cancelled';
  updatedAt: string;
  message: string;
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
}

export interface JobListResponse {
  data: JobSummary[];
  pagination: Pagination;
  /** The same page as `data`, with `total`, `page` and `pageSize`, as Authenta's SDKs read it. */
  items: JobSummary[];
  total: number;
  page: number;
  pageSize: number;
}

export interface JobListParams {
  /** 1-based page number, default 1. */
  page?: number;
  /** Page size, default 10, at most 100. */
  limit?: number;
  status?: JobStatus;
  /** Only jobs of this task type (its id). */
  taskTypeId?: number;
}

export interface TaskType {
  id: number;
  slug: string;
  purpose: string;
  /** Format labels: JPEG, PNG, … */
  formats: string[];
  mimeTypes: string[];
  timeoutSeconds: number;
  maxFileBytes: number;
  price: { base: number; perMiB: number };
  slots: { name: string; required: boolean; formats: string[]; mimeTypes: string[]; description: string }[];
  /** Whether this deployment has a detector for it (otherwise creating its jobs is refused). */
  available: boolean;
  /** Its result document's schema, by name under /openapi.json's components.schemas. */
  resultSchema: string;
}

// ---- results (DESIGN.md §3) ----
// Verdict, Signal, AnalysisDetails, each task type's result and ResultBySlug are generated
// from the server's result schemas (generated.ts).

/** The results of the verdict-style task types (1–7, 11): the envelope and its flag. */
export type DetectionResult = AiGeneratedResult | DeepFakeResult | ForgeryResult | SpoofResult;

/**
 * Results of face-intelligence, face-embedding and audio-splitter (8–10): their own payload,
 * where the verdict envelope's fields are present only when the task reaches a verdict.
 */
export type PayloadResult = FaceIntelligenceResult | FaceEmbeddingResult | AudioSplitterResult;

/** A face box as the detectors report it: [x, y, width, height] in pixels. */
export type FaceBox = number[];

type ResultById = { [S in TaskTypeSlug as (typeof TASK_TYPE_IDS)[S]]: ResultBySlug[S] };

/** The result type of a task type named by slug or id. */
export type ResultFor<T> = T extends TaskTypeSlug ? ResultBySlug[T] : T extends keyof ResultById ? ResultById[T] : DetectionResult | PayloadResult;

// ---- media-record API (SPEC.md §2.7, §4.8) ----

export type MediaModelType = 'DF-1' | 'AC-1' | 'FD-1';
export type MediaStatus = 'INITED' | 'UPLOADED' | 'PROCESSED';

export interface MediaCreateParams {
  name: string;
  contentType: string;
  /** Bytes. */
  size: number;
  modelType: MediaModelType;
}

export interface MediaRecord {
  mid: string;
  name: string;
  type: 'Video' | 'Image';
  status: MediaStatus;
  modelType: MediaModelType;
  createdAt: string;
  srcURL?: string;
  faces?: number;
  deepFakes?: number;
  fake?: boolean;
  confidence?: number;
}

export interface CreatedMediaRecord extends MediaRecord {
  uploadUrl: string;
}

export interface MediaDetail extends MediaRecord {
  resultURL?: string;
  participants?: { id: number; fake: boolean; heatmap?: string }[];
}

export interface MediaListResponse {
  limit: number;
  offset: number;
  total: number;
  data: MediaRecord[];
}

// ---- face indexing (1:N search) ----

export type FaceStatus = 'pending' | 'uploaded' | 'processing' | 'processed' | 'failed';

export interface FaceEnrollment {
  subject_id: string;
  status: FaceStatus;
  faces: { face_id: string; status: FaceStatus; upload_url: string; headers: Record<string, string> }[];
  expires_at: string;
}

export interface EnrolledFace {
  face_id: string;
  name: string;
  status: FaceStatus;
  /** 1,024 numbers once processed. */
  embedding: number[] | null;
  image_url: string | null;
  /** Why the face failed (no face, several faces, no upload). */
  error: string | null;
}

export interface FaceSubject {
  subject_id: string;
  created_at: string;
  faces: EnrolledFace[];
}

export interface FaceSearchResponse {
  tenant_id: string;
  count: number;
  /** Cosine similarity clamped to 0–1: the same person from 0.65, someone else under 0.51, undecided between (face verification). */
  results: { rank: number; subject_id: string; face_id: string; name: string; image_url: string | null; similarity_score: number }[];
  query_face: { box: number[]; facesInImage: number };
  searched: number;
  /** False when the tenant's faces were searched through the HNSW index. */
  exact: boolean;
}
