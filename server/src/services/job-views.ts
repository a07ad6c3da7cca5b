/** Turns stored rows into the wire shapes of SPEC.md §2 plus the compatibility fields of DESIGN.md §2. */
import type { JobArtifactTable, JobInputTable } from '../db/schema.js';
import { taskTypeById } from '../detectors/catalogue.js';
import type { JobRow } from '../repositories/job.repository.js';

export function jobSummary(job: JobRow) {
  return {
    jobId: job.id,
    id: job.id,
    taskTypeId: job.task_type_id,
    status: job.status,
    createdAt: job.created_at,
    updatedAt: job.updated_at,
  };
}

export function inputView(input: JobInputTable) {
  return {
    contentType: input.content_type,
    fileName: input.file_name,
    sizeBytes: input.size_bytes,
    slotName: input.slot_name,
  };
}

export interface ArtifactView {
  id: string;
  kind: string;
  slotName?: string;
  contentType: string;
  sizeBytes: number;
  downloadUrl: string;
  createdAt: string;
}

export function jobDetail(job: JobRow, inputs: JobInputTable[], artifacts: ArtifactView[]) {
  return {
    ...jobSummary(job),
    taskTypeSlug: taskTypeById(job.task_type_id)?.slug ?? 'unknown',
    ...(job.queued_at ? { queuedAt: job.queued_at } : {}),
    ...(job.completed_at ? { completedAt: job.completed_at } : {}),
    cost: job.cost,
    inputs: inputs.map(inputView),
    ...(job.result ? { result: JSON.parse(job.result) as Record<string, unknown> } : {}),
    ...(job.error_message ? { errorMessage: job.error_message } : {}),
    artifacts,
  };
}

export function artifactRowView(row: JobArtifactTable, downloadUrl: string): ArtifactView {
  return {
    id: row.id,
    kind: row.kind,
    ...(row.slot_name ? { slotName: row.slot_name } : {}),
    contentType: row.content_type,
    sizeBytes: row.size_bytes,
    downloadUrl,
    createdAt: row.created_at,
  };
}
