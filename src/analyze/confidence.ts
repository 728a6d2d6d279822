/**
 * Distribution-free confidence bounds for a quantile from order statistics.
 *
 * The k-th smallest of n samples is at or above the true q-quantile with
 * probability P(Binomial(n, q) ≤ k − 1). The upper bound is the smallest k for
 * which that probability reaches the confidence level. When even k = n falls
 * short, no sample value bounds the quantile at that confidence: for q = 0.99
 * and 95 % this is the case below n = 299 (1 − 0.99^298 < 0.95).
 */

/** Samples needed before the sample maximum bounds the q-quantile at this confidence: ceil(ln(1 − c) / ln q). */
export function minSamplesForQuantile(quantile = 0.99, confidence = 0.95): number {
  return Math.ceil(Math.log(1 - confidence) / Math.log(quantile));
}

/** Below this many samples a p99 claim does not hold at 95 % confidence. */
export const MIN_SAMPLES_FOR_P99 = minSamplesForQuantile(0.99, 0.95);

/**
 * The 1-based rank of the order statistic that is an upper confidence bound of
 * the q-quantile, or `undefined` when n is too small.
 */
export function upperBoundRank(n: number, quantile = 0.99, confidence = 0.95): number | undefined {
  if (n < minSamplesForQuantile(quantile, confidence)) return undefined;
  const alpha = 1 - confidence;
  if (n > 200_000) {
    // Normal approximation with continuity correction; exact enough at this size, and O(1).
    const z = normalQuantile(confidence);
    const k = Math.ceil(n * quantile + z * Math.sqrt(n * quantile * (1 - quantile)) + 0.5);
    return Math.min(n, Math.max(1, k));
  }
  // Walk down from k = n, summing the upper tail P(Binomial ≥ k) in log space, until it exceeds alpha.
  const logQ = Math.log(quantile);
  const logP = Math.log(1 - quantile);
  let logTerm = n * logQ; // P(X = n)
  let tail = Math.exp(logTerm);
  let k = n;
  // tail = P(X ≥ k). We need the smallest k with P(X ≤ k − 1) ≥ confidence, i.e. P(X ≥ k) ≤ alpha.
  while (k > 1) {
    // P(X = k − 1) = P(X = k) · k / (n − k + 1) · (1 − q) / q
    const nextLogTerm = logTerm + Math.log(k) - Math.log(n - k + 1) + logP - logQ;
    const nextTail = tail + Math.exp(nextLogTerm);
    if (nextTail > alpha) break;
    tail = nextTail;
    logTerm = nextLogTerm;
    k--;
  }
  return k;
}

/** Acklam's rational approximation of the standard normal quantile (|error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}
