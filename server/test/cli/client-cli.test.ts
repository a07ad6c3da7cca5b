/**
 * The end-user commands of `mediaproof` (analyze, jobs, task-types, completion), run as
 * their own processes against a real server: output, exit codes and credentials.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jpeg, runCli, startServer, type TestServer } from '../helpers.js';

describe('mediaproof client commands', () => {
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;
  let photo: string;
  let corrupt: string;

  before(async () => {
    server = await startServer();
    const { tenantId } = await server.tenant(100);
    dir = mkdtempSync(join(tmpdir(), 'mediaproof-cli-'));
    env = { MEDIAPROOF_URL: server.url, MEDIAPROOF_API_KEY: await server.apiKey(tenantId), MEDIAPROOF_CONFIG: join(dir, 'absent.json') };
    const image = await jpeg(320, 240);
    photo = join(dir, 'photo.jpg');
    writeFileSync(photo, image);
    corrupt = join(dir, 'broken.jpg');
    writeFileSync(corrupt, Buffer.concat([image.subarray(0, 40), Buffer.alloc(400, 7)]));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  });

  const EXIT_FOR = { authentic: 0, manipulated: 1, inconclusive: 2 } as Record<string, number>;

  test('analyze: verdict table, plain progress lines off a terminal, exit code from the verdict; --json agrees', async () => {
    const [text, json] = await Promise.all([
      runCli(['analyze', photo, '--task', 'ai-image-detection'], env),
      runCli(['analyze', photo, '--task', '1', '--json'], env),
    ]);
    const output = JSON.parse(json.stdout);
    assert.equal(output.taskType, 'ai-image-detection');
    const [only] = output.results;
    assert.equal(only.status, 'completed');
    assert.equal(only.file, photo);
    assert.ok(['authentic', 'manipulated', 'inconclusive'].includes(only.verdict));
    assert.equal(json.code, EXIT_FOR[only.verdict]);
    assert.equal(output.exitCode, json.code);
    assert.equal(typeof only.result.isAiGenerated, 'boolean');
    assert.equal(json.stderr, '', '--json prints no progress');

    // Same bytes, same detector: the text run reaches the same verdict and exit code.
    assert.equal(text.code, json.code, text.stderr);
    assert.match(text.stdout, /ai-image-detection/);
    assert.match(text.stdout, /photo\.jpg/);
    assert.match(text.stdout, new RegExp(`│ ${only.verdict}`));
    assert.match(text.stdout, /isAiGenerated=(true|false)/);
    assert.match(text.stderr, /photo\.jpg: uploading 100%/);
    assert.match(text.stderr, /photo\.jpg: completed/);

    // The job is real: the service has it with that verdict.
    const job = await fetch(`${server.url}/api/v1/jobs/${only.jobId}`, { headers: { authorization: `Bearer ${env.MEDIAPROOF_API_KEY}` } }).then((r) => r.json());
    assert.equal(job.result.verdict, only.verdict);
  });

  test('analyze: a job that fails exits 3 with its errorMessage; several files report each and the worst exit code wins; no verdict is success', async () => {
    const [failed, both, embedding] = await Promise.all([
      runCli(['analyze', corrupt, '--task', 'ai-image-detection'], env),
      runCli(['analyze', photo, corrupt, '--task', 'ai-image-detection', '--json'], env),
      runCli(['analyze', photo, '--task', 'face-embedding'], env),
    ]);
    // face-embedding returns faces, not a verdict: a completed job exits 0 and says completed.
    assert.equal(embedding.code, 0, embedding.stdout + embedding.stderr);
    assert.match(embedding.stdout, /photo\.jpg │ completed/);
    assert.equal(failed.code, 3, failed.stdout + failed.stderr);
    assert.match(failed.stderr, /JOB_FAILED: Job .+ ended failed: .+/);
    assert.match(failed.stdout, /broken\.jpg │ failed/);

    assert.equal(both.code, 3);
    const { results } = JSON.parse(both.stdout);
    assert.equal(results.length, 2);
    assert.equal(results[0].status, 'completed');
    assert.equal(results[1].status, 'failed');
    assert.equal(results[1].error.code, 'JOB_FAILED');
    assert.ok(results[1].jobId);
  });

  test('errors and credentials: bad key exits 3, none exits 4, the config file is read, usage errors exit 64', async () => {
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ url: env.MEDIAPROOF_URL, apiKey: env.MEDIAPROOF_API_KEY }));
    const noEnv = { MEDIAPROOF_URL: '', MEDIAPROOF_API_KEY: '' };
    const [badKey, noKey, fromFile, usage, missingFile] = await Promise.all([
      runCli(['jobs', 'list', '--json'], { ...env, MEDIAPROOF_API_KEY: 'api_wrong' }),
      runCli(['jobs', 'list'], { ...noEnv, MEDIAPROOF_CONFIG: join(dir, 'absent.json') }),
      runCli(['task-types', '--json'], { ...noEnv, MEDIAPROOF_CONFIG: config }),
      runCli(['jobs', 'list', '--limit', '500'], env),
      runCli(['analyze', join(dir, 'nothing.jpg'), '--task', 'ai-image-detection'], env),
    ]);
    assert.equal(badKey.code, 3);
    assert.equal(JSON.parse(badKey.stdout).error.code, 'INVALID_API_KEY');
    assert.equal(noKey.code, 4);
    assert.match(noKey.stderr, /MEDIAPROOF_API_KEY/);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.equal(JSON.parse(fromFile.stdout).data.length, 11);
    assert.equal(usage.code, 64);
    assert.match(usage.stderr, /--limit must be an integer from 1 to 100/);
    assert.equal(missingFile.code, 3);
    assert.match(missingFile.stderr, /nothing\.jpg: no such file/);
  });

  test('jobs list, get, cancel, delete', async () => {
    const api = (path: string, method = 'GET', body?: unknown) =>
      fetch(`${server.url}/api/v1${path}`, { method, headers: { authorization: `Bearer ${env.MEDIAPROOF_API_KEY}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined }).then((r) => r.json());
    const image = await jpeg();
    const created = await api('/jobs?taskTypeId=1', 'POST', { inputs: [{ slotName: 'original', fileName: 'x.jpg', contentType: 'image/jpeg', sizeBytes: image.byteLength }] });
    const id = created.jobId as string;
    const [table, get] = await Promise.all([
      runCli(['jobs', 'list', '--limit', '1', '--all'], env),
      runCli(['jobs', 'get', id], env),
    ]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, new RegExp(id));
    assert.ok((table.stdout.match(/completed|failed|waiting_for_finalize/g) ?? []).length >= 2, 'every page walked');
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /waiting_for_finalize/);
    assert.match(get.stdout, /x\.jpg \(image\/jpeg/);

    const cancel = await runCli(['jobs', 'cancel', id, '--json'], env);
    assert.equal(cancel.code, 0, cancel.stderr);
    assert.equal(JSON.parse(cancel.stdout).status, 'cancelled');
    const [again, removed] = await Promise.all([runCli(['jobs', 'cancel', id, '--json'], env), runCli(['jobs', 'delete', id], env)]);
    assert.ok(again.code === 3, again.stdout);
    assert.ok(['JOB_NOT_CANCELLABLE', 'JOB_NOT_FOUND'].includes(JSON.parse(again.stdout).error.code), 'cancelled twice (or already deleted)');
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, new RegExp(`${id}: deleted`));
    assert.equal((await api(`/jobs/${id}`)).code, 'JOB_NOT_FOUND');
  });

  test('--help everywhere, and bash completion that completes commands, options, task slugs and files', async () => {
    const helps = await Promise.all([[], ['analyze'], ['jobs', 'list']].map((args) => runCli([...args, '--help'], env)));
    for (const help of helps) assert.equal(help.code, 0, help.stderr);
    assert.match(helps[0]!.stdout, /analyze/);
    assert.match(helps[0]!.stdout, /MEDIAPROOF_API_KEY/);
    assert.match(helps[1]!.stdout, /--reference <file>/);
    assert.match(helps[2]!.stdout, /--status <status>/);

    const bash = await runCli(['completion', 'bash'], env);
    assert.equal(bash.code, 0);
    const script = join(dir, 'completion.bash');
    writeFileSync(script, bash.stdout);
    const complete = async (...words: string[]) => {
      const program = `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _mediaproof; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const { stdout } = await promisify(execFile)('bash', ['-c', program], { cwd: dir });
      return stdout.split('\n').filter(Boolean).sort();
    };
    assert.deepEqual(await complete('mediaproof', 'jobs', ''), ['cancel', 'delete', 'get', 'list', 'wait']);
    assert.ok((await complete('mediaproof', '')).includes('analyze'));
    assert.ok((await complete('mediaproof', '')).includes('tenant'), 'operator commands too');
    assert.deepEqual(await complete('mediaproof', 'analyze', '--task', 'ai-'), ['ai-audio-detection', 'ai-image-detection', 'ai-video-detection']);
    assert.ok((await complete('mediaproof', 'analyze', '--re')).includes('--reference'));
    assert.deepEqual(await complete('mediaproof', 'analyze', 'pho'), ['photo.jpg']);
    assert.deepEqual(await complete('mediaproof', 'jobs', 'list', '--status', 'comp'), ['completed']);
  });
});
