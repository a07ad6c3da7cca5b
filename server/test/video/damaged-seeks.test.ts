/**
 * Frames sampled by seeking from a clip whose later keyframes do not decode on their own (clips
 * cut by stream copy): a fast seek there decodes concealed garbage, which faceswap-detection
 * once read as a second person in a real FaceForensics++ original. Such frames are read again
 * from earlier, or left out when they are damaged however they are reached.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { runFfmpeg } from '../../src/detectors/media/ffmpeg.js';
import { damagedSeeksReport, decodeAtTimes, sampleFrames, splitPngs, type FrameGrab } from '../../src/detectors/face/video-frames.js';
import { sampleFramePairs } from '../../src/detectors/video/frame-pairs.js';
import { clipWithStartOnlyParameterSets, noAbort, scratchDir } from '../face/helpers.js';

const SOURCE = ['-f', 'lavfi', '-i', 'testsrc2=s=320x240:r=25:d=6'];
let dir: string;
/** A keyframe at the start and at 3 s: one pass from the start decodes less than a seek per sampled time. */
let clip: string;
/** A keyframe every 0.4 s: a seek per sampled time decodes less, and every one after the first keyframe is damaged. */
let shortGops: string;

before(async () => {
  dir = await scratchDir();
  clip = await clipWithStartOnlyParameterSets(dir, SOURCE, 'start-only.mp4', 3);
  shortGops = await clipWithStartOnlyParameterSets(dir, SOURCE, 'short-gops.mp4', 0.4);
});
after(() => rm(dir, { recursive: true, force: true }));

/** Grey pixels of the frame at `time`, decoded from the start (ffmpeg's accurate output seek). */
async function decodedFromStart(path: string, time: number): Promise<Buffer> {
  const { stdout } = await runFfmpeg(['-i', path, '-ss', time.toFixed(3), '-frames:v', '1', '-f', 'image2pipe', '-vcodec', 'png', 'pipe:1']);
  return sharp(stdout).greyscale().raw().toBuffer();
}

test('the fixture: a fast seek past its second keyframe decodes damage or nothing, decoding from the start is clean', async () => {
  const seek = await runFfmpeg(['-ss', '4.5', '-i', clip, '-frames:v', '1', '-f', 'image2pipe', '-vcodec', 'png', 'pipe:1']).then(
    (run) => (/error while decoding|concealing|decode_slice_header error|non-existing PPS/.test(run.stderr) ? 'damaged' : 'clean'),
    () => 'ffmpeg gave up',
  );
  assert.notEqual(seek, 'clean');
  const whole = await runFfmpeg(['-i', clip, '-f', 'null', '-']);
  assert.doesNotMatch(whole.stderr, /error while decoding|concealing/);
});

test('sampled frames after a keyframe that does not decode on its own are read again from earlier and match the clip', async () => {
  const video = await sampleFrames(shortGops, 4, noAbort()); // at 0.75, 2.25, 3.75 and 5.25 s, each after a damaged keyframe
  assert.equal(video.frames.length, 4);
  assert.deepEqual(video.damagedSeeks, { readAgain: 4, leftOut: 0, analysedDamaged: 0 });
  for (const frame of video.frames) {
    const expected = await decodedFromStart(shortGops, frame.timeSeconds);
    const got = await sharp(Buffer.from(frame.data), { raw: { width: frame.width, height: frame.height, channels: 3 } }).greyscale().raw().toBuffer();
    let difference = 0;
    for (let i = 0; i < got.length; i++) difference += Math.abs(got[i]! - expected[i]!);
    assert.ok(difference / got.length < 2, `frame at ${frame.timeSeconds} s differs from the clip by ${(difference / got.length).toFixed(1)} grey levels`);
  }
  assert.match(damagedSeeksReport(video.damagedSeeks).damagedSeeks!.note, /4 read again/);
  const pairs = await sampleFramePairs(shortGops, 4, noAbort());
  assert.equal(pairs.pairs.length, 4);
  assert.equal(pairs.damagedSeeks.readAgain, 4);
});

