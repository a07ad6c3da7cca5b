/**
 * The SDK as a user installs it: `npm pack` builds JavaScript with type declarations, the
 * tarball installs into a directory outside the repository, and the quick start runs there in
 * plain Node (no TypeScript loader) against a real server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { jpeg, startServer } from './setup.js';

const run = promisify(execFile);
const SDK_DIR = resolve(import.meta.dirname, '..');

test('npm pack gives a package that installs elsewhere and runs the quick start in plain node', { timeout: 180_000 }, async () => {
  const outside = await mkdtemp(join(tmpdir(), 'mediaproof-sdk-user-'));
  const server = await startServer();
  try {
    const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', outside], { cwd: SDK_DIR });
    const tarball = stdout.trim().split('\n').at(-1)!;
    assert.match(tarball, /^mediaproof-sdk-\d+\.\d+\.\d+\.tgz$/);
    const { stdout: listing } = await run('tar', ['-tzf', join(outside, tarball)]);
    assert.ok(listing.includes('package/dist/index.js') && listing.includes('package/dist/index.d.ts'), listing);
    assert.ok(!listing.includes('package/src/'), 'sources are not shipped, the build is');

    await writeFile(join(outside, 'package.json'), JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', `./${tarball}`], { cwd: outside });
    assert.ok((await readdir(join(outside, 'node_modules', '@mediaproof', 'sdk', 'dist'))).includes('index.js'));

    const { tenantId } = await server.tenant(10);
    const apiKey = await server.apiKey(tenantId);
    await writeFile(join(outside, 'photo.jpg'), await jpeg(96, 64));
    await writeFile(
      join(outside, 'quickstart.mjs'),
      `import { Mediaproof } from '@mediaproof/sdk';
const client = new Mediaproof({ apiKey: process.env.MEDIAPROOF_API_KEY, baseUrl: process.env.MEDIAPROOF_URL });
const job = await client.analyze('./photo.jpg', { taskType: 'ai-image-detection' });
console.log(JSON.stringify({ status: job.status, verdict: job.result.verdict }));
`,
    );
    const { stdout: output } = await run(process.execPath, ['quickstart.mjs'], { cwd: outside, env: { ...process.env, MEDIAPROOF_API_KEY: apiKey, MEDIAPROOF_URL: server.url } });
    const printed = JSON.parse(output.trim()) as { status: string; verdict: string };
    assert.equal(printed.status, 'completed');
    assert.ok(['authentic', 'manipulated', 'inconclusive'].includes(printed.verdict));
  } finally {
    await server.close();
    await rm(outside, { recursive: true, force: true });
  }
});
