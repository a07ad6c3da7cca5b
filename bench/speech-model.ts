/**
 * `node --import tsx bench/speech-model.ts [--seconds 60] [--runs 2]`
 *
 * Speed of ai-audio-detection on one core (run with `taskset -c 0`), × real time, on a generated
 * speech-like recording (44.1 kHz WAV). In the same run: the whole detector with the built-in
 * synthetic-speech model, the model's scoring of the same speech alone, and the detector without
 * it (the difference of the two).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import detector from '../server/src/detectors/audio/ai-audio.js';
import { scoreSpeech, SPEECH_MODEL_NAME } from '../server/src/detectors/audio/speech-model.js';
import { decodeAudio, probeAudio, resample } from '../server/src/detectors/audio/pcm.js';
import { detectSpeech, VAD_SAMPLE_RATE } from '../server/src/detectors/audio/vad.js';
import { loadModel } from '../server/src/detectors/model-pack.js';
import { runFfmpeg } from '../server/src/detectors/media/ffmpeg.js';
import { noise, speechLike } from '../server/src/eval/audio-mixtures.js';
import { numberOption } from './measure.js';

const seconds = numberOption('seconds', 60);
const runs = numberOption('runs', 2);

const dir = await mkdtemp(join(tmpdir(), 'bench-speech-'));
try {
  const rate = 44_100;
  const speech = speechLike(rate * seconds, rate, 5);
  const floor = noise('pink', speech.length, 2);
  const samples = speech.map((v, i) => 0.1 * v + 0.002 * floor[i]!);
  const path = join(dir, 'speech.wav');
  await runFfmpeg(['-f', 'f32le', '-ar', String(rate), '-ac', '1', '-i', 'pipe:0', '-c:a', 'pcm_s16le', '-y', path], { stdin: new Uint8Array(samples.buffer) });
  await detector.load();
  const never = new AbortController().signal;
  const input = { jobId: 'bench', taskTypeSlug: 'bench', files: [{ slotName: 'original', contentType: 'audio/wav', fileName: 'speech.wav', sizeBytes: 0, path }], parameters: {}, workDir: dir, modelsDir: null };

  const { model } = await loadModel(SPEECH_MODEL_NAME);
  if (!model) throw new Error('the built-in speech-antispoof model is not installed');
  const probe = await probeAudio(path, never);
  const audio = await decodeAudio(path, probe, { channels: 1, signal: never });
  const mono16k = await resample(audio.channels[0]!, audio.sampleRate, VAD_SAMPLE_RATE, never);
  const vad = await detectSpeech(mono16k, { signal: never });

  await detector.analyze(input, never); // warm-up
  let whole = 0;
  let alone = 0;
  let windows = 0;
  for (let run = 0; run < runs; run++) {
    let start = performance.now();
    await detector.analyze(input, never);
    whole += (performance.now() - start) / 1000;
    start = performance.now();
    windows = (await scoreSpeech(model, mono16k, VAD_SAMPLE_RATE, vad.segments, never))!.windows.length;
    alone += (performance.now() - start) / 1000;
  }
  whole /= runs;
  alone /= runs;
  const rt = (s: number) => `${(seconds / s).toFixed(1)}× real time (${s.toFixed(2)} s)`;
  console.log(`audio: ${seconds} s, ${vad.speechSeconds.toFixed(1)} s of speech, ${windows} model windows of 4 s`);
  console.log(`detector with the model:     ${rt(whole)}`);
  console.log(`model scoring alone:         ${rt(alone)}`);
  console.log(`detector without the model:  ${rt(whole - alone)}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
