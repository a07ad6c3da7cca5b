/**
 * The built console against the real server in headless Chromium (playwright-core driving
 * Debian's /usr/bin/chromium): sign in, make a key (shown once), use it with the API, analyse
 * an image and see its heatmap, see the face boxes of a face-intelligence job, survive an
 * expired session with the page's state kept, revoke the key (the API answers 401), sign out
 * (the cookie no longer works). Screenshots of the main pages go to docs/screenshots.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import sharp from 'sharp';
import { Mediaproof } from '@mediaproof/sdk';
import { runFfmpeg } from '../../server/src/detectors/media/ffmpeg.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = join(ROOT, 'docs', 'screenshots');
const EMAIL = 'admin@example.com';
const PASSWORD = 'a long console password';
const run = promisify(execFile);

const skip = !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM} (apt-get install -y chromium; .ci/run does)` : false;

let server: ChildProcess | null = null;
let browser: Browser | null = null;
let baseUrl = '';
let env: Record<string, string> = {};
let dataDir = '';
let serverLog = '';

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

/** The operator CLI of DESIGN.md §7, as an operator would run it. */
async function cli(...args: string[]): Promise<Record<string, string>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'server/src/main.ts', ...args, '--json'], { cwd: ROOT, env: { ...process.env, ...env } });
  return JSON.parse(stdout) as Record<string, string>;
}

/** A photo-like JPEG with a pasted-in square that was compressed differently (a splice). */
async function splicedJpeg(): Promise<Buffer> {
  const width = 320;
  const height = 240;
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      pixels[i] = (x * 255) / width;
      pixels[i + 1] = (y * 255) / height;
      pixels[i + 2] = 128 + 60 * Math.sin(x / 9) * Math.cos(y / 7);
    }
  }
  const base = await sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
  const patch = await sharp(base).extract({ left: 20, top: 20, width: 96, height: 96 }).jpeg({ quality: 40 }).toBuffer();
  return sharp(base).composite([{ input: patch, left: 180, top: 110 }]).jpeg({ quality: 90 }).toBuffer();
}

/** 16-bit PCM WAV bytes of mono samples. */
function wav(samples: Float32Array, sampleRate: number): Uint8Array {
  const bytes = Buffer.alloc(44 + samples.length * 2);
  bytes.write('RIFF', 0);
  bytes.writeUInt32LE(36 + samples.length * 2, 4);
  bytes.write('WAVEfmt ', 8);
  bytes.writeUInt32LE(16, 16);
  bytes.writeUInt16LE(1, 20);
  bytes.writeUInt16LE(1, 22);
  bytes.writeUInt32LE(sampleRate, 24);
  bytes.writeUInt32LE(sampleRate * 2, 28);
  bytes.writeUInt16LE(2, 32);
  bytes.writeUInt16LE(16, 34);
  bytes.write('data', 36);
  bytes.writeUInt32LE(samples.length * 2, 40);
  samples.forEach((value, i) => bytes.writeInt16LE(Math.round(Math.max(-1, Math.min(1, value)) * 32767), 44 + i * 2));
  return new Uint8Array(bytes);
}

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** A link of the main navigation (pages have their own links with the same names). */
const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

before(async () => {
  if (skip) return;
  // The console the server serves is the built one (the root `prepare` builds it on install).
  if (!existsSync(join(ROOT, 'console', 'dist', 'index.html'))) await run('npm', ['run', '-s', 'build', '--workspace', 'console'], { cwd: ROOT });
  dataDir = mkdtempSync(join(tmpdir(), 'mediaproof-console-e2e-'));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), WORKER_CONCURRENCY: '1', POLL_INTERVAL_MS: '100', LOG_LEVEL: 'warn' };
  const { tenantId } = await cli('tenant', 'create', '--name', 'Acme onboarding', '--credits', '200');
  await cli('user', 'create', '--tenant', tenantId!, '--email', EMAIL, '--password', PASSWORD, '--role', 'admin');
  server = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts', 'serve'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  // The server's warnings and errors, printed if the test fails.
  server.stderr!.on('data', (chunk: Buffer) => (serverLog += chunk.toString()));
  for (let i = 0; ; i++) {
    const ready = await fetch(`${baseUrl}/healthz`).then((r) => r.ok, () => false);
    if (ready) break;
    if (i > 600) throw new Error('the server did not start within 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
});

