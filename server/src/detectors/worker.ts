/**
 * Worker-thread entry (piscina). Each thread loads a detector once, on its first job of
 * that task type, and keeps it. Detector failures come back as values, not throws, so the
 * class of error (bad media, timeout, bug) survives the thread boundary.
 */
import { TASK_TYPES } from './catalogue.js';
import { MediaError, type Detector, type DetectorInput, type ArtifactOutput } from './types.js';

export interface DetectorTask {
  taskTypeId: number;
  input: DetectorInput;
  timeoutMs: number;
  /** Testing aid (DEBUG_DETECTOR_DELAY_MS): block the thread as a stuck detector would. */
  debugDelayMs: number;
}

export type DetectorTaskOutcome =
  | { ok: true; result: Record<string, unknown>; artifacts: ArtifactOutput[] }
  | { ok: false; kind: 'media' | 'timeout' | 'error' | 'unavailable'; message: string };

const loaded = new Map<number, Promise<Detector>>();

function detectorFor(taskTypeId: number): Promise<Detector> | null {
  const taskType = TASK_TYPES.find((t) => t.id === taskTypeId);
  if (!taskType?.detector) return null;
  let detector = loaded.get(taskTypeId);
  if (!detector) {
    detector = taskType.detector().then(async (module) => {
      await module.default.load();
      return module.default;
    });
    // A failed load is retried on the next job rather than cached forever.
    detector.catch(() => loaded.delete(taskTypeId));
    loaded.set(taskTypeId, detector);
  }
  return detector;
}

export default async function runDetector(task: DetectorTask): Promise<DetectorTaskOutcome> {
  if (task.debugDelayMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, task.debugDelayMs);
  const pending = detectorFor(task.taskTypeId);
  if (!pending) return { ok: false, kind: 'unavailable', message: 'no detector for this task type' };
  const signal = AbortSignal.timeout(task.timeoutMs);
  try {
    const detector = await pending;
    const output = await detector.analyze(task.input, signal);
    return { ok: true, result: output.result, artifacts: output.artifacts ?? [] };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (signal.aborted) return { ok: false, kind: 'timeout', message };
    return { ok: false, kind: error instanceof MediaError ? 'media' : 'error', message };
  }
}
