/**
 * Chooses the fused thresholds of face-liveness-detection with the trained model (liveness.ts
 * FUSED_WITH_MODEL) on the validation half of the eval simulator's attack set, never its test
 * half: `authenticBelow` is the largest value with at most 5 % of validation attacks under it,
 * `spoofFrom` the smallest with at most 5 % of validation live faces at or above it. It also
 * prints the figures per species for the split it is given, and the time per face with and
 * without the model in the same run.
 *
 * cd server && node --import tsx ../training/liveness/choose-fusion.ts /tmp/pad/validation [--json out.json]
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { analyseFaces } from '../../server/src/detectors/face/face-analysis.js';
import { decodeImage } from '../../server/src/detectors/face/image-input.js';
import { loadHuman } from '../../server/src/detectors/face/human-runtime.js';
import { assessLiveness, type LivenessModelState } from '../../server/src/detectors/face/liveness.js';
import { livenessModelOrProblem } from '../../server/src/detectors/face/liveness-model.js';
import { auc } from '../../server/src/eval/metrics.js';

const dir = process.argv[2]!;
const out = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : null;
await loadHuman();
const state: LivenessModelState = await livenessModelOrProblem(process.env.MODELS_DIR ?? null);
if (!state.model) throw new Error(`model absent: ${JSON.stringify(state.problems)}`);
const rows = (await readFile(join(dir, 'labels.csv'), 'utf8')).trim().split('\n').slice(1).map((line) => line.split(','));
const records = [];
let withModelMs = 0, withoutModelMs = 0, faceAnalysisMs = 0, faces = 0;
for (const [file, label] of rows) {
  const image = await decodeImage(join(dir, file!));
  const started = performance.now();
  const [face] = await analyseFaces(image, { emotion: false, spoof: true } as never);
  faceAnalysisMs += performance.now() - started;
  if (!face) {
    records.push({ file, label: Number(label), species: file!.split('-')[0], face: false });
    continue;
  }
  let t = performance.now();
  const without = await assessLiveness(image, face);
  withoutModelMs += performance.now() - t;
  t = performance.now();
  const withModel = await assessLiveness(image, face, state);
  withModelMs += performance.now() - t;
  faces++;
  const model = withModel.signals.find((s) => s.id === 'model:face-liveness-pad');
  const legacyWeight = without.signals.filter((s) => s.score !== null).reduce((sum, s) => sum + s.weight, 0);
  records.push({ file, label: Number(label), species: file!.split('-')[0], face: true, without: without.score, legacyWeight, with: withModel.score, model: model?.score ?? null, reliability: withModel.reliability, verdict: withModel.verdict });
}
const scored = records.filter((r) => r.face) as Array<{ label: number; species: string; without: number; legacyWeight: number; with: number; model: number | null; reliability: number; verdict: string }>;
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(q * sorted.length)))]!;
};
const attacks = scored.filter((r) => r.label === 1).map((r) => r.with);
const lives = scored.filter((r) => r.label === 0).map((r) => r.with);
// Largest threshold with at most 5 % of attacks strictly under it; smallest with at most 5 % of live at/above.
const sortedAttacks = [...attacks].sort((a, b) => a - b);
const allowed = Math.floor(0.05 * attacks.length);
const authenticBelow = sortedAttacks[allowed]!;
const sortedLives = [...lives].sort((a, b) => b - a);
const spoofFrom = Math.max(authenticBelow, sortedLives[Math.floor(0.05 * lives.length)]! + 1e-4);
const figure = (key: 'with' | 'without' | 'model') => {
  const of = (keep: (r: (typeof scored)[number]) => boolean) =>
    auc(scored.filter((r) => r[key] !== null && keep(r)).map((r) => ({ score: r[key] as number, label: r.label as 0 | 1 })));
  return { auc: of(() => true), print: of((r) => r.label === 0 || r.species === 'print'), replay: of((r) => r.label === 0 || r.species === 'replay') };
};
/** For a candidate model weight: the fused score, the 5 %-of-attacks threshold, and the share of live faces under it. */
const candidates = [0.5, 1, 2, 3, 4, 6, 10, 1000].map((weight) => {
  const fused = scored.map((r) => ({ label: r.label, reliable: r.reliability >= 0.5, score: r.model === null ? r.without : (r.without * r.legacyWeight + weight * r.model) / (r.legacyWeight + weight) }));
  const attackScores = fused.filter((r) => r.label === 1).map((r) => r.score).sort((a, b) => a - b);
  const threshold = attackScores[Math.floor(0.05 * attackScores.length)]!;
  const live = fused.filter((r) => r.label === 0);
  return { weight, auc: auc(fused.map(({ score, label }) => ({ score, label: label as 0 | 1 }))), authenticBelow: threshold, liveCalledAuthentic: live.filter((r) => r.reliable && r.score < threshold).length / live.length };
});
const summary = {
  candidates,
  files: rows.length,
  facesFound: faces,
  chosen: { authenticBelow, spoofFrom, attacksUnder5: allowed },
  quantiles: { attack05: quantile(attacks, 0.05), live50: quantile(lives, 0.5), live95: quantile(lives, 0.95) },
  auc: { fusedWithModel: figure('with'), fusedWithoutModel: figure('without'), modelAlone: figure('model') },
  // Human's face analysis (detection, mesh, its antispoof and liveness models) runs once either way.
  msPerImage: { faceAnalysis: faceAnalysisMs / rows.length, assessmentWithoutModel: withoutModelMs / faces, assessmentWithModel: withModelMs / faces },
};
console.log(JSON.stringify(summary, null, 1));
if (out) await writeFile(out, JSON.stringify({ summary, records }, null, 1));
