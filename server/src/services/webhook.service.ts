/**
 * Webhooks (beyond SPEC.md, which only polls): a signed POST on every terminal status of a
 * job, to the job's `webhookUrl` or else the tenant's. The delivery row is written in the
 * same transaction as the status change, so no event is lost; a dispatcher sends due rows,
 * retrying with growing delays for 24 hours. Loopback, private and link-local addresses are
 * refused (checked on the resolved address at connect time, so DNS tricks do not get
 * around it) unless the operator sets WEBHOOK_ALLOW_PRIVATE.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import type { Dialect } from '../db/database.js';
import type { JobStatus } from '../db/schema.js';
import { AppError } from '../errors.js';
import { isoAt, SYSTEM_SOURCES, systemClock, type Clock, type Sources } from '../repositories/clock.js';
import type { Repositories } from '../repositories/index.js';
import type { JobRow } from '../repositories/job.repository.js';
import type { WebhookRepository } from '../repositories/webhook.repository.js';
import { randomBase62 } from './credential.service.js';
import { signWebhook, SIGNATURE_HEADER } from './webhook-signature.js';
import { taskTypeById } from '../detectors/catalogue.js';

const REFUSED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) REFUSED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) REFUSED.addSubnet(network, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (dotted IPv4 tails included), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const left = parse(head), right = parse(tail);
  const groups = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/**
 * IPv6 forms that carry an IPv4 address in their last 32 bits and reach it: IPv4-mapped
 * (::ffff:0:0/96), SIIT IPv4-translated (::ffff:0:0:0/96, RFC 7915), NAT64 well-known and
 * local-use prefixes (64:ff9b::/96, RFC 6052; 64:ff9b:1::/48, RFC 8215). They are judged by that
 * IPv4 address, so a private one cannot hide behind the IPv6 spelling.
 */
function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (!g) return null;
  const zero = (from: number, to: number) => g.slice(from, to).every((v) => v === 0);
  const mapped = zero(0, 5) && g[5] === 0xffff;
  const translated = zero(0, 4) && g[4] === 0xffff && g[5] === 0;
  const nat64 = (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) || (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1);
  if (!mapped && !translated && !nat64) return null;
  return [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join('.');
}

export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (!family) return true;
  const ipv4 = family === 6 ? embeddedIpv4(address) : address;
  return ipv4 ? REFUSED.check(ipv4, 'ipv4') : REFUSED.check(address, 'ipv6');
}

/** Checks a webhook URL when it is given (create body, tenant setting). */
export function validateWebhookUrl(raw: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('VALIDATION_ERROR', 'webhookUrl must be an absolute http(s) URL');
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password || raw.length > 2048) {
    throw new AppError('VALIDATION_ERROR', 'webhookUrl must be an http(s) URL without credentials, at most 2048 characters');
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (host === 'localhost' || (isIP(host) && isRefusedAddress(host)))) {
    throw new AppError('VALIDATION_ERROR', `webhookUrl points at a loopback or private address (${host}), which this server refuses`);
  }
  return url.toString();
}

const EVENTS: Partial<Record<JobStatus, string>> = { completed: 'job.completed', failed: 'job.failed', cancelled: 'job.cancelled' };

/** Records the webhook for a job that just reached a terminal status (call inside its transaction). */
export async function enqueueWebhook(repos: Pick<Repositories, 'tenants' | 'webhooks'>, job: JobRow, status: JobStatus, details: { result?: unknown; errorMessage?: string | null }, sources: Sources = SYSTEM_SOURCES): Promise<void> {
  const event = EVENTS[status];
  if (!event) return;
  const tenant = await repos.tenants.find(job.tenant_id);
  const url = job.webhook_url ?? tenant?.webhook_url;
  if (!tenant || !url) return;
  if (!tenant.webhook_secret) await repos.webhooks.setTenantWebhook(tenant.id, undefined, newWebhookSecret());
  const now = isoAt(sources.clock.now());
  const payload = {
    id: sources.ids(),
    event,
    createdAt: now,
    data: {
      jobId: job.id,
      taskTypeId: job.task_type_id,
      taskTypeSlug: taskTypeById(job.task_type_id)?.slug,
      status,
      ...(details.result !== undefined ? { result: details.result } : {}),
      ...(details.errorMessage ? { errorMessage: details.errorMessage } : {}),
    },
  };
  await repos.webhooks.insert({
    id: payload.id,
    tenant_id: job.tenant_id,
    job_id: job.id,
    event,
    url,
    payload: JSON.stringify(payload),
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    last_status_code: null,
    last_error: null,
    created_at: now,
    delivered_at: null,
  });
}

