import { highestValueAt, lowestValueAt } from '../store/histogram/buckets.js';
import type { DenseHistogram } from '../store/histogram/histogram.js';
import { DAY_MS, HOUR_MS } from '../units.js';

/**
 * What a TTL risks, in numbers an SRE decides from: how close the observed
 * holds came to the TTL in use, how many outlived it, how many would outlive
 * the recommended one, and what a crashed holder costs the others.
 */
export interface Risk {
  /** The TTL in use ÷ the hold p99, and ÷ the longest hold: how many times over it covers them (`null` without holds). */
  headroom: { p99: number | null; max: number | null };
  /** Holds longer than half the TTL in use: the near misses. */
  nearMisses: number;
  /** Holds longer than the TTL in use: each outlived its lock (an expiration, unless the lock was extended). */
  overCurrentTtl: number;
  /** Holds longer than the recommended TTL: what would still outlive it. */
  overRecommendedTtl: number;
  /**
   * The same three as rates: per day from at least a day of data, else per hour, with the
   * span they come from (a rate from 40 s of data says so).
   */
  rate: RiskRate;
  /** How long every other instance waits when a holder crashes while holding: the TTL, in use and recommended (ms). */
  crashWaitMs: { current: number; recommended: number };
  /**
   * Some holds were not seen to end (censored): the counts above include those that certainly
   * outlived a threshold (seen held at least that long), and are lower bounds.
   */
  lowerBound: boolean;
}

export interface RiskRate {
  per: 'day' | 'hour';
  /** The span of data the rate comes from (ms). */
  spanMs: number;
  nearMisses: number;
  overCurrentTtl: number;
  overRecommendedTtl: number;
}

/** Counts as a rate: per day from at least a day of data, else per hour (from however little there is). */
export function rateOf(spanMs: number): { per: 'day' | 'hour'; units: number } {
  return spanMs >= DAY_MS ? { per: 'day', units: spanMs / DAY_MS } : { per: 'hour', units: Math.max(spanMs, 1000) / HOUR_MS };
}

/**
 * The risk figures of one pattern from its merged hold-time histogram. Counts
 * of holds above a threshold include the bucket that straddles it, so they are
 * never below the true count and at most one bucket (0.1 % of the threshold)
 * above it: a risk is never understated.
 */
export function riskOf(
  hold: DenseHistogram,
  ttlMs: number,
  recommendedTtlMs: number,
  spanMs: number,
  parts?: { seen: DenseHistogram; censored: DenseHistogram },
): Risk {
  const p99 = hold.valueAtPercentile(99) / 1000;
  const max = hold.maxValue / 1000;
  // A censored hold (its end unseen) outlived a threshold when it was seen held at least that long.
  const over = (thresholdMs: number) => (parts ? holdsAbove(parts.seen, thresholdMs) + heldAtLeast(parts.censored, thresholdMs) : holdsAbove(hold, thresholdMs));
  const nearMisses = over(ttlMs / 2);
  const overCurrentTtl = over(ttlMs);
  const overRecommendedTtl = over(recommendedTtlMs);
  const { per, units } = rateOf(spanMs);
  return {
    headroom: hold.totalCount === 0 || ttlMs <= 0 ? { p99: null, max: null } : { p99: ratio(ttlMs, p99), max: ratio(ttlMs, max) },
    nearMisses,
    overCurrentTtl,
    overRecommendedTtl,
    rate: { per, spanMs, nearMisses: nearMisses / units, overCurrentTtl: overCurrentTtl / units, overRecommendedTtl: overRecommendedTtl / units },
    crashWaitMs: { current: ttlMs, recommended: recommendedTtlMs },
    lowerBound: (parts?.censored.totalCount ?? 0) > 0,
  };
}

/** Censored holds seen held at least `thresholdMs` (each bucket's lowest value, clamped to the exact min). */
function heldAtLeast(censored: DenseHistogram, thresholdMs: number): number {
  if (censored.totalCount === 0) return 0;
  let count = 0;
  censored.forEachBucket((index, n) => {
    if (Math.max(lowestValueAt(index), censored.minValue) >= thresholdMs * 1000) count += n;
  });
  return count;
}

/** Holds longer than `thresholdMs`, counting the bucket that straddles it. */
export function holdsAbove(hold: DenseHistogram, thresholdMs: number): number {
  if (hold.totalCount === 0 || hold.maxValue <= thresholdMs * 1000) return 0;
  const thresholdUs = thresholdMs * 1000;
  let count = 0;
  hold.forEachBucket((index, n) => {
    if (Math.min(highestValueAt(index), hold.maxValue) > thresholdUs) count += n;
  });
  return count;
}

function ratio(ttlMs: number, holdMs: number): number | null {
  return holdMs > 0 ? ttlMs / holdMs : null;
}
