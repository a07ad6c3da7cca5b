/**
 * The fields Authenta's current SDKs read from a result document (the Python SDK's
 * `get_result`, the React Native core's `DetectionResult`), added after mediaproof's own
 * envelope (DESIGN.md §2: serve both shapes, ours first). They are derived from the envelope,
 * never computed anew, so the two can not disagree. A check that was not asked for, or that
 * could not decide, is `null`.
 */
import type { TaskType } from '../detectors/catalogue.js';

type Json = Record<string, unknown>;

const percent = (value: number) => Math.round(value * 1000) / 10;
const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** true / false from a verdict, null when it is inconclusive or absent. */
function decided(verdict: unknown, positive: 'manipulated' | 'authentic'): boolean | null {
  if (verdict !== 'manipulated' && verdict !== 'authentic') return null;
  return verdict === positive;
}

function faceIntelligenceFields(result: Json): Json {
  const checks = isObject(result.checks) ? result.checks : {};
  const face = Array.isArray(result.faces) && isObject(result.faces[0]) ? result.faces[0] : null;
  const spoof = checks.liveness && face && isObject(face.spoof) ? face.spoof : null;
  const faceswap = checks.faceswap && isObject(result.faceswap) ? result.faceswap : null;
  const verification = checks.similarity && isObject(result.verification) ? result.verification : null;
  const similarity = typeof verification?.similarity === 'number' ? verification.similarity : null;
  return {
    isDeepFake: faceswap ? decided(faceswap.verdict, 'manipulated') : null,
    isSpoof: spoof ? decided(spoof.verdict, 'manipulated') : null,
    isLiveness: spoof ? decided(spoof.verdict, 'authentic') : null,
    isSimilar: typeof verification?.isSimilar === 'boolean' ? verification.isSimilar : null,
    similarityScore: similarity === null ? null : percent(similarity),
  };
}

function faceEmbeddingFields(result: Json): Json {
  const face = Array.isArray(result.faces) && isObject(result.faces[0]) ? result.faces[0] : null;
  const embedding = Array.isArray(face?.embedding) ? face.embedding : null;
  return { faceVector: embedding, embedding };
}

/** Per tracked person: whether it is a deepfake, and its face box in every analysed frame. */
function participantFields(result: Json): Json {
  const details = isObject(result.analysisDetails) ? result.analysisDetails : {};
  const participants = (Array.isArray(details.participants) ? details.participants : []).filter(isObject);
  const boundingBoxes: Json = {};
  for (const participant of participants) {
    const frames: Record<string, [number, number, number, number]> = {};
    for (const entry of (Array.isArray(participant.track) ? participant.track : []).filter(isObject)) {
      const [x, y, w, h] = entry.box as number[];
      frames[String(entry.frameIndex)] = [x!, y!, x! + w!, y! + h!];
    }
    const score = typeof participant.score === 'number' ? participant.score : null;
    // The detector's own per-person confidence where it gives one (that of its verdict); otherwise derived from P(fake).
    const confidence = typeof participant.confidence === 'number' ? participant.confidence : score === null ? null : participant.fake ? score : 1 - score;
    boundingBoxes[String(participant.id)] = { boundingBox: frames, class: participant.fake ? 'fake' : 'real', confidence };
  }
  return {
    identityPredictions: participants.map((participant) => ({ identityId: participant.id, isDeepFake: Boolean(participant.fake) })),
    boundingBoxes,
  };
}

export function withSdkFields(taskType: TaskType, result: Json): Json {
  const fields: Json = { resultType: taskType.modelCode };
  if (typeof result.score === 'number' && decided(result.verdict, 'authentic') !== null) {
    fields.RealConfidencePercent = percent(1 - result.score);
  }
  if (taskType.modelCode === 'FI-1') Object.assign(fields, faceIntelligenceFields(result));
  if (taskType.modelCode === 'FE-1') Object.assign(fields, faceEmbeddingFields(result));
  if (taskType.modelCode === 'DF-1' || taskType.modelCode === 'ED-1') Object.assign(fields, participantFields(result));
  // Ours first: a field the envelope already has keeps its value.
  return { ...result, ...Object.fromEntries(Object.entries(fields).filter(([key]) => !(key in result))) };
}