after(async () => {
  if (process.exitCode && serverLog) console.error(`server log:\n${serverLog.slice(-4000)}`);
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server!.once('exit', r));
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('a person signs in, makes a key, analyses files, sees the evidence, revokes the key and signs out', { skip, timeout: 300_000 }, async () => {
  const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));

  // Sign-in: a wrong password and an unknown email read the same.
  await page.goto(baseUrl);
  await shot(page, 'sign-in');
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'The email or password is wrong' }).waitFor();
  await page.getByLabel('Email').fill('nobody@example.com');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'The email or password is wrong' }).waitFor();
  await signIn(page);
  await page.getByRole('heading', { name: 'Jobs' }).waitFor();
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === 'mediaproof_session');
  assert.ok(session?.httpOnly, 'the session cookie is HttpOnly');
  assert.equal(session?.sameSite, 'Strict');
  assert.equal(await page.evaluate(() => document.cookie), '', 'no script can read the session');

  // Settings → API Keys: the value is shown once, then only its prefix.
  await nav(page, 'Settings').click();
  await page.getByLabel('Name').fill('onboarding backend');
  await page.getByRole('button', { name: 'Create key' }).click();
  const key = (await page.getByTestId('secret-value').textContent())!;
  assert.match(key, /^api_[0-9A-Za-z]{43}$/);
  await shot(page, 'settings-api-keys');
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('cell', { name: `${key.slice(0, 10)}…` }).waitFor();
  assert.equal((await page.content()).includes(key), false, 'the key is not on the page any more');
  assert.equal(await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })).then((s) => s.includes('api_')), false, 'no key in browser storage');

  // The key works with the API.
  const api = new Mediaproof({ baseUrl, apiKey: key });
  assert.ok(Array.isArray((await api.jobs.list()).data));

  // Analyze: an image through the console's upload, then its heatmap drawn over it.
  await nav(page, 'Analyze').click();
  await page.getByTestId('file-input').setInputFiles({ name: 'spliced.jpg', mimeType: 'image/jpeg', buffer: await splicedJpeg() });
  await page.getByRole('radio', { name: /image-forgery-detection/ }).check();
  assert.equal(await page.getByRole('radio', { name: /ai-video-detection/ }).count(), 0, 'task types that do not take JPEG are not offered');
  await page.getByRole('button', { name: 'Upload and analyze' }).click();
  await page.getByRole('link', { name: 'Open the result →' }).click({ timeout: 120_000 });
  await page.getByRole('heading', { name: 'Result' }).waitFor();
  await page.waitForFunction(() => {
    const image = document.querySelector<HTMLImageElement>('[data-testid=heatmap-image]');
    return image !== null && image.complete && image.naturalWidth === 320;
  });
  await page.getByLabel('Opacity').fill('0.8');
  // The heatmap is painted over the image: a canvas the image's size, coloured where the heat is.
  await page.waitForFunction(() => (document.querySelector('[data-testid=heatmap-overlay]') as HTMLCanvasElement).width === 320);
  const overlay = await page.getByTestId('heatmap-overlay').evaluate((layer) => {
    const canvas = layer as HTMLCanvasElement;
    const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 64) painted++;
    return { opacity: getComputedStyle(canvas).opacity, paintedShare: painted / (canvas.width * canvas.height), shownWidth: canvas.getBoundingClientRect().width };
  });
  assert.equal(overlay.opacity, '0.8');
  assert.ok(overlay.paintedShare > 0.01 && overlay.paintedShare < 0.9, `painted share ${overlay.paintedShare}`);
  assert.ok(overlay.shownWidth > 300, 'laid over the whole image');
  await page.getByRole('heading', { name: 'Signals' }).waitFor();
  await shot(page, 'job-heatmap');

  // A phone photo stored sideways (EXIF orientation 6): the image is drawn as stored, under its heatmap, and says so.
  const sideways = await sharp(await splicedJpeg()).withMetadata({ orientation: 6 }).toBuffer();
  const sidewaysJob = await api.analyze(sideways, { taskType: 'image-forgery-detection', fileName: 'sideways.jpg' });
  await page.goto(`${baseUrl}/jobs/${sidewaysJob.jobId}`);
  await page.getByTestId('stored-orientation').waitFor();
  await page.waitForFunction(() => (document.querySelector('[data-testid=heatmap-overlay]') as HTMLCanvasElement).width === 320);
  const drawn = await page.getByTestId('heatmap-base').evaluate((img) => {
    const image = img.getBoundingClientRect(), heat = document.querySelector('[data-testid=heatmap-overlay]')!.getBoundingClientRect();
    return { imageAspect: image.width / image.height, heatAspect: heat.width / heat.height };
  });
  assert.ok(Math.abs(drawn.imageAspect - 320 / 240) < 0.02, `the image is drawn as stored, 320x240 (aspect ${drawn.imageAspect})`);
  assert.ok(Math.abs(drawn.heatAspect - drawn.imageAspect) < 0.02, 'the heatmap covers the image exactly');

  // A face-intelligence job (made with the key, as an integration would) shows its face boxes.
  const require = createRequire(join(ROOT, 'server', 'package.json'));
  const face = join(dirname(require.resolve('@vladmandic/human')), '..', 'assets', 'screenshot-faceid.jpg');
  const faceJob = await api.analyze(face, { taskType: 'face-intelligence' });
  await page.goto(`${baseUrl}/jobs/${faceJob.jobId}`);
  await page.getByTestId('face-box').first().waitFor();
  assert.equal(await page.getByTestId('face-box').count(), (faceJob.result as { faces: unknown[] }).faces.length);
  await shot(page, 'job-faces');

  // An audio-splitter job: a player and a waveform (peaks from the server) for the input and each track.
  const speechLike = new Float32Array(16_000 * 3);
  for (let i = 0; i < speechLike.length; i++) speechLike[i] = 0.4 * Math.sin((2 * Math.PI * 220 * i) / 16_000) * (0.5 + 0.5 * Math.sin((2 * Math.PI * 3 * i) / 16_000)) + 0.05 * (Math.random() - 0.5);
  const audioJob = await api.analyze(wav(speechLike, 16_000), { taskType: 'audio-splitter', fileName: 'voice.wav' });
  await page.goto(`${baseUrl}/jobs/${audioJob.jobId}`);
  await page.getByRole('heading', { name: 'Audio', exact: true }).waitFor();
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=waveform]')].filter((box) => box.firstElementChild?.shadowRoot?.querySelector('canvas')).length === 3);
  assert.equal(await page.getByRole('button', { name: /^Play / }).count(), 3);
  await shot(page, 'job-audio');

  // A voice note saved as .webm, which Chrome types video/webm: the Analyze page offers the audio tasks and declares it audio/webm.
  const scratch = mkdtempSync(join(tmpdir(), 'mediaproof-console-note-'));
  const notePath = join(scratch, 'voice-note.webm');
  await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'sine=frequency=220:duration=2', '-c:a', 'libopus', notePath]);
  const note = readFileSync(notePath);
  rmSync(scratch, { recursive: true, force: true });
  await nav(page, 'Analyze').click();
  await page.getByTestId('file-input').setInputFiles({ name: 'voice-note.webm', mimeType: 'video/webm', buffer: note });
  await page.getByRole('radio', { name: /ai-audio-detection/ }).check();
  await page.getByRole('button', { name: 'Upload and analyze' }).click();
  await page.getByRole('link', { name: 'Open the result →' }).click({ timeout: 120_000 });
  await page.getByRole('heading', { name: 'Result' }).waitFor();
  const noteJob = await api.jobs.retrieve(new URL(page.url()).pathname.split('/').at(-1)!);
  assert.equal(noteJob.status, 'completed', noteJob.errorMessage ?? '');
  assert.equal(noteJob.inputs[0]!.contentType, 'audio/webm');

  // Jobs and credits.
  await nav(page, 'Jobs').click();
  await page.getByRole('cell', { name: 'face-intelligence' }).waitFor();
  await shot(page, 'jobs');
  await nav(page, 'Credits').click();
  await page.getByTestId('balance').waitFor();
  const balance = Number(await page.getByTestId('balance').textContent());
  assert.ok(balance < 200, `two jobs were charged from the shared balance (${balance})`);
  await page.getByRole('cell', { name: 'image-forgery-detection' }).first().waitFor();
  await shot(page, 'credits');

  // An expired session: back to sign-in over the page, whose state (a chosen file) is kept.
  await nav(page, 'Analyze').click();
  await page.getByTestId('file-input').setInputFiles({ name: 'second.jpg', mimeType: 'image/jpeg', buffer: await splicedJpeg() });
  await page.getByRole('radio', { name: /image-forgery-detection/ }).check();
  const expired = await fetch(`${baseUrl}/console/api/session`, { method: 'DELETE', headers: { cookie: `mediaproof_session=${session!.value}`, 'x-mediaproof-console': '1' } });
  assert.equal(expired.status, 204);
  await page.getByRole('button', { name: 'Upload and analyze' }).click();
  await page.getByText('Your session has ended').waitFor();
  await signIn(page);
  await page.getByText('second.jpg').waitFor();
  assert.equal(await page.getByRole('radio', { name: /image-forgery-detection/ }).isChecked(), true, 'the choice survived signing in again');

  // Revoke the key: the API answers 401 at once.
  await nav(page, 'Settings').click();
  await page.getByRole('button', { name: 'Revoke key onboarding backend' }).click();
  await page.getByRole('button', { name: 'Confirm revoke' }).click();
  await page.getByText(/^revoked /).waitFor();
  const revoked = await fetch(`${baseUrl}/api/v1/jobs`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(revoked.status, 401);

  // Sign out: the session cookie no longer works.
  const current = (await context.cookies()).find((c) => c.name === 'mediaproof_session')!;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  const afterSignOut = await fetch(`${baseUrl}/console/api/session`, { headers: { cookie: `mediaproof_session=${current.value}`, 'x-mediaproof-console': '1' } });
  assert.equal(afterSignOut.status, 401);

  // Dark theme and a phone-sized screen.
  await signIn(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('button', { name: 'Switch to dark theme' }).click();
  await page.goto(`${baseUrl}/jobs/${faceJob.jobId}`);
  await page.getByTestId('face-box').first().waitFor();
  await shot(page, 'job-faces-dark-phone');

  assert.deepEqual(pageErrors, [], 'no errors in the page');
  await context.close();
});
