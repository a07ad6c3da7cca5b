import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runFfmpeg } from '../../src/detectors/media/ffmpeg.js';
import { frameTiming, inputMetadata, readCaptureSigns } from '../../src/detectors/face/capture-signs.js';
import { estimatePulse } from '../../src/detectors/face/rppg.js';
import { noAbort, scratchDir } from './helpers.js';

const WIDTH = 160, HEIGHT = 120, FPS = 30;
const FACE: [number, number, number, number] = [40, 20, 80, 80];

/**
 * A camera-like clip: a skin-coloured face patch on a grey wall with sensor noise; with
 * `pulseHz`, the patch's colour follows a blood-volume pulse (green dips most, as in skin).
 */
async function skinClip(dir: string, name: string, seconds: number, pulseHz: number | null, extra: string[] = []): Promise<string> {
  const frames = seconds * FPS;
  const raw = Buffer.alloc(frames * WIDTH * HEIGHT * 3);
  let seed = 7;
  const noise = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff - 0.5) * 4;
  for (let f = 0; f < frames; f++) {
    const pulse = pulseHz ? Math.sin((2 * Math.PI * pulseHz * f) / FPS) : 0;
    for (let y = 0; y < HEIGHT; y++) {
      for (let x = 0; x < WIDTH; x++) {
        const i = ((f * HEIGHT + y) * WIDTH + x) * 3;
        const inFace = x >= FACE[0] && x < FACE[0] + FACE[2] && y >= FACE[1] && y < FACE[1] + FACE[3];
        const [r, g, b] = inFace ? [200 + 0.6 * pulse, 150 + 1.6 * pulse, 120 + 0.4 * pulse] : [128, 128, 128];
        raw[i] = Math.round(r + noise());
        raw[i + 1] = Math.round(g + noise());
        raw[i + 2] = Math.round(b + noise());
      }
    }
  }
  const path = join(dir, name);
  await runFfmpeg(
    ['-y', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${WIDTH}x${HEIGHT}`, '-r', String(FPS), '-i', 'pipe:0', '-c:v', 'libx264', '-crf', '12', '-pix_fmt', 'yuv444p', ...extra, path],
    { stdin: raw },
  );
  return path;
}

test('rPPG (POS): a 72 bpm pulse in the skin is found with a clear SNR; the same clip without it has none', async () => {
  const dir = await scratchDir();
  const video = { width: WIDTH, height: HEIGHT, durationSeconds: 10 };
  const withPulse = await estimatePulse(await skinClip(dir, 'pulse.mp4', 10, 1.2), FACE, video, noAbort());
  const without = await estimatePulse(await skinClip(dir, 'still.mp4', 10, null), FACE, video, noAbort());
  assert.ok(withPulse && without);
  assert.ok(Math.abs(withPulse.bpm - 72) <= 3, `pulse read at ${withPulse.bpm} bpm`);
  assert.equal(withPulse.quality, 'clear');
  assert.ok(withPulse.snrDb > without.snrDb + 6, `SNR ${withPulse.snrDb} dB with a pulse, ${without.snrDb} dB without`);
  assert.notEqual(without.quality, 'clear');
  assert.equal(await estimatePulse(join(dir, 'pulse.mp4'), FACE, { ...video, durationSeconds: 3 }, noAbort()), null, 'under 5 s there is no pulse spectrum');
});

test('capture signs: a virtual camera named in the stream metadata, the x264 banner, constant frame timing', async () => {
  const dir = await scratchDir();
  const injected = await skinClip(dir, 'obs.mp4', 2, null, ['-metadata:s:v', 'handler_name=OBS Virtual Camera']);
  const signs = await readCaptureSigns(injected, noAbort());
  assert.deepEqual(signs.injectionTools, ['OBS Studio', 'a virtual camera']);
  assert.match(signs.softwareEncoder ?? '', /^x264 - core \d+/);
  assert.ok(signs.editingTools.some((tool) => /FFmpeg/.test(tool)));
  assert.equal(signs.frameTiming!.frames, 60);
  assert.equal(signs.frameTiming!.constant, true);
  assert.ok(Math.abs(signs.frameTiming!.meanIntervalMs - 1000 / FPS) < 0.1);

  const plain = await readCaptureSigns(await skinClip(dir, 'plain.mp4', 2, null), noAbort());
  assert.deepEqual(plain.injectionTools, []);

  // Variable frame timing, as a phone writes it: frames at jittered times.
  const vfr = join(dir, 'vfr.mp4');
  await runFfmpeg(['-y', '-i', injected, '-vf', "settb=1/1000,setpts='(N+0.3*sin(N))/30/TB'", '-vsync', 'vfr', '-r', '1000', '-c:v', 'libx264', vfr]);
  const timing = await frameTiming(vfr, noAbort());
  assert.equal(timing!.constant, false);
  assert.ok(timing!.intervalCv > 0.05, `interval CV ${timing!.intervalCv}`);
});

test('only the input section of the ffmpeg report is read for metadata', () => {
  const report = 'Input #0, mov\n  Metadata:\n    encoder         : ManyCam 7\n  Duration: 00:00:02.00\nStream mapping:\nOutput #0, null\n  Metadata:\n    encoder         : Lavf58\n';
  assert.deepEqual(inputMetadata(report), ['encoder: ManyCam 7']);
});
