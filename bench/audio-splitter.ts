/**
 * `node --import tsx bench/audio-splitter.ts [--seconds 60] [--rate 48000] [--runs 3]`
 *
 * Real-time factor (audio seconds processed per second) of the audio detectors on one thread,
 * on generated inputs: speech-like audio in pink noise (the RNNoise path) and speech over a
 * repeating music bed (the REPET-SIM path), mono, as 16-bit WAV at the given rate. For each it
 * times, in the same run: the ffmpeg decode alone (the floor any detector pays), the whole
 * audio-splitter job (decode, VAD, separation, WAV encoding), and the whole
 * ai-audio-detection job. Also reports CPU seconds of this process and its children (ffmpeg),
 * which is what one dedicated core delivers on a shared machine.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import aiAudio from '../server/src/detectors/audio/ai-audio.js';
import splitter from '../server/src/detectors/audio/audio-splitter.js';
import { decodeAudio, probeAudio } from '../server/src/detectors/audio/pcm.js';
import { runFfmpeg } from '../server/src/detectors/media/ffmpeg.js';
import type { Detector } from '../server/src/detectors/types.js';
import { mixAtSnr, musicLoop, noise, speechLike } from '../server/src/eval/audio-mixtures.js';
import { numberOption, timeRuns } from './measure.js';

const seconds = numberOption('seconds', 60);
const rate = numberOption('rate', 48_000);
const runs = numberOption('runs', 3);

async function time(label: string, audioSeconds: number, action: () => Promise<unknown>) {
  const { bestWallSeconds, cpuSecondsPerRun } = await timeRuns(runs, action);
  console.log(`${label.padEnd(44)} ${bestWallSeconds.toFixed(2).padStart(6)} s  ${(audioSeconds / bestWallSeconds).toFixed(1).padStart(6)}x real time (wall, best of ${runs})  ${(audioSeconds / cpuSecondsPerRun).toFixed(1).padStart(6)}x per CPU-second`);
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'mediaproof-bench-audio-'));
  try {
    const length = Math.round(seconds * rate);
    const speech = speechLike(length, rate, 11);
    const inputs = {
      'speech + pink noise (RNNoise path)': mixAtSnr(speech, noise('pink', length, 3), 5).mixture,
      'speech + music bed (REPET-SIM path)': mixAtSnr(speech, musicLoop(length, rate, 5), 0).mixture,
    };
    const loadStart = performance.now();
    await Promise.all([splitter.load(), aiAudio.load()]);
    console.log(`models loaded in ${Math.round(performance.now() - loadStart)} ms (RNNoise wasm, Silero VAD, C2PA wasm)`);
    console.log(`${seconds} s mono at ${rate} Hz, 16-bit WAV; ${runs} runs each\n`);
    for (const [name, samples] of Object.entries(inputs)) {
      const path = join(dir, `${name.split(' ')[2]}.wav`);
      await runFfmpeg(['-f', 'f32le', '-ar', String(rate), '-ac', '1', '-i', 'pipe:0', '-c:a', 'pcm_s16le', '-y', path], { stdin: new Uint8Array(samples.buffer) });
      const job = (detector: Detector) => () =>
        detector.analyze(
          { jobId: 'bench', taskTypeSlug: 'bench', files: [{ slotName: 'original', contentType: 'audio/wav', fileName: 'bench.wav', sizeBytes: 0, path }], parameters: {}, workDir: dir, modelsDir: null },
          new AbortController().signal,
        );
      console.log(name);
      await time('  decode only (probe + ffmpeg to float PCM)', seconds, async () => decodeAudio(path, await probeAudio(path)));
      await time('  audio-splitter (whole job)', seconds, job(splitter));
      await time('  ai-audio-detection (whole job)', seconds, job(aiAudio));
    }
    console.log(`\nRSS ${Math.round(process.memoryUsage().rss / 1024 / 1024)} MiB`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
