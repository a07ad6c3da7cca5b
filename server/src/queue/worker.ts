/**
 * The worker loop: claims jobs while it has free capacity, runs each job's detector in a
 * piscina worker thread under the task type's timeout, renews the lease while it runs, and
 * ends the job (completed + credits captured, or failed + credits released). Transient
 * failures (object store, database) are retried with backoff up to MAX_ATTEMPTS.
 */
import { withoutPaths } from '../detectors/media/ffmpeg.js';
import { withSdkFields } from '../services/sdk-result-fields.js';
import { resultProblem } from '../schemas/result.schema.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { taskTypeById, type TaskType } from '../detectors/catalogue.js';
import type { DetectorTask, DetectorTaskOutcome } from '../detectors/worker.js';
import type { Repositories } from '../repositories/index.js';
import { objectKeys, type ObjectStore } from '../repositories/object-store.js';
import type { JobRow } from '../repositories/job.repository.js';
import { taskSettings } from '../services/task-settings.js';
import type { JobService } from '../services/job.service.js';
import { nowIso } from '../repositories/clock.js';
import type { JobQueue } from './job-queue.js';
import type { Metrics } from '../metrics.js';

export interface WorkerDeps {
  queue: JobQueue;
  /** The job lifecycle: a worker ends jobs through it (status, credits, webhooks, artifact rows). */
  jobs: Pick<JobService, 'complete' | 'fail'>;
  repos: Pick<Repositories, 'jobs'>;
  store: ObjectStore;
  config: Pick<Config, 'workerConcurrency' | 'leaseSeconds' | 'pollIntervalMs' | 'maxAttempts' | 'taskOverrides' | 'modelsDir' | 'c2paTrustAnchors' | 'debugDetectorDelayMs'>;
  logger: Logger;
  metrics: Metrics;
}

const ARTIFACT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Time a detector thread gets past its timeout to stop by itself before it is terminated. */
const TERMINATE_GRACE_MS = 2000;

class TransientError extends Error {}

export class QueueWorker {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly pool: Piscina<DetectorTask, DetectorTaskOutcome>;
  private readonly inFlight = new Map<string, Promise<void>>();
  private running = false;
  private wakeUp: (() => void) | null = null;
  private wakePending = false;
  private loopDone: Promise<void> | null = null;

