/**
 * Face verification: are two faces the same person? The score is the cosine similarity of
 * the two L2-normalised embeddings, clamped to 0..1 (negative cosines are as dissimilar as
 * it gets). The answer has three outcomes, because between the two thresholds the embedding
 * cannot tell a person from a look-alike: `isSimilar` is true at or above VERIFICATION_THRESHOLD,
 * false below NOT_SIMILAR_BELOW, and null (undecided, with the reason) in between. Both were
 * chosen on LFW identities (`src/eval/face-verification-lfw.ts`, see the README's figures).
 */
import { round4 } from '../result.js';
import { cosine } from './face-analysis.js';

// Chosen on the even-indexed half of 1,255 LFW identities (first two photos of each person,
// muxspace/facial_expressions): the lowest similarity at which at most 0.1 % of impostor pairs
// pass (0.071 %), and the highest under which at most 5 % of the same person's pairs fall
// (4.4 %). On the odd half, measured once afterwards: the same person true 65.7 %, undecided
// 29.6 %, false 4.7 %; impostors true 0.07 %, undecided 6.8 %, false 93.2 %. The single
// threshold of 0.55 used before passed 2.4 % of those impostors.
export const VERIFICATION_THRESHOLD = 0.65;
export const NOT_SIMILAR_BELOW = 0.51;

export interface Verification {
  /** True: the same person; false: someone else; null: undecided (see `reason`). */
  isSimilar: boolean | null;
  similarity: number | null;
  threshold: number;
  notSimilarBelow: number;
  reason?: string;
}

export function similarityFromCosine(value: number): number {
  return Math.min(1, Math.max(0, value));
}

export function verify(a: readonly number[], b: readonly number[]): Verification {
  const similarity = round4(similarityFromCosine(cosine(a, b)));
  const thresholds = { threshold: VERIFICATION_THRESHOLD, notSimilarBelow: NOT_SIMILAR_BELOW };
  if (similarity >= VERIFICATION_THRESHOLD) return { isSimilar: true, similarity, ...thresholds };
  if (similarity < NOT_SIMILAR_BELOW) return { isSimilar: false, similarity, ...thresholds };
  return {
    isSimilar: null,
    similarity,
    ...thresholds,
    reason: `similarity ${similarity} lies between ${NOT_SIMILAR_BELOW} and ${VERIFICATION_THRESHOLD}, where the same person and a look-alike both fall: undecided`,
  };
}

/** No comparison could be made (no face on one side): undecided, saying why. */
export function unverified(reason: string): Verification {
  return { isSimilar: null, similarity: null, threshold: VERIFICATION_THRESHOLD, notSimilarBelow: NOT_SIMILAR_BELOW, reason };
}
