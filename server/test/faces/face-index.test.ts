/**
 * Face indexing over real HTTP: enrol (upload URLs per photo, processed from the
 * face-embedding model), list, search (multipart and JSON), delete, across two tenants, with
 * the bad inputs of the issue: no face or several, 0 or 11 images, a query without a face,
 * another tenant's subject, an upload that never arrives.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { FIVE_FACES, ONE_FACE } from '../face/helpers.js';
import { jpeg, put, sleep, startServer, type TestServer } from '../helpers.js';
import { createTestDatabase, postgresSkipReason } from '../scale/harness.js';
import { NOT_SIMILAR_BELOW } from '../../src/detectors/face/verification.js';

const postgresSkip = await postgresSkipReason();

const BASE = '/api/v1/facesim/v1';

describe('face indexing', () => {
  let server: TestServer;
  let keyA: string;
  let keyB: string;
  let man: Buffer;
  let woman: Buffer;
  let group: Buffer;
  let noFace: Buffer;

  async function call(key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const isForm = body instanceof FormData;
    const response = await fetch(`${server.url}${BASE}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && !isForm ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, body: (text ? JSON.parse(text) : null) as any };
  }

  /** Enrols photos and uploads each to its URL; returns the subject id. */
  async function enroll(key: string, photos: Array<[string, Buffer]>): Promise<{ subjectId: string; faceIds: string[] }> {
    const created = await call(key, 'POST', '/enroll', { images: photos.map(([name, bytes]) => ({ name, contentType: 'image/jpeg', sizeBytes: bytes.byteLength })) });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    for (const [i, face] of created.body.faces.entries()) {
      assert.equal((await put(face.upload_url, photos[i]![1], face.headers['Content-Type'])).status, 200);
    }
    return { subjectId: created.body.subject_id, faceIds: created.body.faces.map((f: { face_id: string }) => f.face_id) };
  }

  /** Polls the listing until every face of the subject is processed or failed. */
  async function settled(key: string, subjectId: string) {
    for (let i = 0; i < 600; i++) {
      const listed = await call(key, 'GET', '/subjects');
      const subject = listed.body.subjects.find((s: { subject_id: string }) => s.subject_id === subjectId);
      if (subject.faces.every((f: { status: string }) => f.status === 'processed' || f.status === 'failed')) return subject;
      await sleep(200);
    }
    throw new Error(`subject ${subjectId} did not settle`);
  }

  const search = (key: string, photo: Buffer, limit = 10) => {
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), 'query.jpg');
    form.append('limit', String(limit));
    return call(key, 'POST', '/search', form);
  };

  before(async () => {
    server = await startServer({ UPLOAD_URL_TTL_SECONDS: '600' });
    const a = await server.tenant(200);
    const b = await server.tenant(200);
    keyA = await server.apiKey(a.tenantId, ['faces:read', 'faces:write', 'faces:delete']);
    keyB = await server.apiKey(b.tenantId, ['faces:read', 'faces:write', 'faces:delete']);
    man = await readFile(ONE_FACE);
    group = await readFile(FIVE_FACES);
    woman = await sharp(FIVE_FACES).extract({ left: 410, top: 290, width: 270, height: 270 }).jpeg().toBuffer();
    noFace = await jpeg(320, 240);
  });

  after(() => server?.close());

  test('0 or 11 images, a size-less image and a key without faces permissions are refused', async () => {
    assert.equal((await call(keyA, 'POST', '/enroll', { images: [] })).status, 400);
    const eleven = Array.from({ length: 11 }, (_, i) => ({ name: `p${i}.jpg`, contentType: 'image/jpeg', sizeBytes: 100 }));
    const tooMany = await call(keyA, 'POST', '/enroll', { images: eleven });
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.body.message, /1–10 images/);
    assert.equal((await call(keyA, 'POST', '/enroll', { images: [{ name: 'a.gif', contentType: 'image/gif', sizeBytes: 10 }] })).status, 400);
    const jobsOnly = await server.apiKey((await server.tenant(10)).tenantId, ['jobs:read', 'jobs:write']);
    assert.equal((await call(jobsOnly, 'GET', '/subjects')).status, 403);
  });

  test('enrolment: one face is processed with its embedding; no face or several fail with the reason', async () => {
    const { subjectId } = await enroll(keyA, [['man.jpg', man], ['empty.jpg', noFace], ['group.jpg', group]]);
    const subject = await settled(keyA, subjectId);
    const byName = Object.fromEntries(subject.faces.map((f: { name: string }) => [f.name, f]));
    assert.equal(byName['man.jpg'].status, 'processed');
    assert.equal(byName['man.jpg'].embedding.length, 1024);
    assert.equal(byName['man.jpg'].error, null);
    assert.match(byName['man.jpg'].image_url, /^http/);
    assert.equal((await fetch(byName['man.jpg'].image_url)).status, 200);
    assert.equal(byName['empty.jpg'].status, 'failed');
    assert.match(byName['empty.jpg'].error, /no face was found/);
    assert.equal(byName['group.jpg'].status, 'failed');
    assert.match(byName['group.jpg'].error, /\d faces were found/);
  });

  test('search ranks the same person first, stays within the tenant, and refuses a query without a face', async () => {
    const manA = await enroll(keyA, [['man-a.jpg', man]]);
    const womanA = await enroll(keyA, [['woman-a.jpg', woman]]);
    const manB = await enroll(keyB, [['man-b.jpg', man]]);
    for (const [key, id] of [[keyA, manA.subjectId], [keyA, womanA.subjectId], [keyB, manB.subjectId]] as const) await settled(key, id);

    // A different copy of the photo: smaller and recompressed.
    const query = await sharp(man).resize({ width: 600 }).jpeg({ quality: 70 }).toBuffer();
    const found = await search(keyA, query);
    assert.equal(found.status, 200, JSON.stringify(found.body));
    const top = found.body.results[0];
    assert.equal(top.rank, 1);
    assert.ok(['man-a.jpg', 'man.jpg'].includes(top.name), `top match ${top.name}`);
    assert.ok(top.similarity_score > 0.8, `similarity ${top.similarity_score}`);
    const otherPerson = found.body.results.find((r: { subject_id: string }) => r.subject_id === womanA.subjectId);
    assert.ok(otherPerson.similarity_score < NOT_SIMILAR_BELOW, `another person scores as someone else (${otherPerson.similarity_score})`);
    assert.equal(found.body.results.some((r: { subject_id: string }) => r.subject_id === manB.subjectId), false, "tenant B's face is never a result for tenant A");
    assert.ok(found.body.results.every((r: { similarity_score: number }, i: number, all: Array<{ similarity_score: number }>) => i === 0 || all[i - 1]!.similarity_score >= r.similarity_score));

    // JSON with base64url bytes (the React Native SDK's form) and a limit.
    const json = await call(keyB, 'POST', '/search?limit=1', { image_bytes: query.toString('base64url') });
    assert.equal(json.status, 200, JSON.stringify(json.body));
    assert.equal(json.body.count, 1);
    assert.equal(json.body.results[0].subject_id, manB.subjectId);

    const faceless = await search(keyA, noFace);
    assert.equal(faceless.status, 400);
    assert.match(faceless.body.message, /No face was found in the query image/);
    assert.equal((await search(keyA, Buffer.from('GIF89a not an image'))).status, 400);
  });

  test("deleting forgets the person: another tenant's subject is 404; a deleted subject is no longer found and its photo is gone", async () => {
    const { subjectId } = await enroll(keyA, [['forget-me.jpg', woman]]);
    const subject = await settled(keyA, subjectId);
    const imageUrl = subject.faces[0].image_url;
    assert.equal((await call(keyB, 'DELETE', `/subjects/${subjectId}`)).status, 404);
    assert.equal((await call(keyA, 'DELETE', `/subjects/${subjectId}`)).status, 204);
    assert.equal((await call(keyA, 'DELETE', `/subjects/${subjectId}`)).status, 404);
    const listed = await call(keyA, 'GET', '/subjects');
    assert.equal(listed.body.subjects.some((s: { subject_id: string }) => s.subject_id === subjectId), false);
    assert.notEqual((await fetch(imageUrl)).status, 200, 'the photo is deleted');
    const found = await search(keyA, woman);
    assert.equal(found.body.results.some((r: { subject_id: string }) => r.subject_id === subjectId), false);
  });

  for (const mode of ['SQLite', 'PostgreSQL'] as const) test(`beyond FACE_SEARCH_EXACT_MAX the HNSW index answers, and two API processes on one database stay in step (${mode})`, { skip: mode === 'PostgreSQL' ? postgresSkip : false }, async () => {
    // Two processes on one database, each keeping its own index.
    const database = mode === 'PostgreSQL' ? await createTestDatabase() : undefined;
    const shared: Record<string, string> = database ? { DATABASE_URL: database.url } : {};
    const first = await startServer({ FACE_SEARCH_EXACT_MAX: '1', ...shared });
    const second = await startServer({ FACE_SEARCH_EXACT_MAX: '1', DATA_DIR: first.dataDir, ...shared }, 'api');
    try {
      const key = await first.apiKey((await first.tenant(100)).tenantId, ['faces:read', 'faces:write', 'faces:delete']);
      const via = (target: TestServer) => async (method: string, path: string, body?: unknown) => {
        const isForm = body instanceof FormData;
        const response = await fetch(`${target.url}${BASE}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body && !isForm ? { 'content-type': 'application/json' } : {}) }, body: isForm ? body : body ? JSON.stringify(body) : undefined });
        const text = await response.text();
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        return { status: response.status, body: (text ? JSON.parse(text) : null) as any };
      };
      const [one, two] = [via(first), via(second)];
      const enrolOn = async (photo: Buffer, name: string) => {
        const created = await one('POST', '/enroll', { images: [{ name, contentType: 'image/jpeg', sizeBytes: photo.byteLength }] });
        assert.equal((await put(created.body.faces[0].upload_url, photo, 'image/jpeg')).status, 200);
        for (let i = 0; i < 300; i++) {
          const listed = await one('GET', '/subjects');
          const face = listed.body.subjects.flatMap((s: { faces: Array<{ face_id: string; status: string }> }) => s.faces).find((f: { face_id: string }) => f.face_id === created.body.faces[0].face_id);
          if (face.status === 'processed') return created.body.subject_id as string;
          await sleep(200);
        }
        throw new Error('not processed');
      };
      const searchOn = async (target: typeof one, photo: Buffer) => {
        const form = new FormData();
        form.append('image', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), 'q.jpg');
        return target('POST', '/search', form);
      };
      const manSubject = await enrolOn(man, 'man.jpg');
      const womanSubject = await enrolOn(woman, 'woman.jpg');

      // The second process has not searched yet; it builds its index from the database.
      const found = await searchOn(two, man);
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.exact, false, 'two faces are over the limit of one: HNSW');
      assert.equal(found.body.results[0].subject_id, manSubject);
      assert.equal(found.body.searched, 2);

      // A deletion through the first process is seen by the second's index at its next search.
      assert.equal((await one('DELETE', `/subjects/${manSubject}`)).status, 204);
      const after = await searchOn(two, man);
      assert.equal(after.body.searched, 1);
      assert.equal(after.body.results.some((r: { subject_id: string }) => r.subject_id === manSubject), false);
      assert.equal(after.body.results[0].subject_id, womanSubject);
    } finally {
      await second.close();
      await first.close();
      await database?.drop();
    }
  });

  test('a photo that never arrives expires to failed', async () => {
    const shortLived = await startServer({ UPLOAD_URL_TTL_SECONDS: '1' });
    try {
      const key = await shortLived.apiKey((await shortLived.tenant(10)).tenantId, ['faces:read', 'faces:write']);
      const response = await fetch(`${shortLived.url}${BASE}/enroll`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ images: [{ name: 'late.jpg', contentType: 'image/jpeg', sizeBytes: 1000 }] }),
      });
      const created = (await response.json()) as { subject_id: string };
      await sleep(1500);
      const listed = (await (await fetch(`${shortLived.url}${BASE}/subjects`, { headers: { authorization: `Bearer ${key}` } })).json()) as { subjects: Array<{ faces: Array<{ status: string; error: string }> }> };
      assert.equal(listed.subjects[0]!.faces[0]!.status, 'failed');
      assert.match(listed.subjects[0]!.faces[0]!.error, /No image was uploaded before the upload URL expired/);
      assert.ok(created.subject_id);
    } finally {
      await shortLived.close();
    }
  });
});
