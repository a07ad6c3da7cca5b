/**
 * The S3 object store against a bucket that checks SigV4 signatures as S3 does (s3rver behind
 * the test gate): the store's own requests are signed correctly, and a pre-signed upload URL
 * binds its method, object, Content-Type, Content-Length and expiry, so a client cannot use it
 * for anything else.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { S3ObjectStore } from '../../src/repositories/s3-object-store.js';
import { startS3, type TestS3 } from './harness.js';

async function send(url: string, init: RequestInit = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(url, init);
  return { status: response.status, text: await response.text() };
}

const putBody = (data: Uint8Array, contentType: string): RequestInit => ({ method: 'PUT', headers: { 'content-type': contentType }, body: data as unknown as BodyInit });

describe('S3 store against a SigV4-checking bucket', () => {
  let s3: TestS3;
  let store: S3ObjectStore;
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  before(async () => {
    s3 = await startS3();
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: s3.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: s3.env.AWS_SECRET_ACCESS_KEY });
    store = new S3ObjectStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
  });

  after(async () => {
    store?.close();
    await s3?.close();
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: saved.id, AWS_SECRET_ACCESS_KEY: saved.secret });
  });

  test("the store's own signed requests are accepted: put, size, head, signed GET, delete", async () => {
    const data = Buffer.from('a result, stored by a worker');
    await store.put('jobs/j1/artifacts/result.json', data, 'application/json');
    assert.equal(await store.size('jobs/j1/artifacts/result.json'), data.byteLength);
    assert.deepEqual(await store.head('jobs/j1/artifacts/result.json', 8), data.subarray(0, 8));
    const url = await store.downloadUrl({ key: 'jobs/j1/artifacts/result.json', contentType: 'application/json', expiresAt: new Date(Date.now() + 60_000) });
    const download = await fetch(url);
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), 'application/json');
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), data);
    await store.deletePrefix('jobs/j1/');
    assert.equal(await store.size('jobs/j1/artifacts/result.json'), null);
    assert.equal(s3.refused.size, 0, `refused: ${JSON.stringify([...s3.refused])}`);
  });

  test('a pre-signed PUT URL uploads exactly the declared type and size to its own key', async () => {
    const data = Buffer.alloc(1000, 1);
    const url = await store.uploadUrl({ key: 'jobs/j2/inputs/0', jobId: 'j2', slotName: 'original', nonce: 'n2', contentType: 'image/jpeg', sizeBytes: data.byteLength, expiresAt: new Date(Date.now() + 60_000) });

    const shorter = await send(url, putBody(data.subarray(0, 999), 'image/jpeg'));
    assert.equal(shorter.status, 403, 'another Content-Length');
    assert.match(shorter.text, /<Code>SignatureDoesNotMatch<\/Code>/);
    assert.equal((await send(url, putBody(data, 'image/png'))).status, 403, 'another Content-Type');
    assert.equal((await send(url.replace('/inputs/0?', '/inputs/1?'), putBody(data, 'image/jpeg'))).status, 403, 'another key');
    // The first hex digit changed to another one (a fixed replacement would be a no-op one time in 16).
    const forged = url.replace(/X-Amz-Signature=([0-9a-f])/, (_match, digit: string) => `X-Amz-Signature=${digit === '0' ? '1' : '0'}`);
    assert.notEqual(forged, url);
    assert.equal((await send(forged, putBody(data, 'image/jpeg'))).status, 403, 'a forged signature');
    assert.equal((await send(url, { method: 'DELETE' })).status, 403, 'another method');
    assert.equal(await store.size('jobs/j2/inputs/0'), null, 'nothing refused reached the bucket');

    assert.equal((await send(url, putBody(data, 'image/jpeg'))).status, 200);
    assert.equal(await store.size('jobs/j2/inputs/0'), data.byteLength);
    assert.equal((await send(`${s3.endpoint}/${s3.bucket}/jobs/j2/inputs/0`)).status, 403, 'unsigned reads are refused');
  });

  test('an expired URL is refused', async () => {
    const url = await store.uploadUrl({ key: 'jobs/j3/inputs/0', jobId: 'j3', slotName: 'original', nonce: 'n3', contentType: 'image/jpeg', sizeBytes: 10, expiresAt: new Date(Date.now() + 1000) });
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const late = await send(url, putBody(Buffer.alloc(10), 'image/jpeg'));
    assert.equal(late.status, 403);
    assert.match(late.text, /Request has expired/);
  });

  test('requests signed with the wrong secret are refused', async () => {
    process.env.AWS_SECRET_ACCESS_KEY = 'not-the-secret';
    const impostor = new S3ObjectStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
    try {
      await assert.rejects(impostor.put('jobs/j4/x', Buffer.from('x'), 'text/plain'), /signature we calculated does not match/);
    } finally {
      impostor.close();
      process.env.AWS_SECRET_ACCESS_KEY = s3.env.AWS_SECRET_ACCESS_KEY;
    }
  });
});
