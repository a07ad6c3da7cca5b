import type { Signal, Verdict, VerdictFlag } from './types.js';

/**
 * The result envelope every verdict-style detector returns (DESIGN.md §3):
 * `score` is the calibrated probability of the positive class, `verdict` the decision,
 * `confidence` the confidence in that decision, plus the task type's boolean flag.
 */
export interface VerdictResult {
  score: number;
  confidence: number;
  verdict: Verdict;
  [flag: string]: unknown;
  analysisDetails: {
    detector: { name: string; version: string };
    signals: Signal[];
    [detail: string]: unknown;
  };
}

export interface VerdictOptions {
  flag: VerdictFlag;
  detector: { name: string; version: string };
  score: number;
  /** Set when the evidence cannot support a decision either way. */
  inconclusive?: boolean;
  /** Score at or above which the verdict is `manipulated` (default 0.5). */
  threshold?: number;
  /** Override the derived confidence (e.g. when the evidence is cryptographic). */
  confidence?: number;
  signals: Signal[];
  details?: Record<string, unknown>;
}

const clamp01 = (value: number) => Math.min(1, Math.max(0, value));

/** Logistic function: fused log-odds back to a probability. */
export const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * Log-odds of a probability held inside [0.001, 0.999], the form in which detectors add up
 * evidence: no single signal at 0 or 1 can outweigh all the others with an infinity.
 */
export const logOdds = (p: number) => {
  const held = Math.min(0.999, Math.max(0.001, p));
  return Math.log(held / (1 - held));
};

/** Round to 4 decimals so results read cleanly and compare stably. */
export const round4 = (value: number) => Math.round(value * 10_000) / 10_000;

export function verdictResult(options: VerdictOptions): VerdictResult {
  const score = clamp01(options.score);
  const threshold = options.threshold ?? 0.5;
  const positive = score >= threshold;
  const verdict: Verdict = options.inconclusive ? 'inconclusive' : positive ? 'manipulated' : 'authentic';
  // Distance from the threshold, rescaled to 0..1 on each side; an inconclusive answer
  // never claims more than 0.5.
  const derived = positive ? (score - threshold) / (1 - threshold || 1) : (threshold - score) / (threshold || 1);
  const confidence = clamp01(options.confidence ?? (options.inconclusive ? Math.min(0.5, derived) : 0.5 + derived / 2));
  return {
    score: round4(score),
    confidence: round4(options.inconclusive ? Math.min(confidence, 0.5) : confidence),
    verdict,
    [options.flag]: verdict === 'manipulated',
    analysisDetails: { detector: options.detector, signals: options.signals, ...options.details },
  };
}
