/**
 * The synthetic-speech model's thresholds for lossy files (voice notes, podcasts), per codec.
 *
 *   node --import tsx scripts/fit-speech-codec-thresholds.ts <conditions folder> [--scores <cache.json>[,<cache.json>…]] [--conditions a,b] [--write [--clean]]
 *
 * The folder is made by `training/speech/codec_conditions.py --validation`: the model's 361
 * validation clips (seen systems, bona fide speakers training never reads; v1's pairs were chosen
 * on its 162 held-out clips, without the flag), as 16 kHz WAV (`orig/`) and encoded as people's recordings arrive: Opus at 12-48 kb/s, AAC and MP3 at 32
 * and 64 kb/s (one subfolder each, with labels.csv). Every file is scored through the whole
 * ai-audio-detection path (decode, VAD, 4 s windows, calibration). For each codec, the rule that
 * chose the shipped thresholds (training/speech/export.py: manipulated at the 98th percentile of
 * the bona fide probabilities, at least 0.5; authentic at the 5th percentile of the synthetic
 * ones, at most 0.5) runs on that codec's conditions pooled, and the pair applies to files of that
 * codec up to the highest bitrate per channel measured. A codec's manipulated threshold is never below
 * the clean pair's (stop 48): a coded file is judged no more readily synthetic than a clean one. `--write` puts them into
 * server/models/speech-antispoof.json as `codecThresholds`; with `--clean` also the same rule's
 * pair on `orig` as the clean `thresholds` (stop 46: chosen through the path that decides, not on
 * training/speech/export.py's windows). Conditions sampled below the model's rate (telephone band:
 * `wav8k`, `mulaw8k`, `phone8k`) are not a codec's: the rule on them pooled is written as
 * `narrowbandThresholds`, for files at the rates measured. shared/data is not read: `npm run eval`
 * measures it afterwards.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import detector from '../src/detectors/audio/ai-audio.js';
import { readLabels } from '../src/eval/main.js';
import { auc, equalErrorRate } from '../src/eval/metrics.js';
import { BUILT_IN_MODELS_DIR } from '../src/detectors/model-pack.js';

interface Scored { condition: string; file: string; label: 0 | 1; probability: number | null; codec: string; kbpsPerChannel: number | null; sampleRate?: number }

async function scoreFolder(root: string, condition: string): Promise<Scored[]> {
  const out: Scored[] = [];
  for (const { file, label } of await readLabels(join(root, condition))) {
    const { result } = await detector.analyze(
      { jobId: 'fit', taskTypeSlug: 'ai-audio-detection', files: [{ path: join(root, condition, file), slotName: 'original', contentType: '', fileName: file, sizeBytes: 0 }], parameters: {}, workDir: root, modelsDir: null },
      new AbortController().signal,
    );
    const details = (result as { analysisDetails: { signals: Array<{ id: string; score: number | null; evidence: any }>; audio: { codec: string; channels: number; sampleRate: number } } }).analysisDetails;
    const model = details.signals.find((s) => s.id === 'model:speech-antispoof');
    const bitrate = details.signals.find((s) => s.id === 'encoder-trace')?.evidence?.bitrateKbps ?? null;
    out.push({
      condition,
      file,
      label,
      probability: model?.score ?? null,
      codec: details.audio.codec,
      kbpsPerChannel: bitrate === null ? null : bitrate / Math.max(1, details.audio.channels),
      sampleRate: details.audio.sampleRate,
    });
  }
  return out;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q, low = Math.floor(position), high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
};

/** training/speech/export.py's rule (numpy's linear quantile, the same 1e-4 margins). */
function chooseThresholds(rows: Scored[]) {
  const bonaFide = rows.filter((r) => r.label === 0).map((r) => r.probability!), synthetic = rows.filter((r) => r.label === 1).map((r) => r.probability!);
  return { authentic: Math.round(Math.min(0.5, quantile(synthetic, 0.05) - 1e-4) * 1e4) / 1e4, manipulated: Math.round(Math.max(0.5, quantile(bonaFide, 0.98) + 1e-4) * 1e4) / 1e4 };
}

function describe(rows: Scored[], thresholds: { authentic: number; manipulated: number }) {
  const scored = rows.filter((r) => r.probability !== null);
  const samples = scored.map((r) => ({ score: r.probability!, label: r.label }));
  const share = (label: 0 | 1, test: (p: number) => boolean) => {
    const of = scored.filter((r) => r.label === label);
    return of.length ? Math.round((1000 * of.filter((r) => test(r.probability!)).length) / of.length) / 10 : null;
  };
  return {
    clips: rows.length,
    scored: scored.length,
    auc: auc(samples),
    eer: equalErrorRate(samples)?.eer ?? null,
    bonaFideCalledSynthetic: share(0, (p) => p >= thresholds.manipulated),
    bonaFideCalledAuthentic: share(0, (p) => p <= thresholds.authentic),
    syntheticCalledSynthetic: share(1, (p) => p >= thresholds.manipulated),
    syntheticCalledAuthentic: share(1, (p) => p <= thresholds.authentic),
  };
}

