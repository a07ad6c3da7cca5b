/** Webhooks with a real receiver on loopback: signed, retried after a 500, refused addresses never called. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { client, declare, jpeg, startServer, submit, type TestServer } from '../helpers.js';
import { signWebhook, verifyWebhookSignature } from '../../src/services/webhook-signature.js';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

async function receiver(answers: number[]): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.statusCode = answers.shift() ?? 200;
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, received, server };
}

const until = async (check: () => Promise<boolean> | boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('webhooks', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_FIRST_RETRY_MS: '200' });
  });
  after(() => server.close());

  test('a completed job is POSTed once, signed with the tenant secret, and logged as delivered', async () => {
    const hook = await receiver([]);
    try {
      const { tenantId } = await server.tenant(10);
      const api = client(server.url, await server.apiKey(tenantId));
      const image = await jpeg();
      const created = await api.createJob(1, [declare(image)], { webhookUrl: hook.url });
      assert.equal(created.status, 200);
      await fetch(created.body.inputs[0].uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: new Uint8Array(image) });
      await api.finalize(created.body.jobId);
      await until(() => hook.received.length === 1);
      const [delivery] = hook.received;
      const secret = (await server.runtime.repos.tenants.find(tenantId))!.webhook_secret!;
      assert.ok(verifyWebhookSignature(secret, String(delivery!.headers['mediaproof-signature']), delivery!.body));
      assert.ok(!verifyWebhookSignature(secret, String(delivery!.headers['mediaproof-signature']), delivery!.body.replace('completed', 'failed')));
      const payload = JSON.parse(delivery!.body);
      assert.equal(payload.event, 'job.completed');
      assert.equal(payload.data.jobId, created.body.jobId);
      assert.equal(typeof payload.data.result.score, 'number');
      const log = await api.call('GET', `/jobs/${created.body.jobId}/webhook-deliveries`);
      assert.equal(log.body.data.length, 1);
      await until(async () => (await api.call('GET', `/jobs/${created.body.jobId}/webhook-deliveries`)).body.data[0].status === 'delivered');
    } finally {
      hook.server.close();
    }
  });

  test('a receiver answering 500 is retried until it accepts', async () => {
    const hook = await receiver([500, 500]);
    try {
      const { tenantId } = await server.tenant(10);
      const api = client(server.url, await server.apiKey(tenantId));
      const created = await api.createJob(1, [declare(await jpeg())], { webhookUrl: hook.url });
      await api.cancel(created.body.jobId);
      await until(() => hook.received.length === 3);
      assert.equal(JSON.parse(hook.received[2]!.body).event, 'job.cancelled');
      await until(async () => (await api.call('GET', `/jobs/${created.body.jobId}/webhook-deliveries`)).body.data[0].status === 'delivered');
      const [entry] = (await api.call('GET', `/jobs/${created.body.jobId}/webhook-deliveries`)).body.data;
      assert.equal(entry.attempts, 3);
      assert.equal(entry.lastStatusCode, 200);
    } finally {
      hook.server.close();
    }
  });

  test('replayed or stale signatures are rejected by the verifier', () => {
    const body = '{"event":"job.completed"}';
    const old = signWebhook('whsec_x', body, Math.floor(Date.now() / 1000) - 3600);
    assert.equal(verifyWebhookSignature('whsec_x', old, body), false);
    assert.equal(verifyWebhookSignature('whsec_y', signWebhook('whsec_x', body), body), false);
    assert.equal(verifyWebhookSignature('whsec_x', signWebhook('whsec_x', body), body), true);
  });
});

test('loopback and private addresses are refused unless the operator allows them', async () => {
  const hook = await receiver([]);
  const server = await startServer({ WEBHOOK_FIRST_RETRY_MS: '100' });
  try {
    const { tenantId } = await server.tenant(10);
    const api = client(server.url, await server.apiKey(tenantId));
    for (const url of [hook.url, 'http://localhost:9/x', 'http://10.1.2.3/x', 'http://[::1]/x', 'http://169.254.169.254/latest/meta-data']) {
      const refused = await api.createJob(1, [declare(await jpeg())], { webhookUrl: url });
      assert.equal(refused.status, 400, url);
      assert.equal(refused.body.code, 'VALIDATION_ERROR');
    }
    assert.equal((await api.createJob(1, [declare(await jpeg())], { webhookUrl: 'ftp://example.com/x' })).status, 400);
    // A tenant default pointing at loopback (set before the rule, say) is refused at send time.
    await server.runtime.repos.webhooks.setTenantWebhook(tenantId, hook.url, 'whsec_test');
    const jobId = await submit(api, 1, await jpeg());
    await api.waitFor(jobId);
    await until(async () => (await api.call('GET', `/jobs/${jobId}/webhook-deliveries`)).body.data[0]?.status === 'failed');
    const [entry] = (await api.call('GET', `/jobs/${jobId}/webhook-deliveries`)).body.data;
    assert.match(entry.lastError, /refused/);
    assert.equal(hook.received.length, 0);
  } finally {
    hook.server.close();
    await server.close();
  }
});
