/**
 * Every move a job can make, and from which statuses (DESIGN.md §4). Each status change in the
 * code names its event here, and the repository fences the update with the event's `from`, so
 * two processes racing for one job can never both move it. Credits, webhooks and artifact rows
 * move in the same transaction as the status, in JobService.
 */
import type { JobStatus } from './schema.js';

export const JOB_TRANSITIONS = {
  /** All files arrived; credits are reserved. */
  finalize: { from: ['waiting_for_finalize'], to: 'queued' },
  /** Before processing starts; credits are released. */
  cancel: { from: ['waiting_for_finalize', 'queued'], to: 'cancelled' },
  /** A worker takes a queued job, or one whose worker's lease expired (queue/job-queue.ts). */
  claim: { from: ['queued', 'processing'], to: 'processing' },
  /** The worker holding the job stores its result; credits are captured. */
  complete: { from: ['processing'], to: 'completed' },
  /** The worker holding the job gives up on it; credits are released. */
  fail: { from: ['processing'], to: 'failed' },
  /** A transient failure or a shutdown: back in the queue, credits still reserved. */
  requeue: { from: ['processing'], to: 'queued' },
  /** Any job not being processed; with its files. */
  delete: { from: ['waiting_for_finalize', 'queued', 'completed', 'failed', 'cancelled'], to: null },
} as const satisfies Record<string, { from: readonly JobStatus[]; to: JobStatus | null }>;

export type JobEvent = keyof typeof JOB_TRANSITIONS;
