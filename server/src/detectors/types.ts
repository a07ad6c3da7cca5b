/**
 * The contract between the job lifecycle and the detectors.
 *
 * A detector module runs inside a worker thread (piscina). `load()` is called once per
 * thread before the first `analyze()`; models are loaded there and kept for the thread's
 * life. `analyze()` receives local file paths (the worker has already fetched the inputs
 * from the object store) and an AbortSignal that fires when the task type's timeout is
 * reached: pass it on to child processes (ffmpeg) and check it between expensive steps.
 */

export type Verdict = 'authentic' | 'manipulated' | 'inconclusive';

/** Flag the spec (task type 1) and DESIGN.md §3 name for each verdict-style task type. */
export type VerdictFlag = 'isAiGenerated' | 'isDeepFake' | 'isForged' | 'isSpoof';

export interface DetectorFile {
  slotName: string;
  contentType: string;
  /** The client's declared file name: informational only, never a path. */
  fileName: string;
  sizeBytes: number;
  /** Absolute path of a local copy of the uploaded bytes. */
  path: string;
}

export interface DetectorInput {
  jobId: string;
  taskTypeSlug: string;
  files: DetectorFile[];
  /** Task-specific options from the create body (`parameters`), already an object. */
  parameters: Record<string, unknown>;
  /** A private scratch directory for this job, removed after the job ends. */
  workDir: string;
  /** Where operator model packs live (DESIGN.md §4), or null when none is configured. */
  modelsDir: string | null;
  /** The operator's C2PA trust anchors (PEM file, `C2PA_TRUST_ANCHORS`); absent: no signer is trusted. */
  c2paTrustAnchors?: string | null;
}

/** One piece of evidence, explained (DESIGN.md §3). */
export interface Signal {
  id: string;
  label: string;
  /** Probability-like score of the positive class from this signal alone; null when absent. */
  score: number | null;
  /** Weight of this signal in the fused score (0 when it only informs). */
  weight: number;
  evidence: unknown;
}

/** A file the detector produced (heatmap, separated track, report…). */
export interface ArtifactOutput {
  /** Unique within the job; results refer to artifacts by this name. Letters, digits, . _ - only. */
  name: string;
  kind: 'heatmap' | 'track' | 'frame' | 'report';
  slotName?: string;
  contentType: string;
  data: Uint8Array;
}

export interface DetectorOutput {
  result: Record<string, unknown>;
  artifacts?: ArtifactOutput[];
}

export interface Detector {
  name: string;
  version: string;
  load(): Promise<void>;
  analyze(input: DetectorInput, signal: AbortSignal): Promise<DetectorOutput>;
}

/**
 * Thrown by a detector when the input itself is the problem (undecodable, truncated, no
 * audio stream, over a pixel limit). The job fails with this message and is not retried.
 */
export class MediaError extends Error {
  override name = 'MediaError';
}
