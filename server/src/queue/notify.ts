/**
 * LISTEN/NOTIFY on PostgreSQL, as hints between processes (DESIGN.md §1):
 * - `mediaproof_jobs`: the API sends it after a finalize commits; workers wake their loop. A
 *   lost notification costs at most one poll interval: polling stays the floor.
 * - `mediaproof_credentials`: sent with a key's id when it is revoked; API processes drop it
 *   from their verified-key cache at once instead of after the cache's lifetime.
 * Each process LISTENs on its own connection (a pooled one would be handed to other queries).
 * The listener reconnects with backoff after the server restarts and then calls every handler
 * with an empty payload, since notifications sent while it was away are gone.
 */
import pg from 'pg';
import type { Logger } from 'pino';

export const JOBS_CHANNEL = 'mediaproof_jobs';
export const CREDENTIALS_CHANNEL = 'mediaproof_credentials';

/** Best effort: a failed NOTIFY delays the job by one poll interval, it never loses it. */
export async function notifyJobQueued(pool: pg.Pool, logger: Logger): Promise<void> {
  try {
    await pool.query('select pg_notify($1, $2)', [JOBS_CHANNEL, '']);
  } catch (error) {
    logger.warn({ err: error }, 'NOTIFY failed; workers will find the job by polling');
  }
}

/** Tells every API process that a key was revoked; without it they notice within the cache's lifetime. */
export async function notifyCredentialRevoked(pool: pg.Pool, keyId: string): Promise<void> {
  await pool.query('select pg_notify($1, $2)', [CREDENTIALS_CHANNEL, keyId]);
}

export type ChannelHandlers = Record<string, (payload: string) => void>;

export class PgListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryMs = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  /** True while a LISTEN connection is established (exposed for tests and metrics). */
  listening = false;

  constructor(
    private readonly connectionString: string,
    private readonly handlers: ChannelHandlers,
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
    client.on('notification', (message) => this.handlers[message.channel]?.(message.payload ?? ''));
    try {
      await client.connect();
      // Channel names are our constants, never input: LISTEN takes no bound parameters.
      for (const channel of Object.keys(this.handlers)) await client.query(`LISTEN ${channel}`);
      if (this.stopped) return void client.end().catch(() => {});
      this.listening = true;
      this.retryMs = 0;
      this.logger.debug({ channels: Object.keys(this.handlers) }, 'listening');
      // Whatever was notified while we were not listening is acted on now.
      for (const handler of Object.values(this.handlers)) handler('');
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