export const newWebhookSecret = () => `whsec_${randomBase62(32)}`;

export interface DispatcherOptions {
  allowPrivate: boolean;
  /** Delay before the first retry; each later one is three times longer, at most 4 h. */
  firstRetryMs: number;
  timeoutMs: number;
  pollIntervalMs: number;
}

const GIVE_UP_AFTER_MS = 24 * 3600 * 1000;

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly deps: { repos: Pick<Repositories, 'tenants' | 'webhooks'>; webhooks: WebhookRepository; dialect: Dialect; logger: Logger; options: DispatcherOptions; clock?: Clock },
  ) {}

  private get clock(): Clock {
    return this.deps.clock ?? systemClock;
  }

  start(): void {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.drain()
        .catch((error) => this.deps.logger.warn({ err: error }, 'webhook dispatch failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.deps.options.pollIntervalMs);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Sends every due delivery once. */
  async drain(): Promise<void> {
    for (;;) {
      const now = new Date(this.clock.now());
      const lease = new Date(now.getTime() + this.deps.options.timeoutMs * 2).toISOString();
      const delivery = await this.deps.webhooks.claimDue(this.deps.dialect, now.toISOString(), lease);
      if (!delivery) return;
      const tenant = await this.deps.repos.tenants.find(delivery.tenant_id);
      const outcome = tenant?.webhook_secret
        ? await this.send(delivery.url, delivery.payload, tenant.webhook_secret, delivery.event, delivery.id)
        : { ok: false, statusCode: null, error: 'tenant has no webhook secret' };
      if (outcome.ok) {
        await this.deps.webhooks.record(delivery.id, { status: 'delivered', delivered_at: isoAt(this.clock.now()), last_status_code: outcome.statusCode, last_error: null });
        continue;
      }
      const delay = Math.min(this.deps.options.firstRetryMs * 3 ** (delivery.attempts - 1), 4 * 3600 * 1000);
      const nextAttempt = this.clock.now() + delay;
      const giveUp = outcome.refused || nextAttempt > Date.parse(delivery.created_at) + GIVE_UP_AFTER_MS;
      await this.deps.webhooks.record(delivery.id, {
        status: giveUp ? 'failed' : 'pending',
        next_attempt_at: new Date(nextAttempt).toISOString(),
        last_status_code: outcome.statusCode,
        last_error: outcome.error,
      });
      this.deps.logger.info({ jobId: delivery.job_id, code: 'WEBHOOK_FAILED', attempt: delivery.attempts, giveUp, error: outcome.error }, 'webhook delivery failed');
    }
  }

  private send(target: string, body: string, secret: string, event: string, deliveryId: string): Promise<{ ok: boolean; statusCode: number | null; error: string | null; refused?: boolean }> {
    const url = new URL(target);
    const allowPrivate = this.deps.options.allowPrivate;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!allowPrivate && isIP(host) && isRefusedAddress(host)) {
      return Promise.resolve({ ok: false, statusCode: null, error: `refused: ${host} is a loopback or private address`, refused: true });
    }
    // Check the address actually connected to, not just the name.
    const guardedLookup = (hostname: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
      dnsLookup(hostname, { ...options, all: false }, (error, address, family) => {
        if (error) return callback(error, '', 0);
        if (!allowPrivate && isRefusedAddress(address as string)) {
          return callback(Object.assign(new Error(`refused: ${hostname} resolves to a loopback or private address`), { code: 'EREFUSED_PRIVATE' }), '', 0);
        }
        callback(null, address, family);
      });
    };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      const req = request(
        url,
        {
          method: 'POST',
          lookup: guardedLookup as never,
          timeout: this.deps.options.timeoutMs,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'mediaproof-webhooks/1',
            [SIGNATURE_HEADER]: signWebhook(secret, body),
            'mediaproof-event': event,
            'mediaproof-delivery': deliveryId,
          },
        },
        (response) => {
          response.resume();
          const statusCode = response.statusCode ?? 0;
          resolve({ ok: statusCode >= 200 && statusCode < 300, statusCode, error: statusCode >= 200 && statusCode < 300 ? null : `receiver answered ${statusCode}` });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.deps.options.timeoutMs} ms`)));
      req.on('error', (error: Error & { code?: string }) =>
        resolve({ ok: false, statusCode: null, error: error.message, refused: error.code === 'EREFUSED_PRIVATE' }),
      );
      req.end(body);
    });
  }
}
