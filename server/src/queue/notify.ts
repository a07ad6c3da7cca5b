/**
 * LISTEN/NOTIFY as a wake-up hint for workers on PostgreSQL (DESIGN.md §1). The API sends
 * `NOTIFY mediaproof_jobs` after a finalize commits; each worker process LISTENs on its own
 * connection (a pooled one would be handed to other queries) and wakes its loop. A lost
 * notification costs at most one poll interval: polling stays the floor. The listener
 * reconnects with backoff after the server restarts, and wakes the loop on reconnect, since
 * notifications sent while it was away are gone.
 */
import pg from 'pg';
import type { Logger } from 'pino';

export const JOBS_CHANNEL = 'mediaproof_jobs';

/** Best effort: a failed NOTIFY delays the job by one poll interval, it never loses it. */
export async function notifyJobQueued(pool: pg.Pool, logger: Logger): Promise<void> {
  try {
    await pool.query('select pg_notify($1, $2)', [JOBS_CHANNEL, '']);
  } catch (error) {
    logger.warn({ err: error }, 'NOTIFY failed; workers will find the job by polling');
  }
}

export class JobListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryMs = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  /** True while a LISTEN connection is established (exposed for tests and metrics). */
  listening = false;

  constructor(
    private readonly connectionString: string,
    private readonly onWake: () => void,
    private readonly logger: Logger,
  ) {}

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.connectionString, application_name: 'mediaproof-listener' });
    this.client = client;
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      this.listening = false;
      client.removeAllListeners('notification');
      void client.end().catch(() => {});
      if (this.stopped) return;
      this.retryMs = Math.min(5000, Math.max(100, this.retryMs * 2));
      this.logger.warn({ err: error, retryInMs: this.retryMs }, 'LISTEN connection lost; reconnecting (workers keep polling meanwhile)');
      this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
      this.retryTimer.unref();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', () => this.onWake());
    try {
      await client.connect();
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
      if (this.stopped) return void client.end().catch(() => {});
      this.listening = true;
      this.retryMs = 0;
      this.logger.debug('listening for queued jobs');
      // Anything queued while we were not listening is found now rather than at the next poll.
      this.onWake();
    } catch (error) {
      onLost(error as Error);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    if (client) {
      client.removeAllListeners('end');
      client.removeAllListeners('error');
      client.on('error', () => {});
      await client.end().catch(() => {});
    }
  }
}
