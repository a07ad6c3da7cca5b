/** Every resource method of the SDK against a real server, and every error class it maps. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Mediaproof, ForbiddenError, InsufficientBalanceError, InvalidApiKeyError, InvalidTaskTypeError, JobAlreadyFinalizedError,
  JobNotCancellableError, JobNotFoundError, MediaproofError, UnsupportedMediaTypeError, UploadIncompleteError,
  UploadUrlInvalidError, ValidationError, FileTooLargeError, APIError, type JobSummary,
} from '../src/index.js';
import { jpeg, startServer, type TestServer } from './setup.js';

describe('jobs resource', () => {
  let server: TestServer;
  let client: Mediaproof;
  let tenantId: string;
  let image: Buffer;

  before(async () => {
    server = await startServer();
    ({ tenantId } = await server.tenant(1000));
    client = new Mediaproof({ apiKey: await server.apiKey(tenantId), baseUrl: server.url, maxRetries: 0 });
    image = await jpeg();
  });
  after(() => server.close());

  const declared = (bytes: Uint8Array, contentType = 'image/jpeg') => [{ slotName: 'original', fileName: 'photo.jpg', sizeBytes: bytes.byteLength, contentType }];

  test('create → upload → finalize → waitFor → retrieve, by slug and by id', async () => {
    const created = await client.jobs.create({ taskType: 'ai-image-detection', inputs: declared(image) });
    assert.equal(created.status, 'waiting_for_finalize');
    assert.equal(created.taskTypeId, 1);
    assert.equal(created.id, created.jobId);
    assert.equal(created.job.cost, 1);
    const progress: number[] = [];
    await client.jobs.upload(created.inputs[0]!, image, { onProgress: (p) => progress.push(p.sentBytes) });
    assert.equal(progress.at(-1), image.byteLength);
    const finalized = await client.jobs.finalize(created.jobId);
    assert.ok(['queued', 'processing'].includes(finalized.status));
    assert.equal(typeof finalized.message, 'string');
    const polled: string[] = [];
    const done = await client.jobs.waitFor(created.jobId, { intervalMs: 50, onPoll: (job) => polled.push(job.status) });
    assert.equal(done.status, 'completed', done.errorMessage);
    assert.equal(polled.at(-1), 'completed');
    assert.equal(done.taskTypeSlug, 'ai-image-detection');
    assert.equal(typeof done.result?.isAiGenerated, 'boolean');
    const again = await client.jobs.retrieve(created.jobId);
    assert.deepEqual(again.result, done.result);
    assert.deepEqual(again.inputs, declared(image));

    const byId = await client.jobs.create({ taskType: 1, inputs: declared(image) });
    assert.equal(byId.taskTypeId, 1);
    await client.jobs.delete(byId.jobId);
  });

  test('list: one page, status filter, and async iteration over every page', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.jobs.create({ taskType: 1, inputs: declared(image) })).jobId);
    const page = await client.jobs.list({ limit: 2, status: 'waiting_for_finalize' });
    assert.equal(page.data.length, 2);
    assert.equal(page.pagination.limit, 2);
    assert.ok(page.pagination.total >= 5);
    assert.ok(page.hasNextPage());
    const second = await page.getNextPage();
    assert.equal(second.pagination.page, 2);
    assert.notDeepEqual(second.data.map((j) => j.jobId), page.data.map((j) => j.jobId));

    const walked: JobSummary[] = [];
    for await (const job of client.jobs.list({ limit: 2, status: 'waiting_for_finalize' })) walked.push(job);
    assert.equal(walked.length, page.pagination.total);
    assert.equal(new Set(walked.map((j) => j.jobId)).size, walked.length, 'no job twice');
    for (const id of ids) assert.ok(walked.some((j) => j.jobId === id), `job ${id} listed`);
    assert.ok(walked.every((j) => j.status === 'waiting_for_finalize'));
  });

  test('cancel, then cancel again is JobNotCancellableError (422); delete removes the job', async () => {
    const created = await client.jobs.create({ taskType: 1, inputs: declared(image) });
    const cancelled = await client.jobs.cancel(created.jobId);
    assert.equal(cancelled.status, 'cancelled');
    const again = await client.jobs.cancel(created.jobId).catch((e: unknown) => e);
    assert.ok(again instanceof JobNotCancellableError);
    assert.equal(again.statusCode, 422);
    assert.equal(again.code, 'JOB_NOT_CANCELLABLE');
    assert.equal(again.jobId, created.jobId);
    await client.jobs.delete(created.jobId);
    const gone = await client.jobs.retrieve(created.jobId).catch((e: unknown) => e);
    assert.ok(gone instanceof JobNotFoundError);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.jobId, created.jobId);
  });

  test('cancel of a completed job is JobNotCancellableError (409)', async () => {
    const done = await client.analyze(image, { taskType: 'ai-image-detection', pollIntervalMs: 50 });
    const error = await client.jobs.cancel(done.jobId).catch((e: unknown) => e);
    assert.ok(error instanceof JobNotCancellableError);
    assert.equal(error.statusCode, 409);
  });

  test('taskTypes: list and retrieve by slug or id; an unknown slug is InvalidTaskTypeError', async () => {
    const all = await client.taskTypes.list();
    assert.equal(all.length, 11);
    const first = all.find((t) => t.id === 1)!;
    assert.equal(first.slug, 'ai-image-detection');
    assert.equal(first.available, true);
    assert.deepEqual(first.formats, ['JPEG', 'PNG']);
    assert.equal((await client.taskTypes.retrieve('face-embedding')).id, 9);
    assert.equal((await client.taskTypes.retrieve(9)).slug, 'face-embedding');
    await assert.rejects(client.taskTypes.retrieve('no-such-task'), InvalidTaskTypeError);
    await assert.rejects(client.jobs.create({ taskType: 'no-such-task', inputs: declared(image) }), InvalidTaskTypeError);
  });

  test('error classes carry code, statusCode, message and jobId', async () => {
    const expectError = async <E extends MediaproofError>(promise: Promise<unknown>, ErrorClass: abstract new (...args: never[]) => E, code: string, status: number) => {
      const error = await promise.then(() => assert.fail(`expected ${code}`), (e: unknown) => e);
      assert.ok(error instanceof ErrorClass, `${String(error)} is a ${ErrorClass.name}`);
      assert.ok(error instanceof APIError);
      assert.equal(error.code, code);
      assert.equal(error.statusCode, status);
      assert.ok(error.message.length > 0);
      return error;
    };
    const bad = new Mediaproof({ apiKey: 'api_wrong', baseUrl: server.url, maxRetries: 0 });
    await expectError(bad.jobs.list(), InvalidApiKeyError, 'INVALID_API_KEY', 401);
    const readOnly = new Mediaproof({ apiKey: await server.apiKey(tenantId, ['jobs:read']), baseUrl: server.url, maxRetries: 0 });
    await expectError(readOnly.jobs.create({ taskType: 1, inputs: declared(image) }), ForbiddenError, 'FORBIDDEN', 403);
    await expectError(client.jobs.create({ taskType: 99, inputs: declared(image) }), InvalidTaskTypeError, 'INVALID_TASK_TYPE', 400);
    await expectError(client.jobs.create({ taskType: 1, inputs: declared(image, 'text/plain') }), UnsupportedMediaTypeError, 'UNSUPPORTED_MEDIA_TYPE', 400);
    await expectError(client.jobs.create({ taskType: 1, inputs: [{ ...declared(image)[0]!, slotName: 'nope' }] }), ValidationError, 'VALIDATION_ERROR', 400);
    await expectError(client.jobs.create({ taskType: 1, inputs: [{ ...declared(image)[0]!, sizeBytes: 2 ** 40 }] }), FileTooLargeError, 'FILE_TOO_LARGE', 413);
    const notFound = await expectError(client.jobs.retrieve('nope'), JobNotFoundError, 'JOB_NOT_FOUND', 404);
    assert.equal(notFound.jobId, 'nope');

    const created = await client.jobs.create({ taskType: 1, inputs: declared(image) });
    await expectError(client.jobs.finalize(created.jobId), UploadIncompleteError, 'UPLOAD_INCOMPLETE', 400);
    await client.jobs.upload(created.inputs[0]!, image);
    await expectError(client.jobs.upload(created.inputs[0]!.uploadUrl, image, { contentType: 'image/jpeg' }), UploadUrlInvalidError, 'UPLOAD_URL_INVALID', 403);
    await client.jobs.finalize(created.jobId);
    await expectError(client.jobs.finalize(created.jobId), JobAlreadyFinalizedError, 'JOB_ALREADY_FINALIZED', 400);

    const poor = await server.tenant(0);
    const poorClient = new Mediaproof({ apiKey: await server.apiKey(poor.tenantId), baseUrl: server.url, maxRetries: 0 });
    const job = await poorClient.jobs.create({ taskType: 1, inputs: declared(image) });
    await poorClient.jobs.upload(job.inputs[0]!, image);
    const balance = await expectError(poorClient.jobs.finalize(job.jobId), InsufficientBalanceError, 'INSUFFICIENT_BALANCE', 402);
    assert.equal(balance.jobId, job.jobId);
    assert.equal((await poorClient.jobs.retrieve(job.jobId)).status, 'waiting_for_finalize');
  });

  test('no API key fails before any request, with a clear message', async () => {
    const anonymous = new Mediaproof({ apiKey: '', baseUrl: server.url });
    const error = await anonymous.jobs.list().then(() => null, (e: unknown) => e);
    assert.ok(error instanceof MediaproofError);
    assert.equal(error.code, 'MISSING_API_KEY');
  });

  test('waitFor on a job waiting for finalize says so instead of polling forever', async () => {
    const created = await client.jobs.create({ taskType: 1, inputs: declared(image) });
    const error = await client.jobs.waitFor(created.jobId).catch((e: unknown) => e);
    assert.ok(error instanceof MediaproofError);
    assert.equal(error.code, 'JOB_NOT_FINALIZED');
  });
});