test('damaged times read again in one pass give the frames each time read on its own gives, also when two times share a frame', async () => {
  const grab: FrameGrab = { frames: 1, filter: 'null', codec: 'png', maxOutputBytes: 1 << 24 };
  // 3.5 and 3.51 s fall in one frame (25 fps), so the one pass cannot tell their frames apart and each is read on its own.
  for (const times of [[3.5, 4.2, 5.9], [3.5, 3.51, 4.2]]) {
    const seeks = await decodeAtTimes(clip, times, grab, noAbort());
    for (const [i, seek] of seeks.entries()) {
      assert.ok(seek?.readAgain && !seek.damaged, `${times[i]} s: ${JSON.stringify(seek && { readAgain: seek.readAgain, damaged: seek.damaged })}`);
      const alone = await runFfmpeg(['-i', clip, '-ss', times[i]!.toFixed(3), '-frames:v', '1', '-an', '-vf', 'null', '-f', 'image2pipe', '-vcodec', 'png', 'pipe:1']);
      assert.ok(seek.output.equals(alone.stdout), `${times[i]} s differs from the frame read on its own`);
    }
  }
  const pngs = (await decodeAtTimes(clip, [1, 2], grab, noAbort())).map((seek) => seek!.output);
  assert.deepEqual(splitPngs(Buffer.concat([...pngs, Buffer.from('trailing')])).map((png) => png.length), pngs.map((png) => png.length));
});

test('a clip with few keyframes is sampled in one pass from the start: no seek, so nothing to read again, and each frame as decoded from the start', async () => {
  // Eight times over 6 s with keyframes at 0 and 3 s: the seeks would decode 11.7 s of video, one pass 5.6 s (and the
  // seeks past the second keyframe would be damaged and read again).
  const video = await sampleFrames(clip, 8, noAbort());
  assert.equal(video.frames.length, 8);
  assert.deepEqual(video.damagedSeeks, { readAgain: 0, leftOut: 0, analysedDamaged: 0 });
  for (const frame of video.frames) {
    const expected = await decodedFromStart(clip, frame.timeSeconds);
    const got = await sharp(Buffer.from(frame.data), { raw: { width: frame.width, height: frame.height, channels: 3 } }).greyscale().raw().toBuffer();
    assert.ok(got.equals(expected), `frame at ${frame.timeSeconds} s is not the first frame at or after it`);
  }
  const pairs = await sampleFramePairs(clip, 8, noAbort());
  assert.equal(pairs.pairs.length, 8);
  assert.ok(pairs.pairs.every((pair) => pair.second !== null));
  assert.deepEqual(pairs.damagedSeeks, { readAgain: 0, leftOut: 0, analysedDamaged: 0 });
});

test('a keyframe damaged however it is reached is left out, and a clean clip reports nothing', async () => {
  const damaged = await clipWithStartOnlyParameterSets(dir, SOURCE, 'damaged.mp4', 3, true);
  const video = await sampleFrames(damaged, 4, noAbort());
  assert.ok(video.damagedSeeks.leftOut >= 1, JSON.stringify(video.damagedSeeks));
  assert.equal(video.frames.length, 4 - video.damagedSeeks.leftOut);
  const clean = join(dir, 'clean.mp4');
  await runFfmpeg([...SOURCE, '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-g', '300', '-y', clean]);
  const sampled = await sampleFrames(clean, 4, noAbort());
  assert.deepEqual(sampled.damagedSeeks, { readAgain: 0, leftOut: 0, analysedDamaged: 0 });
  assert.deepEqual(damagedSeeksReport(sampled.damagedSeeks), {});

  // Damaged throughout (bytes of its only keyframe overwritten): nothing decodes cleanly, so the
  // frames are analysed as decoded rather than the job failing, and the report says so.
  const bytes = await readFile(clean);
  for (let i = bytes.indexOf('mdat', 0, 'latin1') + 1500, end = i + 400; i < end; i += 5) bytes[i] = 0x5a;
  const throughout = join(dir, 'damaged-throughout.mp4');
  await writeFile(throughout, bytes);
  const hurt = await sampleFrames(throughout, 4, noAbort());
  assert.equal(hurt.frames.length, 4);
  assert.deepEqual(hurt.damagedSeeks, { readAgain: 0, leftOut: 0, analysedDamaged: 4 });
  assert.match(damagedSeeksReport(hurt.damagedSeeks).damagedSeeks!.note, /4 analysed as decoded/);
});
