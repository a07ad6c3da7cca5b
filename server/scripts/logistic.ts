/**
 * L2-regularised logistic regression fitted by Newton's method (iteratively reweighted least
 * squares), shared by the fitting scripts of the detectors' fusion weights.
 */

export interface LogisticSample {
  x: readonly number[];
  label: 0 | 1 | number;
  /** Sample weight (class balancing); 1 when absent. */
  weight?: number;
  /** Fixed log-odds added to the sample's (a model fitted earlier, extended by new features). */
  offset?: number;
}

/** `intercept: false` keeps b at 0: the samples' offsets already carry the bias. */
export function fitLogistic(samples: readonly LogisticSample[], dims: number, l2: number, iterations = 25, { intercept = true } = {}): { w: number[]; b: number } {
  const n = dims + 1;
  // theta = [b, w…]; the penalty applies to w only.
  let theta = new Array<number>(n).fill(0);
  for (let it = 0; it < iterations; it++) {
    const gradient = new Array<number>(n).fill(0);
    const hessian = Array.from({ length: n }, () => new Array<number>(n).fill(0));
    for (const sample of samples) {
      const weight = sample.weight ?? 1;
      const xs = [1, ...sample.x];
      const p = 1 / (1 + Math.exp(-(sample.offset ?? 0) - xs.reduce((sum, v, k) => sum + v * theta[k]!, 0)));
      for (let a = 0; a < n; a++) {
        gradient[a]! += weight * (p - sample.label) * xs[a]!;
        for (let c = 0; c < n; c++) hessian[a]![c]! += weight * p * (1 - p) * xs[a]! * xs[c]!;
      }
    }
    for (let a = 1; a < n; a++) {
      gradient[a]! += l2 * theta[a]!;
      hessian[a]![a]! += l2;
    }
    if (!intercept) {
      gradient[0] = 0;
      for (let a = 0; a < n; a++) hessian[0]![a] = hessian[a]![0] = a === 0 ? 1 : 0;
    }
    const step = solve(hessian, gradient);
    theta = theta.map((v, k) => v - step[k]!);
  }
  return { b: theta[0]!, w: theta.slice(1) };
}

/** Gauss–Jordan elimination with partial pivoting (the systems here are tiny). */
function solve(a: number[][], y: number[]): number[] {
  const n = y.length;
  const m = a.map((row, i) => [...row, y[i]!]);
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[pivot]![c]!)) pivot = r;
    [m[c], m[pivot]] = [m[pivot]!, m[c]!];
    const d = m[c]![c]! || 1e-12;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / d;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, i) => row[n]! / (row[i]! || 1e-12));
}
