/**
 * Chooses how face-liveness-detection weighs its two trained models (liveness.ts
 * `fuseLearned`) on the validation half of the eval simulator's attack set, never its test half,
 * and reports the test half with what validation chose.
 *
 * For every face it records the detector's evidence without the trained models (Human's models
 * and the cues, `legacy`), the patch model's and the context model's calibrated probabilities,
 * and the face's reliability. Each candidate rule turns these into one spoof score (the rule with
 * a threshold per model, on the detector's shared scale, after choosing both models' thresholds); its
 * `authenticBelow` is the largest value with at most 5 % of the validation attacks of every
 * species under it (passing a spoof is the error an onboarding check must not make, whatever the
 * medium), `spoofFrom` the smallest with at most
 * 5 % of validation live faces at or above it. The rule kept is the one that calls the most
 * validation live faces authentic under that constraint.
 *
 * cd server && node --import tsx ../training/liveness/choose-fusion.ts <validation dir> <test dir> [--json out.json] [--from earlier.json]
 * (MODELS_DIR=<folder> scores a candidate pack instead of the built-in models.)
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { analyseFaces } from '../../server/src/detectors/face/face-analysis.js';
import { decodeImage } from '../../server/src/detectors/face/image-input.js';
import { loadHuman } from '../../server/src/detectors/face/human-runtime.js';
import { assessLiveness, FUSED_WITH_MODEL, FUSED_WITHOUT_MODEL, loadLivenessModels, onSharedScale, SHARED_SCALE, type SpoofThresholds } from '../../server/src/detectors/face/liveness.js';
import { LIVENESS_MODEL } from '../../server/src/detectors/face/liveness-model.js';
import { LIVENESS_CONTEXT_MODEL } from '../../server/src/detectors/face/liveness-context.js';
import { readLabels } from '../../server/src/eval/main.js';
import { auc } from '../../server/src/eval/metrics.js';

interface FaceRecord {
  file: string;
  label: 0 | 1;
  species: string;
  legacy: number;
  legacyWeight: number;
  patch: number | null;
  context: number | null;
  reliability: number;
}

const [validationDir, testDir] = process.argv.slice(2);
const out = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : null;
if (!process.argv.includes('--from')) await loadHuman();
const modelsDir = process.env.MODELS_DIR ?? null;
const models = await loadLivenessModels(modelsDir);
console.error(`patch model: ${models.patch.model ? models.patch.model.descriptor.version : 'absent'}; context model: ${models.context.model ? models.context.model.descriptor.version : 'absent'}`);

/** Time per face of the assessment (Human's face analysis, the same either way, not included). */
const timing = { faces: 0, withoutModels: 0, withPatchModel: 0, withBothModels: 0 };

async function collect(dir: string) {
  // The eval's own reader: a header line is optional (shared/data's labels.csv has none).
  const rows = await readLabels(dir);
  const records: FaceRecord[] = [];
  let noFace = 0;
  for (const { file, label } of rows) {
    const image = await decodeImage(join(dir, file));
    const [face] = await analyseFaces(image, { emotion: false, spoof: true } as never);
    if (!face) {
      noFace++;
      continue;
    }
    let started = performance.now();
    const without = await assessLiveness(image, face);
    timing.withoutModels += performance.now() - started;
    started = performance.now();
    await assessLiveness(image, face, { patch: models.patch });
    timing.withPatchModel += performance.now() - started;
    started = performance.now();
    const withModels = await assessLiveness(image, face, models);
    timing.withBothModels += performance.now() - started;
    timing.faces++;
    const probability = (id: string) => (withModels.signals.find((s) => s.id === `model:${id}`)?.score ?? null) as number | null;
    const legacyWeight = without.signals.filter((s) => s.score !== null).reduce((sum, s) => sum + s.weight, 0);
    records.push({ file, label, species: file.split('-')[0]!, legacy: without.score, legacyWeight, patch: probability(LIVENESS_MODEL), context: probability(LIVENESS_CONTEXT_MODEL), reliability: withModels.reliability });
  }
  return { files: rows.length, noFace, records };
}

