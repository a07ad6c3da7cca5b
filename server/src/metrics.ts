/** Prometheus metrics (prom-client), one registry per process, served at /metrics. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  jobsEnded: Counter<'task_type' | 'status'>;
  claimLatency: Histogram<string>;
  detectorDuration: Histogram<'task_type'>;
  creditsReserved: Counter<string>;
  creditsCaptured: Counter<string>;
  queueDepth: Gauge<string>;
}

export function createMetrics(queueDepth?: () => Promise<number>): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({ name: 'mediaproof_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers: [registry] }),
    jobsEnded: new Counter({ name: 'mediaproof_jobs_ended_total', help: 'Jobs that reached a terminal status in this process', labelNames: ['task_type', 'status'], registers: [registry] }),
    claimLatency: new Histogram({ name: 'mediaproof_queue_claim_seconds', help: 'Time to claim a job from the queue', buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers: [registry] }),
    detectorDuration: new Histogram({ name: 'mediaproof_detector_duration_seconds', help: 'Detector run time by task type', labelNames: ['task_type'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300], registers: [registry] }),
    creditsReserved: new Counter({ name: 'mediaproof_credits_reserved_total', help: 'Credits reserved at finalize', registers: [registry] }),
    creditsCaptured: new Counter({ name: 'mediaproof_credits_captured_total', help: 'Credits captured at completion', registers: [registry] }),
    queueDepth: new Gauge({
      name: 'mediaproof_queue_depth',
      help: 'Jobs queued and not yet claimed',
      registers: [registry],
      async collect() {
        if (queueDepth) this.set(await queueDepth());
      },
    }),
  };
}
