import { MIN_SAMPLES_FOR_P99 } from './confidence.js';
import { TOO_LONG_FACTOR } from './recommend.js';

/**
 * What a pattern's numbers say about a TTL, worst first:
 * - `expired`: a lock was lost in production (critical);
 * - `too-short`: the TTL is below the recommendation;
 * - `too-long`: the TTL is more than 3× the recommendation (a crashed holder blocks others needlessly);
 * - `ok`;
 * - `insufficient-data`: too few samples for a p99 claim at 95 % confidence.
 */
export type Verdict = 'expired' | 'too-short' | 'too-long' | 'ok' | 'insufficient-data';

/** Every verdict, in the order reports list them: worst first. */
export const VERDICTS: readonly Verdict[] = Object.freeze(['expired', 'too-short', 'too-long', 'ok', 'insufficient-data']);

/** What a verdict is judged from. */
export interface VerdictEvidence {
  /** Locks that expired while held. */
  expired: number;
  /** Acquisitions with a hold time. */
  holdCount: number;
  recommendedTtlMs: number;
}

/** The verdict for a TTL (the one in use, or one from a policy file), given a pattern's data. */
export function verdictFor(ttlMs: number, evidence: VerdictEvidence): Verdict {
  if (evidence.expired > 0) return 'expired';
  if (evidence.holdCount < MIN_SAMPLES_FOR_P99) return 'insufficient-data';
  if (ttlMs < evidence.recommendedTtlMs) return 'too-short';
  if (ttlMs > TOO_LONG_FACTOR * evidence.recommendedTtlMs) return 'too-long';
  return 'ok';
}

/** Sorts worst verdict first. */
export function compareVerdicts(a: Verdict, b: Verdict): number {
  return VERDICTS.indexOf(a) - VERDICTS.indexOf(b);
}
