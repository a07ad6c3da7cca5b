/**
 * The media-record API on an S3-compatible bucket (s3rver on loopback): the upload goes
 * straight to the bucket, so processing must start from a read of the record or the sweeper.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jpeg, startServer } from '../helpers.js';
import { startS3 } from '../scale/harness.js';

test('S3: a record starts processing once its file is in the bucket, found by a read or by the sweeper', async () => {
  const s3 = await startS3();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: s3.env.AWS_SECRET_ACCESS_KEY });
  const server = await startServer(s3.env);
  try {
    const { tenantId } = await server.tenant(10);
    const credentials = await server.runtime.credentials.createMediaClient(tenantId, ['media:read', 'media:write'], { query: null, mutation: null, periodSeconds: 60 });
    const headers = { 'x-client-id': credentials.clientId, 'x-client-secret': credentials.clientSecret, 'content-type': 'application/json' };
    const image = await jpeg();
    const create = async () =>
      (await fetch(`${server.url}/api/media`, { method: 'POST', headers, body: JSON.stringify({ name: 'a.jpg', contentType: 'image/jpeg', size: image.length, modelType: 'AC-1' }) })).json();

    const byRead = await create();
    assert.ok(byRead.uploadUrl.startsWith(s3.endpoint), 'the upload URL points at the bucket');
    const upload = await fetch(byRead.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: new Uint8Array(image) });
    assert.equal(upload.status, 200);
    const afterRead = await (await fetch(`${server.url}/api/media/${byRead.mid}`, { headers })).json();
    assert.equal(afterRead.status, 'UPLOADED');

    const bySweep = await create();
    await fetch(bySweep.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/jpeg' }, body: new Uint8Array(image) });
    assert.equal(await server.runtime.media.sweepArrivedUploads(), 1);

    for (const mid of [byRead.mid, bySweep.mid]) {
      let record;
      for (let i = 0; i < 300; i++) {
        record = await (await fetch(`${server.url}/api/media/${mid}`, { headers })).json();
        if (record.status === 'PROCESSED' || record.status === 'FAILED') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(record.status, 'PROCESSED', record.errorMessage);
      assert.equal(typeof record.fake, 'boolean');
      assert.equal((await fetch(record.resultURL)).status, 200);
    }
  } finally {
    await server.close();
    await s3.close();
  }
});