/** Candidate rules: a spoof score per face from its evidence. */
const PATCH_WEIGHT = 100;
const rules: Record<string, (r: FaceRecord) => number> = {
  legacy: (r) => r.legacy,
  'patch (weight 100 in the average)': (r) => (r.patch === null ? r.legacy : (r.legacy * r.legacyWeight + PATCH_WEIGHT * r.patch) / (r.legacyWeight + PATCH_WEIGHT)),
  context: (r) => r.context ?? r.legacy,
  // Listed before the next one: on a tie the simpler rule is kept.
  'max(patch, context)': (r) => Math.max(r.patch ?? r.legacy, r.context ?? r.legacy),
  'max(patch average, context)': (r) => Math.max(rules['patch (weight 100 in the average)']!(r), r.context ?? 0),
};

/** At most 5 % of each species may pass: the index of the first value that may not. */
const allowedPasses = (count: number) => Math.floor(0.05 * count);

function thresholdsOn(records: FaceRecord[], score: (r: FaceRecord) => number) {
  // At most 5 % of every attack species under authenticBelow, not only of all attacks together:
  // an easy species must not buy a hard one more passes.
  const species = [...new Set(records.filter((r) => r.label === 1).map((r) => r.species))];
  const authenticBelow = Math.min(
    ...species.map((name) => {
      const attacks = records.filter((r) => r.species === name).map(score).sort((a, b) => a - b);
      return attacks[allowedPasses(attacks.length)]!;
    }),
  );
  const lives = records.filter((r) => r.label === 0).map(score).sort((a, b) => b - a);
  const spoofFrom = Math.max(authenticBelow, lives[allowedPasses(lives.length)]! + 1e-4);
  return { authenticBelow, spoofFrom };
}

/**
 * Each model under a threshold of its own: a face is live only when both models are under
 * theirs, a spoof when either reaches its own spoof threshold. The context model sees a print's
 * or a phone's edge, the patch model the medium's texture where no edge is in view, so neither
 * model's threshold has to be as strict as a shared one set by the other model's hard species.
 * Over every patch threshold (the attacks' own patch scores), the context threshold is the
 * largest that keeps every species within 5 %; the pair kept calls the most live faces authentic.
 * The spoof thresholds likewise: at most 5 % of live faces flagged by either model, the most
 * attacks flagged.
 */
function pairThresholdsOn(records: FaceRecord[]): { patch: SpoofThresholds; context: SpoofThresholds } {
  const scored = records.filter((r) => r.patch !== null && r.context !== null);
  const attacks = scored.filter((r) => r.label === 1);
  const lives = scored.filter((r) => r.label === 0);
  const species = [...new Set(records.filter((r) => r.label === 1).map((r) => r.species))];
  const speciesSize = new Map(species.map((name) => [name, records.filter((r) => r.species === name).length]));
  let authentic = { patch: 0, context: 0, live: -1 };
  for (const patchBelow of [...new Set(attacks.map((r) => r.patch!)), 1].sort((a, b) => a - b)) {
    const contextBelow = Math.min(
      ...species.map((name) => {
        const passing = attacks.filter((r) => r.species === name && r.patch! < patchBelow).map((r) => r.context!).sort((a, b) => a - b);
        return passing[allowedPasses(speciesSize.get(name)!)] ?? 1;
      }),
    );
    const live = lives.filter((r) => r.patch! < patchBelow && r.context! < contextBelow).length;
    if (live > authentic.live) authentic = { patch: patchBelow, context: contextBelow, live };
  }
  const flagsAllowed = allowedPasses(records.filter((r) => r.label === 0).length);
  let spoof = { patch: 1, context: 1, attacks: -1 };
  for (const patchFrom of [...new Set(lives.map((r) => r.patch! + 1e-4)), 1].filter((v) => v >= authentic.patch)) {
    const left = flagsAllowed - lives.filter((r) => r.patch! >= patchFrom).length;
    if (left < 0) continue;
    const unflagged = lives.filter((r) => r.patch! < patchFrom).map((r) => r.context!).sort((a, b) => b - a);
    const contextFrom = Math.max(authentic.context, (unflagged[left] ?? -1) + 1e-4);
    const flagged = attacks.filter((r) => r.patch! >= patchFrom || r.context! >= contextFrom).length;
    if (flagged > spoof.attacks) spoof = { patch: patchFrom, context: contextFrom, attacks: flagged };
  }
  return {
    patch: { authenticBelow: authentic.patch, spoofFrom: Math.min(1, spoof.patch) },
    context: { authenticBelow: authentic.context, spoofFrom: Math.min(1, spoof.context) },
  };
}

