/**
 * Authenta's current SDKs against mediaproof, driven the way they drive a server: the Python
 * SDK (job API, task type as a numeric string or model code, FI-1 parameters, a reference file
 * named without extension, finalize with an empty JSON body, the result read from the `result`
 * artifact) and the React Native core (media API with every model code, FI-1 `metadata`, a PDF
 * declared as application/octet-stream, `items` in lists, the result read from `resultURL`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { readFile } from 'node:fs/promises';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { client, put, startServer, withoutDetector, type TestServer } from '../helpers.js';
import { ONE_FACE, flickerClip, scratchDir } from '../face/helpers.js';

/** The media API's bodies as these tests read them: a record, a page of records or an error, each carrying only its own fields. */
type MediaRecord = { mid: string; type: string; status: string; modelType: string; fake: boolean; uploadUrl: string; referenceUploadUrl: string; resultURL: string; errorMessage: string };
type MediaBody = MediaRecord & { items: unknown[]; page: number; pageSize: number } & { code: string; message: string };

describe("Authenta's SDKs, as they call", () => {
  let server: TestServer;
  let tenantId: string;
  let api: ReturnType<typeof client>;
  let face: Buffer;

  before(async () => {
    server = await startServer({ WORKER_CONCURRENCY: '2' });
    ({ tenantId } = await server.tenant(10_000));
    api = client(server.url, await server.apiKey(tenantId));
    face = await readFile(ONE_FACE);
  });
  after(() => server.close());

  /** The Python SDK's create → PUT each input → finalize → poll → result artifact. */
  async function pythonSdkProcess(taskTypeId: string, files: Array<{ slotName: string; fileName: string; contentType: string; data: Buffer }>, parameters: Record<string, unknown> = { version: 'v1' }) {
    const created = await api.call('POST', '/jobs', {
      taskTypeId,
      inputs: files.map(({ slotName, contentType, fileName, data }) => ({ slotName, contentType, fileName, sizeBytes: data.length })),
      parameters,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    for (const [i, file] of files.entries()) assert.equal((await put(created.body.inputs[i].uploadUrl, file.data, file.contentType)).status, 200);
    const finalized = await api.call('POST', `/jobs/${created.body.job.id}/finalize`, undefined, { 'content-type': 'application/json' });
    assert.equal(finalized.status, 200, JSON.stringify(finalized.body));
    const media = await api.waitFor(created.body.job.id);
    assert.equal(String(media.status).toUpperCase(), 'COMPLETED', media.errorMessage);
    const resultUrl = media.artifacts.find((a: { kind: string }) => a.kind === 'result').downloadUrl;
    return { media, result: (await (await fetch(resultUrl)).json()) as Record<string, unknown> };
  }

  test('Python SDK, FI-1 with a reference: isLiveness, isSimilar and similarityScore (0-100); the check not asked is null', async () => {
    const { media, result } = await pythonSdkProcess(
      '8',
      [
        { slotName: 'original', fileName: 'selfie', contentType: 'image/jpeg', data: face },
        { slotName: 'reference', fileName: 'id-photo', contentType: 'image/jpeg', data: face },
      ],
      { version: 'v1', isFaceswapCheck: false, isLivenessCheck: true, isSimilarityCheck: true },
    );
    assert.equal(result.resultType, 'FI-1');
    assert.equal(result.isSimilar, true);
    assert.ok(typeof result.similarityScore === 'number' && result.similarityScore >= 65 && result.similarityScore <= 100, String(result.similarityScore));
    assert.ok(result.isLiveness === null || typeof result.isLiveness === 'boolean');
    assert.equal(result.isLiveness === null, result.isSpoof === null);
    assert.equal(result.isDeepFake, null, 'faceswap was not asked');
    // The same document is the job's result.
    assert.equal(media.result.similarityScore, result.similarityScore);
    assert.ok(Array.isArray(result.faces), 'our own envelope comes first, unchanged');
  });

  test('Python SDK, FE-1 by model code: faceVector and embedding are the main face', async () => {
    const { result } = await pythonSdkProcess('FE-1', [{ slotName: 'original', fileName: 'face', contentType: 'image/jpeg', data: face }]);
    const faces = result.faces as Array<{ embedding: number[] }>;
    assert.equal(result.resultType, 'FE-1');
    assert.deepEqual(result.faceVector, faces[0]!.embedding);
    assert.deepEqual(result.embedding, faces[0]!.embedding);
    assert.ok((result.embedding as number[]).length >= 128);
  });

  test('DF-1: identityPredictions and boundingBoxes per frame, with class and confidence', async () => {
    const clip = await readFile(await flickerClip(await scratchDir()));
    const { result } = await pythonSdkProcess('4', [{ slotName: 'original', fileName: 'call', contentType: 'video/mp4', data: clip }], { version: 'v1', maxFrames: 5 });
    assert.equal(result.resultType, 'DF-1');
    const predictions = result.identityPredictions as Array<{ identityId: number; isDeepFake: boolean }>;
    assert.deepEqual(predictions, [{ identityId: 0, isDeepFake: true }]);
    const boxes = result.boundingBoxes as Record<string, { boundingBox: Record<string, number[]>; class: string; confidence: number }>;
    assert.equal(boxes['0']!.class, 'fake');
    assert.ok(boxes['0']!.confidence >= 0.5);
    const frames = Object.entries(boxes['0']!.boundingBox);
    assert.equal(frames.length, 5);
    for (const [frame, [x1, y1, x2, y2]] of frames) {
      assert.match(frame, /^\d+$/);
      assert.ok(x2! > x1! && y2! > y1!);
    }
    assert.equal(typeof result.RealConfidencePercent, 'number');
  });

  test('job lists carry items, total, page and pageSize beside data and pagination', async () => {
    const listed = await api.list('?page=1&pageSize=2');
    assert.equal(listed.status, 200);
    assert.equal(listed.body.items.length, 2);
    assert.deepEqual(listed.body.items, listed.body.data);
    assert.deepEqual([listed.body.page, listed.body.pageSize, listed.body.total], [1, 2, listed.body.pagination.total]);
  });

  describe('React Native core, media API', () => {
    let call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: MediaBody }>;

    before(async () => {
      const credentials = await server.runtime.credentials.createMediaClient(tenantId, ['media:read', 'media:write', 'media:delete'], { query: null, mutation: null, periodSeconds: 3600 });
      call = async (method, path, body) => {
        // The RN client sends Content-Type: application/json on every call, bodies or not.
        const response = await fetch(`${server.url}/api${path}`, {
          method,
          headers: { 'x-client-id': credentials.clientId, 'x-client-secret': credentials.clientSecret, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        return { status: response.status, body: text ? JSON.parse(text) : {} };
      };
    });

    async function faceIntelligence(name: string, contentType: string, data: Buffer, modelType: string, metadata?: Record<string, unknown>) {
      const created = await call('POST', '/media', { name, contentType, size: data.length, modelType, ...(metadata && { metadata }) });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal((await put(created.body.uploadUrl, data, contentType)).status, 200);
      const deadline = Date.now() + 90_000;
      for (;;) {
        const media = await call('GET', `/media/${created.body.mid}`);
        if (['PROCESSED', 'FAILED', 'ERROR'].includes(String(media.body.status).toUpperCase())) {
          const result = media.body.resultURL ? ((await (await fetch(media.body.resultURL)).json()) as Record<string, unknown>) : undefined;
          return { media: media.body, result };
        }
        assert.ok(Date.now() < deadline, `media still ${media.body.status}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }

    test('FI-1 with metadata flags (absent = false): liveness asked, similarity and faceswap not', async () => {
      const { media, result } = await faceIntelligence('selfie.jpg', 'image/jpeg', face, 'FI-1', { isSingleFace: true, livenessCheck: true, faceswapCheck: false });
      assert.equal(media.status, 'PROCESSED');
      assert.equal(media.type, 'Image');
      assert.equal(media.modelType, 'FI-1');
      assert.equal(result!.resultType, 'FI-1');
      assert.equal(result!.isSimilar, null);
      assert.equal(result!.isDeepFake, null);
      assert.equal((result!.checks as Record<string, boolean>).similarity, false, 'an absent faceSimilarityCheck is false');
      assert.equal((result!.checks as Record<string, boolean>).liveness, true);
    });

    test('faceSimilarityCheck without the reference image is refused with a clear error, before anything is charged', async () => {
      const created = await call('POST', '/media', { name: 'selfie.jpg', contentType: 'image/jpeg', size: face.length, modelType: 'FI-1', metadata: { faceSimilarityCheck: true } });
      assert.equal(created.status, 400);
      assert.match(created.body.message, /referenceContentType and referenceSize/);
    });

    test('FI-1 with faceSimilarityCheck: a referenceUploadUrl, processing waits for both files, then isSimilar and similarityScore', async () => {
      const reference = await sharp(face).resize({ width: 500 }).jpeg({ quality: 80 }).toBuffer();
      const created = await call('POST', '/media', {
        name: 'selfie.jpg', contentType: 'image/jpeg', size: face.length, modelType: 'FI-1', metadata: { faceSimilarityCheck: true },
        referenceName: 'id-photo.jpg', referenceContentType: 'image/jpeg', referenceSize: reference.length,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.match(created.body.referenceUploadUrl, /^http/);
      assert.equal((await put(created.body.uploadUrl, face, 'image/jpeg')).status, 200);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await call('GET', `/media/${created.body.mid}`)).body.status, 'INITED', 'one file of two: not processing yet');
      assert.equal((await put(created.body.referenceUploadUrl, reference, 'image/jpeg')).status, 200);
      const deadline = Date.now() + 90_000;
      let media;
      while (!['PROCESSED', 'FAILED'].includes((media = (await call('GET', `/media/${created.body.mid}`)).body).status)) {
        assert.ok(Date.now() < deadline, `media still ${media.status}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(media.status, 'PROCESSED', media.errorMessage);
      const result = (await (await fetch(media.resultURL)).json()) as Record<string, unknown>;
      assert.equal(result.isSimilar, true);
      assert.ok((result.similarityScore as number) >= 65 && (result.similarityScore as number) <= 100, `similarityScore ${result.similarityScore}`);
    });

    test('every model code is accepted; a PDF declared as application/octet-stream is a Document decided by its bytes', async () => {
      const pdf = await PDFDocument.create();
      pdf.addPage([300, 200]).drawText('INVOICE 42', { x: 40, y: 100, size: 18, font: await pdf.embedFont(StandardFonts.Helvetica) });
      const bytes = Buffer.from(await pdf.save());
      const { media, result } = await faceIntelligence('invoice.pdf', 'application/octet-stream', bytes, 'DI-1');
      assert.equal(media.status, 'PROCESSED', media.errorMessage);
      assert.equal(media.type, 'Document');
      assert.equal(result!.resultType, 'DI-1');
      assert.equal(typeof media.fake, 'boolean');

      // Bytes that are not what the task takes are refused at finalize, saying what they are.
      const notPdf = await faceIntelligence('notes.pdf', 'application/octet-stream', Buffer.from('just some text, not a document format'), 'DI-1');
      assert.equal(notPdf.media.status, 'FAILED');
      assert.match(notPdf.media.errorMessage, /document-intelligence takes JPEG, PNG, PDF/);

      for (const [modelType, kind] of [['AC-1', 'Image'], ['FD-1', 'Image'], ['FL-1', 'Image'], ['FE-1', 'Image']] as const) {
        const created = await call('POST', '/media', { name: 'face.jpg', contentType: 'image/jpeg', size: face.length, modelType });
        assert.equal(created.status, 201, `${modelType}: ${JSON.stringify(created.body)}`);
        assert.equal(created.body.type, kind);
      }
      for (const [modelType, contentType, kind] of [['AF-1', 'audio/wav', 'Audio'], ['AS-1', 'audio/mpeg', 'Audio'], ['ED-1', 'video/mp4', 'Video'], ['DF-1', 'video/webm', 'Video'], ['VF-1', 'video/mp4', 'Video']] as const) {
        const created = await call('POST', '/media', { name: 'clip', contentType, size: 1000, modelType });
        assert.equal(created.status, 201, `${modelType}: ${JSON.stringify(created.body)}`);
        assert.equal(created.body.type, kind);
      }
      // A known code whose detector is not built, and an unknown code.
      const refused = await withoutDetector(3, () => call('POST', '/media', { name: 'clip.mp4', contentType: 'video/mp4', size: 1000, modelType: 'VF-1' }));
      assert.equal(refused.body.code, 'TASK_TYPE_UNAVAILABLE');
      assert.equal((await call('POST', '/media', { name: 'x.jpg', contentType: 'image/jpeg', size: 10, modelType: 'ZZ-9' })).status, 400);
      assert.equal((await call('POST', '/media', { name: 'x.jpg', contentType: 'audio/wav', size: 10, modelType: 'AC-1' })).body.code, 'UNSUPPORTED_MEDIA_TYPE');

      const listed = await call('GET', '/media?page=1&pageSize=3');
      assert.equal(listed.body.items.length, 3);
      assert.deepEqual([listed.body.page, listed.body.pageSize], [1, 3]);
    });
  });
});
