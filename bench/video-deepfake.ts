/**
 * `node --import tsx bench/video-deepfake.ts [--seconds 60] [--height 720] [--runs 1] [--damaged]`
 *
 * Seconds of analysis per minute of video for faceswap-detection (4) and ekyc-deepfake (11),
 * on a face clip made from a shipped photo with a slow zoom (H.264, 30 fps). In the same run,
 * as the baseline any video analysis pays: decoding the whole clip once with ffmpeg (the
 * participant heatmap video is one such pass). Each line gives wall time and CPU seconds of
 * this process and its ffmpeg children. The last line is the peak resident memory of this
 * process (the worker's share; ffmpeg children stream frames and are not counted).
 *
 * Issue 17's two figures: `--seconds 60 --height 720` (< 60 s per minute of 720p on one core)
 * and `--seconds 600 --height 1080` (a worker's peak memory under 1.5 GiB). Pin to one core
 * with `taskset -c 0`.
 *
 * `--damaged`: the same clip cut the way stream-copied clips are (a keyframe every 10 s, its
 * parameter sets sent only at the start, 25 fps), so every sampled time after the first 10 s
 * has a damaged fast seek and is read again from earlier (video-frames.ts, decodeAtTimes).
 */
import { createRequire } from 'node:module';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import ekyc from '../server/src/detectors/face/ekyc-deepfake.js';
import faceswap from '../server/src/detectors/face/faceswap-detection.js';
import { runFfmpeg } from '../server/src/detectors/media/ffmpeg.js';
import type { Detector } from '../server/src/detectors/types.js';
import { clipWithStartOnlyParameterSets } from '../server/test/face/helpers.js';
import { numberOption, peakRssMiB, timeRuns } from './measure.js';

const seconds = numberOption('seconds', 60);
const height = numberOption('height', 720);
const runs = numberOption('runs', 1);
const damaged = process.argv.includes('--damaged');
const width = Math.round((height * 16) / 9 / 2) * 2;

const require = createRequire(import.meta.url);
const facePhoto = join(dirname(require.resolve('@vladmandic/human')), '..', 'assets', 'screenshot-faceid.jpg');

async function time(label: string, action: () => Promise<unknown>): Promise<unknown> {
  const { bestWallSeconds, cpuSecondsPerRun, result } = await timeRuns(runs, action);
  const perMinute = (value: number) => (value * 60) / seconds;
  console.log(
    `${label.padEnd(36)} ${bestWallSeconds.toFixed(1).padStart(7)} s wall (best of ${runs}) = ${perMinute(bestWallSeconds).toFixed(1).padStart(5)} s per minute of video; ${perMinute(cpuSecondsPerRun).toFixed(1).padStart(5)} CPU-s per minute`,
  );
  return result;
}

/** What the detector found, so a figure is never that of an analysis that found nothing. */
function summary(output: unknown): string {
  const { result, artifacts } = output as {
    result: { verdict: string; analysisDetails: { participants?: Array<{ track?: unknown[] }>; media?: { damagedSeeks?: { readAgain: number } } } };
    artifacts?: Array<{ kind: string }>;
  };
  const participants = result.analysisDetails.participants ?? [];
  const heatmaps = (artifacts ?? []).filter((artifact) => artifact.kind === 'heatmap').length;
  const readAgain = result.analysisDetails.media?.damagedSeeks?.readAgain ?? 0;
  return `  verdict ${result.verdict}; ${participants.length} participant(s) (${participants.map((p) => `${p.track?.length ?? 0} tracked frames`).join(', ')}); ${heatmaps} heatmap video(s); ${readAgain} damaged seek(s) read again`;
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-bench-deepfake-'));
  try {
    const made = join(dir, 'face.mp4');
    // The photo is padded to the frame's aspect and zoomed slowly: a face that moves a little, every frame different.
    await runFfmpeg([
      '-y', '-loop', '1', '-framerate', '30', '-i', facePhoto, '-t', String(seconds),
      '-vf', `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,zoompan=z='1+0.05*sin(on/90)':d=1:s=${width}x${height}:fps=30,noise=alls=6:allf=t`,
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', made,
    ]);
    const path = damaged ? await clipWithStartOnlyParameterSets(dir, ['-i', made], 'damaged.mp4', 10, false, `${width}x${height}`) : made;
    const how = damaged ? '25 fps, parameter sets only at the start, a keyframe every 10 s' : '30 fps';
    console.log(`${width}x${height} H.264, ${seconds} s at ${how}, ${((await stat(path)).size / 1024 / 1024).toFixed(1)} MiB`);
    const signal = new AbortController().signal;
    const run = (detector: Detector, slug: string) => () =>
      detector.analyze(
        { jobId: 'bench', taskTypeSlug: slug, files: [{ slotName: 'original', contentType: 'video/mp4', fileName: 'face.mp4', sizeBytes: 0, path }], parameters: {}, workDir: dir, modelsDir: null },
        signal,
      );
    await faceswap.load();
    await ekyc.load();
    await time('decode the whole clip once (ffmpeg)', () => runFfmpeg(['-v', 'error', '-i', path, '-f', 'null', '-']));
    console.log(summary(await time('faceswap-detection, whole detector', run(faceswap, 'faceswap-detection'))));
    console.log(summary(await time('ekyc-deepfake, whole detector', run(ekyc, 'ekyc-deepfake'))));
    console.log(`peak resident memory of this process: ${peakRssMiB()} MiB`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
