import { MIN_SAMPLES_FOR_P99 } from './confidence.js';
import { TOO_LONG_FACTOR } from './recommend.js';

/**
 * What a pattern's numbers say about a TTL, worst first:
 * - `expired`: a lock was lost in production (critical);
 * - `too-short`: the TTL is below what the data needs (multiplier × p99, and the p99's upper bound);
 * - `too-long`: the TTL is more than 3× the recommendation (a crashed holder blocks others needlessly);
 * - `below-floor`: the TTL covers the data's need but is under the recommendation's floor (hygiene, not risk);
 * - `ok`;
 * - `insufficient-data`: too few samples for a p99 claim at 95 % confidence (a lease: too few renewals).
 * For a lease (a renewed lock, see `lease.ts`):
 * - `lease-at-risk`: a renewal came with under 20 % of the TTL left (or half an on-time renewal's margin), or a lease ran out;
 * - `lease-too-long`: the lease is over 3× what renewal lateness needs (a crash blocks others that long).
 */
export type Verdict = 'expired' | 'lease-at-risk' | 'too-short' | 'too-long' | 'lease-too-long' | 'below-floor' | 'ok' | 'insufficient-data';

/** Every verdict, in the order reports list them: worst first. */
export const VERDICTS: readonly Verdict[] = Object.freeze(['expired', 'lease-at-risk', 'too-short', 'too-long', 'lease-too-long', 'below-floor', 'ok', 'insufficient-data']);

/** What a verdict is judged from. */
export interface VerdictEvidence {
  /** Locks that expired while held. */
  expired: number;
  /** Acquisitions with a hold time. */
  holdCount: number;
  recommendedTtlMs: number;
  /** What the data itself needs, before the floor and the rounding: multiplier × p99, at least the p99's upper bound. */
  neededMs: number;
  /** The lowest TTL recommended (ms). */
  floorMs: number;
}

/** The verdict for a TTL (the one in use, or one from a policy file), given a pattern's data. */
export function verdictFor(ttlMs: number, evidence: VerdictEvidence): Verdict {
  if (evidence.expired > 0) return 'expired';
  if (evidence.holdCount < MIN_SAMPLES_FOR_P99) return 'insufficient-data';
  if (ttlMs < evidence.recommendedTtlMs) {
    // Short of what the data needs is risk; short only of the floor is hygiene; short only of the rounding, nothing.
    if (ttlMs < evidence.neededMs) return 'too-short';
    if (ttlMs < evidence.floorMs) return 'below-floor';
    return 'ok';
  }
  if (ttlMs > TOO_LONG_FACTOR * evidence.recommendedTtlMs) return 'too-long';
  return 'ok';
}

/** Sorts worst verdict first. */
export function compareVerdicts(a: Verdict, b: Verdict): number {
  return VERDICTS.indexOf(a) - VERDICTS.indexOf(b);
}
