/**
 * Face verification: are two faces the same person? The score is the cosine similarity of
 * the two L2-normalised embeddings, clamped to 0..1 (negative cosines are as dissimilar as
 * it gets). The threshold was set from the measured genuine/impostor distribution of
 * `src/eval/face-verification.ts` (see the README's figures).
 */
import { round4 } from '../result.js';
import { cosine } from './face-analysis.js';

// Measured: impostor cosines max 0.544 (p99 0.488, n 3014), genuine min 0.646 (n 180); 0.55
// admits no measured impostor and leaves room for genuine pairs from different photos.
export const VERIFICATION_THRESHOLD = 0.55;

export function similarityFromCosine(value: number): number {
  return Math.min(1, Math.max(0, value));
}

export interface Verification {
  isSimilar: boolean;
  similarity: number;
  threshold: number;
}

export function verify(a: readonly number[], b: readonly number[], threshold = VERIFICATION_THRESHOLD): Verification {
  const similarity = round4(similarityFromCosine(cosine(a, b)));
  return { isSimilar: similarity >= threshold, similarity, threshold };
}
