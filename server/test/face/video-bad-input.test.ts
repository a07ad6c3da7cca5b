/**
 * faceswap-detection and ekyc-deepfake on the awkward videos people really upload (issue 17),
 * through the job API: one frame, rotated by phone metadata, variable frame rate, a phone's 10-bit HEVC, 4K at 60 fps,
 * a truncated container and audio only under a video type. Each is a clear result or a failed
 * job with a clear message, and the worker still completes a normal clip afterwards.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg } from '../../src/detectors/media/ffmpeg.js';
import type { VerdictResult } from '../../src/detectors/result.js';
import { client, startServer, submit, type TestServer } from '../helpers.js';
import { clipWithStartOnlyParameterSets, ONE_FACE, scratchDir, stillClip } from './helpers.js';

const FACESWAP = 4;
const EKYC = 11;

let server: TestServer;
let api: ReturnType<typeof client>;
let dir: string;
let face: string;

before(async () => {
  server = await startServer();
  const { tenantId } = await server.tenant(2_000);
  api = client(server.url, await server.apiKey(tenantId));
  dir = await scratchDir();
  face = await stillClip(dir, ONE_FACE, 'face.mp4', 2);
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function analyse(taskTypeId: number, bytes: Uint8Array, contentType = 'video/mp4') {
  return api.waitFor(await submit(api, taskTypeId, bytes, contentType), undefined, 240_000);
}

async function variant(name: string, args: string[]): Promise<Buffer> {
  const path = join(dir, name);
  await runFfmpeg(['-y', ...args, path]);
  return readFile(path);
}

/** A completed job with a face found; its verdict may be any of the three, stated with a confidence. */
function assertFaceResult(job: { status: string; errorMessage?: string; result: VerdictResult & { analysisDetails: { faces: number } } }, label: string) {
  assert.equal(job.status, 'completed', `${label}: ${job.errorMessage}`);
  assert.ok(['authentic', 'manipulated', 'inconclusive'].includes(job.result.verdict), label);
  assert.ok(job.result.confidence >= 0 && job.result.confidence <= 1, label);
  assert.ok(job.result.analysisDetails.faces >= 1, `${label}: the face was not found`);
}

/** A failed job whose message says what was wrong and leaks no server path. */
function assertClearFailure(job: { status: string; errorMessage?: string }, pattern: RegExp, label: string) {
  assert.equal(job.status, 'failed', label);
  assert.match(job.errorMessage ?? '', pattern, label);
  assert.ok(!(job.errorMessage ?? '').includes(dir) && !(job.errorMessage ?? '').includes(server.dataDir), `${label}: ${job.errorMessage}`);
}

test('faceswap (and ekyc on one frame): one frame, phone rotation metadata and variable frame rate are analysed with the face found', async () => {
  const oneFrame = await variant('one-frame.mp4', ['-i', face, '-frames:v', '1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p']);
  assertFaceResult(await analyse(FACESWAP, oneFrame), 'one frame');
  // eKYC also reads pairs of consecutive frames for its sensor-noise cues: one frame has no pair.
  const oneFrameEkyc = await analyse(EKYC, oneFrame);
  assertFaceResult(oneFrameEkyc, 'one frame, ekyc');
  const correlation = oneFrameEkyc.result.analysisDetails.signals.find((s: { id: string }) => s.id === 'residual-correlation');
  assert.match(JSON.stringify(correlation?.evidence), /no pair of consecutive frames/);

  // A portrait phone clip: the pixels are stored sideways and the container says to turn them.
  await variant('sideways.mp4', ['-i', face, '-vf', 'transpose=2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p']);
  const rotated = await variant('rotated.mp4', ['-i', join(dir, 'sideways.mp4'), '-c', 'copy', '-metadata:s:v:0', 'rotate=90']);
  const rotatedJob = await analyse(FACESWAP, rotated);
  assertFaceResult(rotatedJob, 'rotated by metadata');
  // Sizes and boxes are in upright pixels: 640x452 as shown, not the stored 452x640.
  const media = rotatedJob.result.analysisDetails.media;
  assert.deepEqual([media.width, media.height], [640, 452]);
  for (const point of rotatedJob.result.analysisDetails.participants[0].track) {
    const [x, y, w, h] = point.box;
    assert.ok(x >= 0 && y >= 0 && x + w <= 640 + 1 && y + h <= 452 + 1, `box ${point.box} outside the upright frame`);
  }

  const vfr = await variant('vfr.mp4', ['-i', face, '-vf', "settb=1/1000,setpts='(N+0.4*sin(N))/5/TB'", '-vsync', 'vfr', '-c:v', 'libx264', '-pix_fmt', 'yuv420p']);
  assertFaceResult(await analyse(FACESWAP, vfr), 'variable frame rate');
});