  constructor(private readonly deps: WorkerDeps) {
    const filename = new URL('../detectors/worker-entry.mjs', import.meta.url).href;
    this.pool = new Piscina({
      filename,
      minThreads: 0,
      maxThreads: deps.config.workerConcurrency,
      // Threads keep their loaded models; an idle thread is released after ten minutes.
      idleTimeout: 10 * 60_000,
      concurrentTasksPerWorker: 1,
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Hint that work may be waiting (in-process finalize, or a NOTIFY). Polling stays the floor. */
  wake(): void {
    // A wake that arrives while the loop is busy (mid-claim) is kept for its next sleep, so a
    // job committed just after an empty claim does not wait a whole poll interval.
    if (this.wakeUp) this.wakeUp();
    else this.wakePending = true;
  }

  /**
   * Graceful stop: claim nothing more, let running jobs finish within `graceMs`, then put the
   * rest back in the queue for another worker.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    const finished = Promise.allSettled([...this.inFlight.values()]);
    const timedOut = await Promise.race([finished.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref())]);
    if (timedOut) {
      for (const jobId of this.inFlight.keys()) {
        await this.deps.queue.requeue(jobId, this.workerId, null, false).catch(() => {});
      }
    }
    await this.pool.destroy();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      if (this.inFlight.size >= this.deps.config.workerConcurrency) {
        await this.sleep(this.deps.config.pollIntervalMs);
        continue;
      }
      let job: JobRow | undefined;
      const claimStarted = performance.now();
      try {
        job = await this.deps.queue.claim(this.workerId, this.deps.config.leaseSeconds * 1000);
      } catch (error) {
        this.deps.logger.warn({ err: error }, 'claim failed; retrying');
        await this.sleep(this.deps.config.pollIntervalMs);
        continue;
      }
      if (!job) {
        await this.sleep(this.deps.config.pollIntervalMs);
        continue;
      }
      this.deps.metrics.claimLatency.observe((performance.now() - claimStarted) / 1000);
      const run = this.process(job).finally(() => {
        this.inFlight.delete(job.id);
        this.wake();
      });
      this.inFlight.set(job.id, run);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.wakePending) {
      this.wakePending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wakeUp === done) this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }

  private async process(job: JobRow): Promise<void> {
    const log = this.deps.logger.child({ jobId: job.id, taskTypeId: job.task_type_id, attempt: job.attempts });
    const taskType = taskTypeById(job.task_type_id);
    if (!taskType) return this.fail(job, `Unknown task type ${job.task_type_id}`, log);
    if (job.attempts > this.deps.config.maxAttempts) {
      return this.fail(job, `Processing was interrupted ${job.attempts - 1} times (worker lost); giving up`, log);
    }
    if (!taskType.detector) {
      return this.fail(job, `The ${taskType.slug} detector is not available in this version of mediaproof yet`, log);
    }
    const leaseMs = this.deps.config.leaseSeconds * 1000;
    const heartbeat = setInterval(() => {
      this.deps.queue.heartbeat(job.id, this.workerId, leaseMs).catch((error) => log.warn({ err: error }, 'heartbeat failed'));
    }, Math.max(250, leaseMs / 3));
    const workDir = await mkdtemp(join(tmpdir(), 'mediaproof-job-'));
    try {
      const outcome = await this.runDetector(job, taskType, workDir);
      if (outcome.ok) await this.complete(job, outcome, log);
      else await this.fail(job, outcome.message, log, outcome.kind);
    } catch (error) {
      if (job.attempts < this.deps.config.maxAttempts) {
        const delayMs = 1000 * 2 ** job.attempts * (0.5 + Math.random());
        log.warn({ err: error, code: 'TRANSIENT', retryInMs: Math.round(delayMs) }, 'job hit a transient error; retrying');
        await this.deps.queue.requeue(job.id, this.workerId, new Date(Date.now() + delayMs), true).catch(() => {});
      } else {
        await this.fail(job, `Processing failed after ${job.attempts} attempts: ${(error as Error).message}`, log).catch(() => {});
      }
    } finally {
      clearInterval(heartbeat);
      await rm(workDir, { recursive: true, force: true });
    }
  }

  private async runDetector(job: JobRow, taskType: TaskType, workDir: string): Promise<DetectorTaskOutcome> {
    const inputs = await this.deps.repos.jobs.inputs(job.id);
    const files = await Promise.all(
      inputs.map(async (input) => {
        try {
          const path = await this.deps.store.materialise(input.object_key, join(workDir, `input-${input.position}`));
          return { slotName: input.slot_name, contentType: input.content_type, fileName: input.file_name, sizeBytes: input.size_bytes, path };
        } catch (error) {
          throw new TransientError(`could not read input "${input.slot_name}" from the object store: ${(error as Error).message}`);
        }
      }),
    );
    const timeoutMs = taskSettings(this.deps.config, taskType).timeoutSeconds * 1000;
    const task: DetectorTask = {
      taskTypeId: taskType.id,
      timeoutMs,
      debugDelayMs: this.deps.config.debugDetectorDelayMs,
      input: {
        jobId: job.id,
        taskTypeSlug: taskType.slug,
        files,
        parameters: JSON.parse(job.parameters) as Record<string, unknown>,
        workDir,
        modelsDir: this.deps.config.modelsDir,
        c2paTrustAnchors: this.deps.config.c2paTrustAnchors,
      },
    };
    const timeoutMessage = `Processing exceeded the ${timeoutMs / 1000} s timeout of ${taskType.slug} and was aborted`;
    const started = performance.now();
    try {
      // The thread aborts its own work at timeoutMs; past the grace it is terminated outright.
      const outcome = await this.pool.run(task, { signal: AbortSignal.timeout(timeoutMs + TERMINATE_GRACE_MS) });
      return outcome.ok || outcome.kind !== 'timeout' ? outcome : { ...outcome, message: timeoutMessage };
    } catch (error) {
      if ((error as Error).name === 'AbortError') return { ok: false, kind: 'timeout', message: timeoutMessage };
      // The thread died (out of memory, native crash): the input is the likely cause.
      return { ok: false, kind: 'error', message: `The detector crashed on this input: ${(error as Error).message}` };
    } finally {
      this.deps.metrics.detectorDuration.observe({ task_type: taskType.slug }, (performance.now() - started) / 1000);
    }
  }

  private async complete(job: JobRow, detected: Extract<DetectorTaskOutcome, { ok: true }>, log: Logger): Promise<void> {
    const now = nowIso();
    // One result document for the job detail, the result artifact, webhooks and the media API's resultURL.
    const taskType = taskTypeById(job.task_type_id)!;
    const outcome = { ...detected, result: withSdkFields(taskType, detected.result) };
    // Clients and the SDK rely on the published result schema: a result outside it is a bug, not an answer.
    const problem = resultProblem(taskType.result, outcome.result);
    if (problem) {
      log.error({ code: 'RESULT_SCHEMA', problem }, 'detector result does not match its schema');
      return this.fail(job, `Internal error: the ${taskType.slug} result did not match its documented shape (${taskType.result} at ${problem})`, log, 'internal');
    }
    const artifacts = [
      ...outcome.artifacts.map((artifact) => {
        if (!ARTIFACT_NAME.test(artifact.name)) throw new Error(`detector produced an artifact with an unsafe name: ${artifact.name}`);
        return artifact;
      }),
      { name: 'result.json', kind: 'result' as const, contentType: 'application/json', data: Buffer.from(JSON.stringify(outcome.result, null, 2)) },
    ];
    try {
      for (const artifact of artifacts) {
        await this.deps.store.put(objectKeys.artifact(job.id, artifact.name), artifact.data, artifact.contentType);
      }
    } catch (error) {
      throw new TransientError(`could not store results: ${(error as Error).message}`);
    }
    const ended = await this.deps.jobs.complete(
      job,
      this.workerId,
      outcome.result,
      artifacts.map((artifact) => ({
        job_id: job.id,
        id: artifact.name,
        kind: artifact.kind,
        slot_name: 'slotName' in artifact && artifact.slotName ? artifact.slotName : null,
        content_type: artifact.contentType,
        size_bytes: artifact.data.byteLength,
        object_key: objectKeys.artifact(job.id, artifact.name),
        created_at: now,
      })),
    );
    if (ended) {
      this.deps.metrics.jobsEnded.inc({ task_type: taskType.slug, status: 'completed' });
      this.deps.metrics.creditsCaptured.inc(job.cost);
      log.info({ verdict: outcome.result.verdict }, 'job completed');
    } else {
      log.warn('job was taken from this worker before it finished; result discarded');
    }
  }

  private async fail(job: JobRow, detail: string, log: Logger, kind = 'error'): Promise<void> {
    // Whatever failed (ffmpeg, a decoder, the object store), the job's owner sees no server paths.
    const message = withoutPaths(detail);
    const ended = await this.deps.jobs.fail(job, this.workerId, message, kind);
    if (ended) {
      this.deps.metrics.jobsEnded.inc({ task_type: taskTypeById(job.task_type_id)?.slug ?? 'unknown', status: 'failed' });
      log.warn({ code: `JOB_FAILED_${kind.toUpperCase()}`, errorMessage: message }, 'job failed');
    }
  }
}
