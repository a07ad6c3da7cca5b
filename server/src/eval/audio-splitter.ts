/**
 * Evaluation of the audio-splitter (task type 10) on mixtures built from LibriSpeech speech
 * with generated stationary noise (white, pink, brown) and a generated repeating music bed, at
 * several SNRs. Reports the SI-SDR improvement (SI-SDRi) of the foreground against the clean
 * speech and of the background against the added noise/music, both over the mixture itself.
 *
 * node --import tsx src/eval/audio-splitter.ts --data ../../shared/data/audio/librispeech
 *   [--files 6] [--concat 3] [--snr -5,0,5,10] [--method auto] [--rate 16000] [--json]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import splitter from '../detectors/audio/audio-splitter.js';
import { decodeAudio, encodeWavFloat32, probeAudio } from '../detectors/audio/pcm.js';
import { readLabels } from './main.js';
import { mixAtSnr, musicLoop, noise, readWavFloat32, siSdr, type NoiseKind } from './audio-mixtures.js';

type Background = NoiseKind | 'music';

interface Row {
  file: string;
  background: Background;
  snrDb: number;
  method: string;
  foregroundImprovementDb: number;
  backgroundImprovementDb: number;
  ms: number;
  seconds: number;
}

async function main() {
  const options = new Command()
    .requiredOption('--data <folder>', 'folder of clean speech with labels.csv (LibriSpeech)')
    .option('--files <n>', 'mixtures per condition', '6')
    .option('--concat <n>', 'consecutive utterances joined into one mixture (REPET needs repetitions to find)', '3')
    .option('--snr <list>', 'SNRs in dB', '-5,0,5,10')
    .option('--backgrounds <list>', 'white,pink,brown,music', 'white,pink,brown,music')
    .option('--method <name>', 'auto | speech-denoise | repet-sim-hpss', 'auto')
    .option('--rate <hz>', 'sample rate of the mixtures', '16000')
    .option('--json', 'print one JSON object')
    .parse()
    .opts<{ data: string; files: string; concat: string; snr: string; backgrounds: string; method: string; rate: string; json?: boolean }>();

  const dataDir = resolve(options.data);
  const sampleRate = Number(options.rate);
  const snrs = options.snr.split(',').map(Number);
  const backgrounds = options.backgrounds.split(',') as Background[];
  const concat = Math.max(1, Number(options.concat));
  const allLabels = await readLabels(dataDir);
  // One mixture per reader first (LibriSpeech names are reader-chapter-utterance), each of
  // `concat` consecutive utterances of that reader; then further utterances of the same readers.
  const byReader = new Map<string, string[]>();
  for (const { file } of allLabels) {
    const reader = file.split('-')[0]!;
    byReader.set(reader, [...(byReader.get(reader) ?? []), file]);
  }
  const groups: string[][] = [];
  for (let round = 0; groups.length < Number(options.files); round++) {
    const before = groups.length;
    for (const files of byReader.values()) {
      const group = files.slice(round * concat, (round + 1) * concat);
      if (group.length === concat && groups.length < Number(options.files)) groups.push(group);
    }
    if (groups.length === before) break;
  }
  await splitter.load();
  const workDir = await mkdtemp(join(tmpdir(), 'mediaproof-split-eval-'));
  const rows: Row[] = [];
  try {
    for (const [fileIndex, group] of groups.entries()) {
      const file = group.length > 1 ? `${group[0]}+${group.length - 1}` : group[0]!;
      const parts: Float32Array[] = [];
      for (const name of group) {
        const path = join(dataDir, name);
        parts.push((await decodeAudio(path, await probeAudio(path), { sampleRate, channels: 1 })).channels[0]!);
      }
      const speech = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
      parts.reduce((offset, part) => (speech.set(part, offset), offset + part.length), 0);
      for (const background of backgrounds) {
        const interference = background === 'music' ? musicLoop(speech.length, sampleRate, 7 + fileIndex) : noise(background, speech.length, 11 + fileIndex);
        for (const snrDb of snrs) {
          const mix = mixAtSnr(speech, interference, snrDb);
          const mixturePath = join(workDir, `mix-${fileIndex}-${background}-${snrDb}.wav`);
          await writeFile(mixturePath, encodeWavFloat32([mix.mixture], sampleRate));
          const t0 = performance.now();
          const output = await splitter.analyze(
            {
              jobId: `eval-${fileIndex}`,
              taskTypeSlug: 'audio-splitter',
              files: [{ slotName: 'original', contentType: 'audio/wav', fileName: 'mix.wav', sizeBytes: 0, path: mixturePath }],
              parameters: { method: options.method },
              workDir,
              modelsDir: null,
            },
            new AbortController().signal,
          );
          const ms = performance.now() - t0;
          const track = (name: string) => readWavFloat32(output.artifacts!.find((a) => a.name === name)!.data).channels[0]!;
          const foreground = track('foreground.wav');
          const residual = track('background.wav');
          const details = output.result.analysisDetails as { method: string };
          rows.push({
            file,
            background,
            snrDb,
            method: details.method,
            foregroundImprovementDb: siSdr(foreground, mix.target) - siSdr(mix.mixture, mix.target),
            backgroundImprovementDb: siSdr(residual, mix.interference) - siSdr(mix.mixture, mix.interference),
            ms,
            seconds: speech.length / sampleRate,
          });
          if (!options.json) {
            const row = rows[rows.length - 1]!;
            console.log(`${file} ${background.padEnd(5)} ${String(snrDb).padStart(3)} dB  ${row.method.padEnd(14)} fg SI-SDRi ${row.foregroundImprovementDb.toFixed(2).padStart(6)}  bg SI-SDRi ${row.backgroundImprovementDb.toFixed(2).padStart(6)}  ${Math.round(ms)} ms`);
          }
        }
      }
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }

  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  const summary = backgrounds.flatMap((background) =>
    snrs.map((snrDb) => {
      const subset = rows.filter((r) => r.background === background && r.snrDb === snrDb);
      const methods = [...new Set(subset.map((r) => r.method))].join('+');
      return {
        background,
        snrDb,
        n: subset.length,
        methods,
        foregroundSiSdrImprovementDb: round2(mean(subset.map((r) => r.foregroundImprovementDb))),
        backgroundSiSdrImprovementDb: round2(mean(subset.map((r) => r.backgroundImprovementDb))),
      };
    }),
  );
  const realTimeFactor = rows.reduce((s, r) => s + r.seconds, 0) / (rows.reduce((s, r) => s + r.ms, 0) / 1000);
  if (options.json) {
    console.log(JSON.stringify({ data: dataDir, sampleRate, method: options.method, summary, realTimeFactor, rows }, null, 2));
    return;
  }
  console.log(`\naudio-splitter on ${groups.length} mixtures of ${concat} LibriSpeech utterances each at ${sampleRate} Hz, method ${options.method}`);
  console.log('background  SNR  method          fg SI-SDRi  bg SI-SDRi');
  for (const s of summary) {
    console.log(`${s.background.padEnd(10)} ${String(s.snrDb).padStart(4)}  ${s.methods.padEnd(15)} ${s.foregroundSiSdrImprovementDb.toFixed(2).padStart(9)}  ${s.backgroundSiSdrImprovementDb.toFixed(2).padStart(9)}`);
  }
  for (const background of backgrounds) {
    const subset = rows.filter((r) => r.background === background);
    console.log(`${background}: mean fg SI-SDRi ${mean(subset.map((r) => r.foregroundImprovementDb)).toFixed(2)} dB, bg SI-SDRi ${mean(subset.map((r) => r.backgroundImprovementDb)).toFixed(2)} dB`);
  }
  console.log(`whole pipeline (decode + VAD + separation + WAV encode): ${realTimeFactor.toFixed(1)}x real time`);
}

const round2 = (value: number) => Math.round(value * 100) / 100;

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
