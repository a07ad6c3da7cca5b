import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NOT_SIMILAR_BELOW, unverified, verify, VERIFICATION_THRESHOLD } from '../../src/detectors/face/verification.js';

/** Two unit vectors whose dot product is `similarity`. */
function pairAt(similarity: number): [number[], number[]] {
  return [
    [1, 0, 0],
    [similarity, Math.sqrt(1 - similarity * similarity), 0],
  ];
}

test('verification answers three ways: the same person, someone else, or undecided between the thresholds', () => {
  assert.ok(NOT_SIMILAR_BELOW < VERIFICATION_THRESHOLD);
  const same = verify(...pairAt(VERIFICATION_THRESHOLD + 0.01));
  assert.equal(same.isSimilar, true);
  assert.equal(same.reason, undefined);
  assert.equal(verify(...pairAt(VERIFICATION_THRESHOLD)).isSimilar, true, 'the threshold itself is a match');
  const other = verify(...pairAt(NOT_SIMILAR_BELOW - 0.01));
  assert.equal(other.isSimilar, false);
  const between = verify(...pairAt((NOT_SIMILAR_BELOW + VERIFICATION_THRESHOLD) / 2));
  assert.equal(between.isSimilar, null);
  assert.match(between.reason!, /undecided/);
  assert.equal(verify(...pairAt(NOT_SIMILAR_BELOW)).isSimilar, null, 'the lower threshold itself is undecided');
  for (const result of [same, other, between]) {
    assert.equal(result.threshold, VERIFICATION_THRESHOLD);
    assert.equal(result.notSimilarBelow, NOT_SIMILAR_BELOW);
  }
  // Opposite embeddings are as dissimilar as it gets, not negative.
  assert.equal(verify([1, 0], [-1, 0]).similarity, 0);
});

test('without a face on one side nothing is compared: undecided, saying why', () => {
  const result = unverified('no face was found in the reference image');
  assert.equal(result.isSimilar, null);
  assert.equal(result.similarity, null);
  assert.match(result.reason!, /reference/);
});