/** The detector's score under per-model thresholds, for faces either model could not score as it answers them. */
function pairScore(own: { patch: SpoofThresholds; context: SpoofThresholds }) {
  return (r: FaceRecord) => {
    if (r.patch !== null && r.context !== null) return Math.max(onSharedScale(r.patch, own.patch), onSharedScale(r.context, own.context));
    if (r.patch !== null) return onSharedScale(rules['patch (weight 100 in the average)']!(r), FUSED_WITH_MODEL);
    return onSharedScale(r.legacy, FUSED_WITHOUT_MODEL);
  };
}

function figures(records: FaceRecord[], files: number, score: (r: FaceRecord) => number, t: { authenticBelow: number; spoofFrom: number }) {
  const verdict = (r: FaceRecord) => (r.reliability < 0.5 ? 'inconclusive' : score(r) >= t.spoofFrom ? 'spoof' : score(r) < t.authenticBelow ? 'authentic' : 'inconclusive');
  const species = [...new Set(records.map((r) => r.species))];
  const per = Object.fromEntries(
    species.map((name) => {
      const of = records.filter((r) => r.species === name);
      const share = (v: string) => Number((of.filter((r) => verdict(r) === v).length / of.length).toFixed(4));
      const aucOf = name === 'live' ? null : auc(records.filter((r) => r.label === 0 || r.species === name).map((r) => ({ score: score(r), label: r.label })));
      return [name, { faces: of.length, authentic: share('authentic'), spoof: share('spoof'), auc: aucOf }];
    }),
  );
  const attacks = records.filter((r) => r.label === 1);
  const lives = records.filter((r) => r.label === 0);
  return {
    files,
    faces: records.length,
    auc: auc(records.map((r) => ({ score: score(r), label: r.label }))),
    liveAuthentic: lives.filter((r) => verdict(r) === 'authentic').length / lives.length,
    attacksAuthentic: attacks.filter((r) => verdict(r) === 'authentic').length / attacks.length,
    perSpecies: per,
  };
}

// --from <json>: the records of an earlier run (the same models), to compare rules without re-scoring.
const from = process.argv.includes('--from') ? JSON.parse(await readFile(process.argv[process.argv.indexOf('--from') + 1]!, 'utf8')) : null;
const validation: Awaited<ReturnType<typeof collect>> = from ? from.validation : await collect(validationDir!);
const test: Awaited<ReturnType<typeof collect>> | null = from ? from.test : testDir ? await collect(testDir) : null;
const results = Object.entries(rules).map(([name, score]) => {
  const thresholds = thresholdsOn(validation.records, score);
  return { rule: name, thresholds, validation: figures(validation.records, validation.files, score, thresholds), test: test && figures(test.records, test.files, score, thresholds) };
});
const perModel = pairThresholdsOn(validation.records);
const pair = pairScore(perModel);
results.push({
  rule: 'each model under its own thresholds',
  thresholds: { ...SHARED_SCALE, perModel } as typeof SHARED_SCALE,
  validation: figures(validation.records, validation.files, pair, SHARED_SCALE),
  test: test && figures(test.records, test.files, pair, SHARED_SCALE),
});
const usable = results.filter((r) => r.rule !== 'legacy' && Object.entries(r.validation.perSpecies).every(([name, f]) => name === 'live' || f.authentic <= 0.05));
// A stable sort: among equal live shares the rule listed first wins.
const chosen = usable.sort((a, b) => b.validation.liveAuthentic - a.validation.liveAuthentic)[0] ?? null;
const withoutBothScores = (records: FaceRecord[]) => records.filter((r) => r.patch === null || r.context === null).length;
/** Each model's own ranking: the AUC of its calibrated probability over the faces it scored. */
const modelAuc = (records: FaceRecord[]) => ({
  patch: auc(records.filter((r) => r.patch !== null).map((r) => ({ score: r.patch!, label: r.label }))),
  context: auc(records.filter((r) => r.context !== null).map((r) => ({ score: r.context!, label: r.label }))),
});
const summary = {
  chosen: chosen?.rule ?? null,
  // Faces one of the models could not score: the detector answers them without the models.
  msPerFace: from ? null : { withoutModels: timing.withoutModels / timing.faces, withPatchModel: timing.withPatchModel / timing.faces, withBothModels: timing.withBothModels / timing.faces },
  facesWithoutBothModelScores: { validation: withoutBothScores(validation.records), test: test && withoutBothScores(test.records) },
  modelAuc: { validation: modelAuc(validation.records), test: test && modelAuc(test.records) },
  results,
};
console.log(JSON.stringify(summary, null, 1));
if (out) await writeFile(out, JSON.stringify({ summary, validation, test }, null, 1));
