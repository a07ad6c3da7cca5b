/** The SDK's face-indexing resource against a real server: enrol, wait, search, forget. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { Mediaproof } from '../src/index.js';
import { jpeg, startServer, type TestServer } from './setup.js';

const require = createRequire(join(import.meta.dirname, '..', '..', 'server', 'package.json'));
const ONE_FACE = join(dirname(require.resolve('@vladmandic/human')), '..', 'assets', 'screenshot-faceid.jpg');

let server: TestServer;
let client: Mediaproof;

before(async () => {
  server = await startServer();
  const { tenantId } = await server.tenant(50);
  client = new Mediaproof({ baseUrl: server.url, apiKey: await server.apiKey(tenantId, ['faces:read', 'faces:write', 'faces:delete']) });
});

after(() => server?.close());

test('enrol a path and bytes, wait, search with a Blob, then forget the subject', async () => {
  const noFace = await jpeg(200, 150);
  const enrollment = await client.faces.enroll([ONE_FACE, noFace]);
  assert.equal(enrollment.faces.length, 2);
  const faces = await client.faces.waitForEnrollment(enrollment.subject_id, { intervalMs: 200 });
  assert.deepEqual(faces.map((face) => face.status).sort(), ['failed', 'processed']);
  assert.match(faces.find((face) => face.status === 'failed')!.error!, /no face/);

  const found = await client.faces.search(new Blob([new Uint8Array(await readFile(ONE_FACE))], { type: 'image/jpeg' }), { limit: 5 });
  assert.equal(found.results[0]!.subject_id, enrollment.subject_id);
  assert.ok(found.results[0]!.similarity_score > 0.9);

  await client.faces.deleteSubject(enrollment.subject_id);
  assert.equal((await client.faces.subjects()).some((s) => s.subject_id === enrollment.subject_id), false);
  await assert.rejects(client.faces.deleteSubject(enrollment.subject_id), (error: Error & { statusCode?: number }) => error.statusCode === 404);
});
