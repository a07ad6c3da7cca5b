/**
 * Each task type's result schema: what the envelope builder makes conforms, and what a client
 * could not rely on (a missing flag, a score outside 0..1, an unknown verdict) is caught, so the
 * worker fails such a job instead of publishing it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verdictResult } from '../../src/detectors/result.js';
import { TASK_TYPES, assertCatalogueConsistent } from '../../src/detectors/catalogue.js';
import { resultProblem } from '../../src/schemas/result.schema.js';
import { withSdkFields } from '../../src/services/sdk-result-fields.js';

const detector = { name: 'test', version: '1' };

test('every verdict-style task type accepts the envelope verdictResult() builds, with the SDK fields', () => {
  for (const taskType of TASK_TYPES.filter((t) => t.verdictFlag)) {
    const result = withSdkFields(taskType, verdictResult({ flag: taskType.verdictFlag!, detector, score: 0.7, signals: [{ id: 'x', label: 'x', score: 0.7, weight: 1, evidence: {} }] }));
    assert.equal(resultProblem(taskType.result, result), null, taskType.slug);
  }
});

test('a result a client could not rely on is caught, with where', () => {
  const taskType = TASK_TYPES.find((t) => t.slug === 'ai-image-detection')!;
  const good = withSdkFields(taskType, verdictResult({ flag: 'isAiGenerated', detector, score: 0.2, signals: [] }));
  assert.match(resultProblem('AiGeneratedResult', { ...good, isAiGenerated: undefined })!, /isAiGenerated/);
  assert.match(resultProblem('AiGeneratedResult', { ...good, score: 1.5 })!, /score/);
  assert.match(resultProblem('AiGeneratedResult', { ...good, verdict: 'probably' })!, /verdict/);
  assert.match(resultProblem('AiGeneratedResult', { ...good, analysisDetails: { detector, signals: [{ id: 'x' }] } })!, /signals/);
  assert.match(resultProblem('FaceEmbeddingResult', { resultType: 'FE-1', faces: [{ box: [0, 0, 1, 1] }], faceVector: null, embedding: null })!, /embedding|dimensions|model/);
});

test('the catalogue refuses a verdict task type whose result schema lacks its flag', () => {
  const broken = TASK_TYPES.map((t) => (t.slug === 'ai-image-detection' ? { ...t, result: 'ForgeryResult' as const } : t));
  assert.throws(() => assertCatalogueConsistent(broken), /does not require its flag isAiGenerated/);
});