async function main() {
  const root = resolve(process.argv[2] ?? '');
  // Scores are cached (--scores): several caches, each from a run over some --conditions, are read together.
  const option = (name: string) => (process.argv.indexOf(name) > 0 ? process.argv[process.argv.indexOf(name) + 1]! : null);
  const caches = option('--scores')?.split(',').map((path) => resolve(path)) ?? [];
  let rows: Scored[];
  if (caches.length && caches.every((path) => existsSync(path))) rows = (await Promise.all(caches.map(async (path) => JSON.parse(await readFile(path, 'utf8')) as Scored[]))).flat();
  else {
    await detector.load?.();
    const only = option('--conditions')?.split(',');
    const conditions = (await readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory() && (!only || only.includes(d.name))).map((d) => d.name).sort();
    rows = [];
    for (const condition of conditions) {
      rows.push(...(await scoreFolder(root, condition)));
      console.error(`scored ${condition}`);
    }
    if (caches.length === 1) await writeFile(caches[0]!, JSON.stringify(rows));
  }
  const descriptorPath = join(BUILT_IN_MODELS_DIR, 'speech-antispoof.json');
  const descriptor = JSON.parse(await readFile(descriptorPath, 'utf8'));
  const shipped = descriptor.thresholds as { authentic: number; manipulated: number };
  const conditions = [...new Set(rows.map((r) => r.condition))];
  // Files sampled below the model's rate (telephone band) get one pair of their own, whatever their codec.
  const modelRate = Number(descriptor.input.sampleRate);
  const narrow = (r: Scored) => r.sampleRate !== undefined && r.sampleRate < modelRate;
  const narrowRows = rows.filter((r) => narrow(r) && r.probability !== null);
  const narrowband = narrowRows.length ? { sampleRates: [...new Set(narrowRows.map((r) => r.sampleRate!))].sort((a, b) => a - b), ...chooseThresholds(narrowRows) } : null;
  // `orig` (16 kHz WAV) is the clean reference the validation thresholds stand for.
  const orig = rows.filter((r) => r.condition === 'orig' && r.probability !== null);
  const clean = orig.length ? chooseThresholds(orig) : null;
  // Stop 48: no codec's pair is let below the clean pair's manipulated threshold. A lower one says only that a codec's top
  // few validation files scored low (MP3: 5 of 216), and it flagged 7.8 % of the test's real MP3s.
  const floor = (process.argv.includes('--clean') && clean ? clean : shipped).manipulated;
  const lossyCodecs = [...new Set(rows.filter((r) => r.condition !== 'orig' && !narrow(r)).map((r) => r.codec))].sort();
  const codecThresholds = lossyCodecs.map((codec) => {
    const of = rows.filter((r) => r.codec === codec && !narrow(r) && r.probability !== null);
    // Up to the highest bitrate measured: the median file bitrate (container included) of the codec's top condition.
    const medians = [...new Set(of.map((r) => r.condition))].map((condition) => quantile(of.filter((r) => r.condition === condition).map((r) => r.kbpsPerChannel ?? 0), 0.5));
    const chosen = chooseThresholds(of);
    return { codec, maxKbpsPerChannel: Math.round(Math.max(...medians)), authentic: chosen.authentic, manipulated: Math.max(chosen.manipulated, floor) };
  });
  const table = conditions.map((condition) => {
    const of = rows.filter((r) => r.condition === condition);
    const own = narrow(of[0]!) ? narrowband : codecThresholds.find((t) => t.codec === of[0]!.codec);
    return { condition, codec: of[0]!.codec, kbpsPerChannel: Math.round(of[0]!.kbpsPerChannel ?? 0), conditionAlone: chooseThresholds(of.filter((r) => r.probability !== null)), atShipped: describe(of, shipped), ...(own && { atCodecThresholds: describe(of, own) }) };
  });
  const report = { shipped, clean: clean && { thresholds: clean, atClean: describe(orig, clean), atShipped: describe(orig, shipped) }, rule: 'export.py per codec: authentic = min(0.5, q05 synthetic) - 1e-4, manipulated = max(0.5, q98 bona fide) + 1e-4, and no lower than the clean manipulated threshold', cleanManipulatedFloor: floor, codecThresholds, narrowband: narrowband && { thresholds: narrowband, atNarrowband: describe(narrowRows, narrowband) }, conditions: table };
  console.log(JSON.stringify(report, null, 2));
  if (process.argv.includes('--write')) {
    descriptor.codecThresholds = codecThresholds;
    if (narrowband) descriptor.narrowbandThresholds = narrowband;
    if (process.argv.includes('--clean')) {
      if (!clean) throw new Error('--clean needs the orig condition');
      descriptor.thresholds = clean;
    }
    await writeFile(descriptorPath, JSON.stringify(descriptor, null, 2) + '\n');
    console.error(`wrote codecThresholds${narrowband ? ', narrowbandThresholds' : ''}${process.argv.includes('--clean') ? ' and thresholds' : ''} into ${descriptorPath}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
