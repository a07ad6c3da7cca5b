/**
 * `node --import tsx bench/ai-video.ts [--seconds 60] [--frames 12] [--runs 2]`
 *
 * Seconds of analysis per minute of 720p video for ai-video-detection, on a generated clip
 * (moving test pattern with temporal noise, H.264, 30 fps). In the same run: the frame
 * sampling alone (the ffmpeg seeks and decodes any video analysis pays) and the whole
 * detector (provenance, C2PA, frames, cues), with wall time and CPU seconds of this process
 * and its ffmpeg children.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import aiVideo from '../server/src/detectors/video/ai-video.js';
import { sampleFramePairs } from '../server/src/detectors/video/frame-pairs.js';
import { runFfmpeg } from '../server/src/detectors/media/ffmpeg.js';
import { numberOption, timeRuns } from './measure.js';

const seconds = numberOption('seconds', 60);
const frames = numberOption('frames', 12);
const runs = numberOption('runs', 2);

async function time(label: string, action: () => Promise<unknown>) {
  const { bestWallSeconds, cpuSecondsPerRun } = await timeRuns(runs, action);
  const perMinute = (value: number) => (value * 60) / seconds;
  console.log(`${label.padEnd(40)} ${bestWallSeconds.toFixed(2).padStart(6)} s wall (best of ${runs}) = ${perMinute(bestWallSeconds).toFixed(1).padStart(5)} s per minute of video; ${perMinute(cpuSecondsPerRun).toFixed(1).padStart(5)} CPU-s per minute`);
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-bench-video-'));
  try {
    const path = join(dir, 'clip.mp4');
    await runFfmpeg(['-y', '-f', 'lavfi', '-i', `testsrc2=s=1280x720:r=30:d=${seconds}`, '-vf', 'noise=alls=10:allf=t', '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', path]);
    console.log(`720p H.264, ${seconds} s, ${((await stat(path)).size / 1024 / 1024).toFixed(1)} MiB; ${frames} sampled frame pairs`);
    const signal = new AbortController().signal;
    await aiVideo.load();
    await time('frame sampling alone (ffmpeg)', () => sampleFramePairs(path, frames, signal));
    await time('ai-video-detection, whole detector', () =>
      aiVideo.analyze({ jobId: 'bench', taskTypeSlug: 'ai-video-detection', files: [{ slotName: 'original', contentType: 'video/mp4', fileName: 'clip.mp4', sizeBytes: 0, path }], parameters: { frames }, workDir: dir, modelsDir: null }, signal),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
