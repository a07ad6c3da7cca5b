/** Metrics for labelled detector evaluation (label 1 = positive class: AI, forged, spoof…). */

export interface Scored {
  score: number;
  label: 0 | 1;
}

/** Area under the ROC curve by the rank-sum (Mann–Whitney U) formula, ties counted half. */
export function auc(samples: readonly Scored[]): number | null {
  const positives = samples.filter((s) => s.label === 1).length;
  const negatives = samples.length - positives;
  if (positives === 0 || negatives === 0) return null;
  const sorted = [...samples].sort((a, b) => a.score - b.score);
  let rankSumPositive = 0;
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j < sorted.length && sorted[j]!.score === sorted[i]!.score) j++;
    const averageRank = (i + 1 + j) / 2; // ranks are 1-based
    for (let k = i; k < j; k++) if (sorted[k]!.label === 1) rankSumPositive += averageRank;
    i = j;
  }
  return (rankSumPositive - (positives * (positives + 1)) / 2) / (positives * negatives);
}

export interface ThresholdMetrics {
  threshold: number;
  accuracy: number;
  precision: number | null;
  recall: number | null;
  f1: number | null;
  falsePositiveRate: number | null;
  truePositives: number;
  falsePositives: number;
  trueNegatives: number;
  falseNegatives: number;
}

export function atThreshold(samples: readonly Scored[], threshold: number): ThresholdMetrics {
  let tp = 0, fp = 0, tn = 0, fn = 0;
  for (const { score, label } of samples) {
    const predicted = score >= threshold;
    if (predicted && label === 1) tp++;
    else if (predicted) fp++;
    else if (label === 1) fn++;
    else tn++;
  }
  const precision = tp + fp ? tp / (tp + fp) : null;
  const recall = tp + fn ? tp / (tp + fn) : null;
  const f1 = precision !== null && recall !== null && precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : null;
  return {
    threshold,
    accuracy: samples.length ? (tp + tn) / samples.length : 0,
    precision,
    recall,
    f1,
    falsePositiveRate: fp + tn ? fp / (fp + tn) : null,
    truePositives: tp,
    falsePositives: fp,
    trueNegatives: tn,
    falseNegatives: fn,
  };
}

/** Expected calibration error over equal-width score bins (Guo et al., ICML 2017). */
export function expectedCalibrationError(samples: readonly Scored[], bins = 10): number {
  if (samples.length === 0) return 0;
  let total = 0;
  for (let b = 0; b < bins; b++) {
    const low = b / bins;
    const high = (b + 1) / bins;
    const inBin = samples.filter((s) => s.score >= low && (b === bins - 1 ? s.score <= high : s.score < high));
    if (inBin.length === 0) continue;
    const meanScore = inBin.reduce((sum, s) => sum + s.score, 0) / inBin.length;
    const positiveRate = inBin.filter((s) => s.label === 1).length / inBin.length;
    total += (inBin.length / samples.length) * Math.abs(meanScore - positiveRate);
  }
  return total;
}

/** Equal error rate: where the false-accept and false-reject rates cross. */
export function equalErrorRate(samples: readonly Scored[]): { eer: number; threshold: number } | null {
  const positives = samples.filter((s) => s.label === 1);
  const negatives = samples.filter((s) => s.label === 0);
  if (!positives.length || !negatives.length) return null;
  const thresholds = [...new Set(samples.map((s) => s.score))].sort((a, b) => a - b);
  let best = { eer: 1, threshold: 0.5, gap: Infinity };
  for (const threshold of thresholds) {
    const falseReject = positives.filter((s) => s.score < threshold).length / positives.length;
    const falseAccept = negatives.filter((s) => s.score >= threshold).length / negatives.length;
    const gap = Math.abs(falseReject - falseAccept);
    if (gap < best.gap) best = { eer: (falseReject + falseAccept) / 2, threshold, gap };
  }
  return { eer: best.eer, threshold: best.threshold };
}

/** True-accept rate at the threshold that keeps the false-accept rate at or below `far`. */
export function tarAtFar(samples: readonly Scored[], far: number): { tar: number; threshold: number } | null {
  const positives = samples.filter((s) => s.label === 1);
  const negatives = samples.filter((s) => s.label === 0).map((s) => s.score).sort((a, b) => b - a);
  if (!positives.length || !negatives.length) return null;
  const allowed = Math.floor(far * negatives.length);
  // Smallest threshold strictly above the (allowed+1)-th highest impostor score.
  const threshold = negatives[allowed] === undefined ? -Infinity : negatives[allowed]! + 1e-9;
  return { tar: positives.filter((s) => s.score >= threshold).length / positives.length, threshold };
}