test('faceswap: a clip cut by stream copy, whose second keyframe needs the parameter sets sent at its start, is read whole as one person', async () => {
  // Seeking into its second half decodes garbage (or nothing); before frames were read again
  // from earlier, such a clip failed, or its concealed frames looked like a second identity.
  // 8 s with a keyframe every 0.4 s: a seek per sampled time decodes less than one pass from the start, so the seeks run.
  const long = await stillClip(dir, ONE_FACE, 'face-8s.mp4', 8);
  const cut = await readFile(await clipWithStartOnlyParameterSets(dir, ['-i', long], 'cut.mp4', 0.4));
  const job = await analyse(FACESWAP, cut);
  assertFaceResult(job, 'cut by stream copy');
  const details = job.result.analysisDetails;
  // The samples after its first later keyframe (0.4 s), 15 of the 16, are read again from earlier.
  assert.ok(details.media.damagedSeeks?.readAgain >= 6, JSON.stringify(details.media));
  assert.equal(details.media.damagedSeeks.leftOut, 0);
  assert.ok(details.media.framesAnalysed >= 15, JSON.stringify(details.media));
  assert.equal(details.participants.length, 1);
  assert.ok(details.participants[0].identity.minCosine > 0.7, JSON.stringify(details.participants[0].identity));
  assert.notEqual(job.result.verdict, 'manipulated');
});

test('faceswap and ekyc: an iPhone-style 10-bit HEVC MOV and a 10-bit ProRes MOV are analysed, eKYC\'s consecutive frame pairs included', async () => {
  // Phones record 10-bit HEVC by default; eKYC's sensor-noise pairs were once read as 16-bit PPMs from such files and the job failed.
  const hevc = await variant('iphone.mov', ['-i', face, '-c:v', 'libx265', '-pix_fmt', 'yuv420p10le', '-tag:v', 'hvc1', '-x265-params', 'log-level=error']);
  const prores = await variant('prores.mov', ['-i', face, '-c:v', 'prores_ks', '-pix_fmt', 'yuv422p10le']);
  for (const [label, bytes] of [['10-bit HEVC', hevc], ['10-bit ProRes', prores]] as const) {
    assertFaceResult(await analyse(FACESWAP, bytes, 'video/quicktime'), label);
    const ekyc = await analyse(EKYC, bytes, 'video/quicktime');
    assertFaceResult(ekyc, `${label}, ekyc`);
    const correlation = ekyc.result.analysisDetails.signals.find((s: { id: string }) => s.id === 'residual-correlation');
    assert.ok(correlation?.evidence.pairs >= 1, `${label}: ${JSON.stringify(correlation?.evidence)}`);
  }
});

test('faceswap: a 4K clip at 60 fps is analysed from sampled frames', async () => {
  const uhd = await variant('uhd.mp4', ['-loop', '1', '-i', ONE_FACE, '-t', '1', '-r', '60', '-vf', 'scale=3840:2160:force_original_aspect_ratio=decrease,pad=3840:2160:(ow-iw)/2:(oh-ih)/2', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']);
  const job = await analyse(FACESWAP, uhd);
  assertFaceResult(job, '4K 60 fps');
});

test('faceswap and ekyc: a truncated container and audio only fail with a clear message; the worker then completes a normal clip', async () => {
  const whole = await readFile(face);
  const truncated = whole.subarray(0, Math.floor(whole.length / 3));
  const audioOnly = await variant('audio-only.mp4', ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'aac']);
  for (const taskTypeId of [FACESWAP, EKYC]) {
    assertClearFailure(await analyse(taskTypeId, truncated), /ffmpeg|moov|invalid|could not|truncat|corrupt/i, `truncated, task ${taskTypeId}`);
    assertClearFailure(await analyse(taskTypeId, audioOnly), /no video/i, `audio only, task ${taskTypeId}`);
  }
  assertFaceResult(await analyse(FACESWAP, whole), 'a normal clip after the bad ones');
  assertFaceResult(await analyse(EKYC, whole), 'a normal eKYC clip after the bad ones');
});
