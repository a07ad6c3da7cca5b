/** analyze(): create, upload with progress, finalize and wait, end to end on a real server. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Mediaproof, JobFailedError, APIUserAbortError, UnsupportedMediaTypeError, type AnalyzeProgress } from '../src/index.js';
import { jpeg, startServer, type TestServer } from './setup.js';
import { fitContentType, sniffContentType } from '../src/uploadable.js';
import { runFfmpeg } from '../../server/src/detectors/media/ffmpeg.js';

describe('analyze', () => {
  let server: TestServer;
  let client: Mediaproof;
  let image: Buffer;
  let dir: string;
  let path: string;

  before(async () => {
    server = await startServer();
    const { tenantId } = await server.tenant(1000);
    client = new Mediaproof({ apiKey: await server.apiKey(tenantId), baseUrl: server.url, maxRetries: 0 });
    image = await jpeg(640, 480);
    dir = mkdtempSync(join(tmpdir(), 'mediaproof-sdk-'));
    path = join(dir, 'holiday.jpg');
    writeFileSync(path, image);
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  });

  test('a file path: the completed job with a typed result, and every phase reported in order', async () => {
    const events: AnalyzeProgress[] = [];
    const job = await client.analyze(path, { taskType: 'ai-image-detection', onProgress: (e) => events.push(e), pollIntervalMs: 50 });
    assert.equal(job.status, 'completed');
    assert.equal(job.taskTypeSlug, 'ai-image-detection');
    // Typed per task type: isAiGenerated is a boolean here without a cast.
    const flag: boolean = job.result.isAiGenerated;
    assert.equal(typeof flag, 'boolean');
    assert.ok(['authentic', 'manipulated', 'inconclusive'].includes(job.result.verdict));
    assert.ok(job.result.confidence >= 0 && job.result.confidence <= 1);
    assert.deepEqual(job.inputs, [{ slotName: 'original', fileName: 'holiday.jpg', sizeBytes: image.byteLength, contentType: 'image/jpeg' }]);

    const phases = events.map((e) => e.phase).filter((p, i, all) => p !== all[i - 1]);
    assert.deepEqual(phases.slice(0, 3), ['creating', 'uploading', 'finalizing']);
    assert.equal(phases.at(-1), 'done');
    const uploads = events.filter((e) => e.phase === 'uploading');
    assert.ok(uploads.length >= 3, 'progress in several steps for a file over one chunk');
    assert.equal(uploads.at(-1)!.sentBytes, image.byteLength);
    assert.equal(uploads.at(-1)!.totalBytes, image.byteLength);
    for (let i = 1; i < uploads.length; i++) assert.ok(uploads[i]!.sentBytes >= uploads[i - 1]!.sentBytes);
  });

  test('bytes and a Blob, by task type id: content type found from the bytes', async () => {
    const fromBytes = await client.analyze(image, { taskType: 1, pollIntervalMs: 50 });
    assert.equal(fromBytes.inputs[0]!.contentType, 'image/jpeg');
    assert.equal(fromBytes.inputs[0]!.fileName, 'upload.jpg');
    const fromBlob = await client.analyze(new Blob([new Uint8Array(image)]), { taskType: 'ai-image-detection', pollIntervalMs: 50 });
    assert.equal(fromBlob.status, 'completed');
    assert.equal(fromBlob.result.score, fromBytes.result.score, 'same bytes, same score');
  });

  test('a job that ends failed: JobFailedError with the job and its errorMessage (a corrupt JPEG)', async () => {
    const corrupt = Buffer.concat([image.subarray(0, 40), Buffer.alloc(500, 7)]);
    const error = await client.analyze(corrupt, { taskType: 'ai-image-detection', pollIntervalMs: 50 }).catch((e: unknown) => e);
    assert.ok(error instanceof JobFailedError, String(error));
    assert.equal(error.code, 'JOB_FAILED');
    assert.equal(error.job.status, 'failed');
    assert.ok(error.job.errorMessage && error.job.errorMessage.length > 0);
    assert.match(error.message, /ai-image-detection\) ended failed: .+/);
    assert.equal(error.jobId, error.job.jobId);
  });

  test('a job that cannot be processed ends failed with a clear message (JobFailedError)', async () => {
    // ISO-BMFF magic bytes pass the upload checks; the detector finds nothing to decode, so
    // the job itself fails.
    const notReallyVideo = new Uint8Array([0, 0, 0, 0x18, ...new TextEncoder().encode('ftypisom'), ...new Uint8Array(200)]);
    const error = await client
      .analyze(notReallyVideo, { taskType: 'faceswap-detection', fileName: 'clip.mp4', contentType: 'video/mp4', pollIntervalMs: 50 })
      .catch((e: unknown) => e);
    assert.ok(error instanceof JobFailedError, String(error));
    assert.ok(error.job.errorMessage && error.job.errorMessage.length > 10);
  });

  test('a voice note saved as .webm and a recorder\'s Blob typed audio/webm;codecs=opus go to an audio task as audio/webm', async () => {
    const note = join(dir, 'voice-note.webm');
    await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'sine=frequency=220:duration=2', '-c:a', 'libopus', note]);
    const fromPath = await client.analyze(note, { taskType: 'ai-audio-detection', pollIntervalMs: 50 });
    assert.equal(fromPath.status, 'completed');
    assert.equal(fromPath.inputs[0]!.contentType, 'audio/webm');
    const recorded = new Blob([new Uint8Array(readFileSync(note))], { type: 'audio/webm;codecs=opus' });
    const fromBlob = await client.analyze(recorded, { taskType: 'ai-audio-detection', pollIntervalMs: 50 });
    assert.equal(fromBlob.inputs[0]!.contentType, 'audio/webm');
    // A type the caller names is sent as named, and the service says what it takes.
    await assert.rejects(client.analyze(note, { taskType: 'ai-audio-detection', contentType: 'video/webm' }), UnsupportedMediaTypeError);
  });

  test('fitContentType: the bare type, or the same container\'s other name, when only that is accepted', () => {
    assert.equal(fitContentType('audio/webm;codecs=opus', ['audio/webm']), 'audio/webm');
    assert.equal(fitContentType('video/webm', ['audio/webm']), 'audio/webm');
    assert.equal(fitContentType('video/webm; codecs="vp8, opus"', ['video/webm', 'video/mp4']), 'video/webm');
    assert.equal(fitContentType('video/mp4', ['audio/mp4', 'audio/mpeg']), 'audio/mp4');
    assert.equal(fitContentType('video/webm', ['video/webm', 'audio/webm']), 'video/webm', 'kept when accepted as it is');
    assert.equal(fitContentType('image/gif', ['image/png']), 'image/gif', 'left for the service to refuse');
  });

  test('sniffContentType: MP3 frames and ID3 tags are audio/mpeg; an ADTS AAC stream, with the same sync, is not', () => {
    assert.equal(sniffContentType(Uint8Array.from([0xff, 0xfb, 0x90, 0x64])), 'audio/mpeg');
    assert.equal(sniffContentType(new TextEncoder().encode('ID3\x04\x00')), 'audio/mpeg');
    assert.equal(sniffContentType(Uint8Array.from([0xff, 0xf1, 0x50, 0x80])), undefined);
  });

  test('an iPhone HEIC or an AVIF photo is named as the image it is, and the service says it takes JPEG and PNG', async () => {
    const box = (brand: string) => Uint8Array.from([0, 0, 0, 24, ...new TextEncoder().encode(`ftyp${brand}`), 0, 0, 0, 0, ...new TextEncoder().encode('mif1heic')]);
    assert.equal(sniffContentType(box('heic')), 'image/heic');
    assert.equal(sniffContentType(box('avif')), 'image/avif');
    assert.equal(sniffContentType(box('mif1')), 'image/heif');
    assert.equal(sniffContentType(box('isom')), 'video/mp4');
    const photo = join(dir, 'IMG_0001.bin');
    writeFileSync(photo, box('heic'));
    await assert.rejects(client.analyze(photo, { taskType: 'image-forgery-detection' }), (error: Error) => /image\/heic is not supported by image-forgery-detection/.test(error.message));
  });

  test('an unsupported file is refused before anything is uploaded', async () => {
    await assert.rejects(client.analyze(new TextEncoder().encode('just text'), { taskType: 'ai-image-detection', fileName: 'notes.txt', contentType: 'text/plain' }), UnsupportedMediaTypeError);
  });

  test('an aborted analysis stops and cancels its job', async () => {
    const controller = new AbortController();
    let jobId: string | undefined;
    const error = await client
      .analyze(image, {
        taskType: 'ai-image-detection',
        signal: controller.signal,
        onProgress: (e) => {
          if (e.phase === 'uploading' && !jobId) {
            jobId = e.jobId;
            controller.abort();
          }
        },
      })
      .catch((e: unknown) => e);
    assert.ok(error instanceof APIUserAbortError, String(error));
    assert.ok(jobId);
    assert.equal((await client.jobs.retrieve(jobId)).status, 'cancelled');
  });
});
