/**
 * Face verification: are two faces the same person? The score is the cosine similarity of
 * the two L2-normalised embeddings, clamped to 0..1 (negative cosines are as dissimilar as
 * it gets). The threshold was set from the measured genuine/impostor distribution of
 * `src/eval/face-verification.ts` (see the README's figures).
 */
import { round4 } from '../result.js';
import { cosine } from './face-analysis.js';

// Measured (face-verification eval): impostors p99 0.516, max 0.668 (n 20972); processed copies
// of one photo min 0.646 (n 190); different photos of one person median 0.64, min 0.42 (n 190).
// At 0.55: FAR 0.36 %, TAR 100 % on processed copies and 87 % across photos.
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
