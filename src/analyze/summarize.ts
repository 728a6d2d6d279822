import type { LearnedPattern } from '../keys/learned-names.js';
import type { Outcome } from '../sample/sample.js';
import type { DenseHistogram } from '../store/histogram/histogram.js';
import { highestValueAt, lowestValueAt, nearestRank } from '../store/histogram/buckets.js';
import { logBins, mostCommon, type DistributionBin } from './bins.js';
import { MIN_SAMPLES_FOR_P99, upperBoundRank } from './confidence.js';
import { patternHints, type Hint } from './hints.js';
import type { HourRow } from './read-rollups.js';
import { recommendTtl, type RecommendationPolicy } from './recommend.js';
import { riskOf, type Risk } from './risk.js';
import type { Verdict } from './verdict.js';
import { decide, type Decision, type P99Bucket } from './decision.js';
import { analyzeLease, type LeaseAnalysis } from './lease.js';
import { foldRows, type HourlyPoint } from './pattern-fold.js';

export type { DistributionBin, HourlyPoint };

/** Everything the report says about one key pattern. */
export interface PatternAnalysis {
  pattern: string;
  /** How the pattern was learned from the keys, when it was (names merged, positions learned; see `learnNames`). */
  learned?: LearnedPattern;
  /** Acquisition attempts of every outcome. */
  count: number;
  /** Acquisitions that won the lock and have a hold time. */
  holdCount: number;
  /** Hold-time figures; the ones that reach a censored hold are lower bounds (see `holdLowerBound`). */
  holdMs: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  /**
   * Holds whose end was not seen (`watch`: the key expired; `instrument`: never released):
   * each was held at least as long as recorded (its TTL).
   */
  censored: number;
  /** Which hold-time figures are lower bounds: the rank they are read at falls on a censored hold (`≥` in reports). */
  holdLowerBound: { p50: boolean; p90: boolean; p99: boolean; p999: boolean; max: boolean; mean: boolean };
  /**
   * How far the censored holds could move the p99: what it would be if every one of them ran on
   * for ever (ms) — `null` when more than 1 % of holds are censored (then the p99 has no upper
   * bound). Absent when the p99 is exact.
   */
  p99CeilingMs?: number | null;
  waitMs: { p50: number; p99: number };
  /** Locks whose wait was measured; fewer than `count` when some came from `watch`, which sees no attempts (0: the wait is unknown). */
  waitCount: number;
  outcomes: Record<Outcome, number>;
  /** Critical sections that threw. */
  threw: number;
  /**
   * Samples `watch` took on this pattern before it saw a release on it (expirations). When every
   * sample is one, the pattern is not a confirmed lock: `analyze` reports it apart (`Analysis.unconfirmed`).
   */
  unconfirmed: number;
  /** Locks extended at least once while held (their TTL was not their hold budget), and their extensions. */
  extended: number;
  extensions: number;
  /** The pattern's locks are leases (renewed while held): how their renewals came, and the lease advice. */
  lease?: LeaseAnalysis;
  /** The TTL in use: the most common value, and the range seen (ms). */
  ttl: { currentMs: number; minMs: number; maxMs: number };
  firstMs: number;
  lastMs: number;
  /** 95 % upper confidence bound of the hold-time p99 (ms); absent below {@link MIN_SAMPLES_FOR_P99} samples. */
  p99UpperBoundMs: number | undefined;
  recommendedTtlMs: number;
  /** What the data needs before the floor and rounding: multiplier × p99, at least the p99's upper bound (ms). */
  neededMs: number;
  /** The decision for the TTL in use (`check` and `apply` take the same one for a policy's TTL). */
  verdict: Verdict;
  decision: Decision;
  /**
   * The holds whose end was seen above the p99, as [upper edge (ms), count], and every censored
   * hold as [seen held at least (ms), count, true]: how many holds a TTL above the p99 would not
   * cover (see `holdsOver`), and which expirations a TTL cannot cover, for any TTL a decision considers.
   */
  holdTail: [ms: number, count: number, censored?: true][];
  /** Notes beside the numbers (expirations, few samples, contention…), as data: `report/` words them. */
  hints: Hint[];
  /** Waits are long or acquisitions give up (see {@link CONTENTION_WAIT_P99_MS}): the key is probably too broad. */
  contended: boolean;
  hourly: HourlyPoint[];
  /** The hold-time distribution in log-spaced bins, for charts. */
  distribution: DistributionBin[];
  /** Rollup rows whose distributions could not be decoded (a damaged file): left out of every figure. */
  unreadableRows: number;
  /**
   * Hours in which a gap in what was seen (`watch` lost its notifications) may have cut this
   * pattern's locks: its counts are lower bounds. 0 when nothing was missed.
   */
  incompleteHours: number;
  /** How close the holds came to the TTL, and what the recommendation changes. */
  risk: Risk;
  /**
   * The hold times (ms) of the expired locks that have raw rows (the analyzer
   * reads them when some expired): `check` judges them against a policy's TTL.
   */
  expiredHoldsMs?: number[];
  /** Hold times read as histogram buckets (Prometheus): the bucket the p99 lies in; absent for our own histograms. */
  p99Bucket?: P99Bucket;
}

/** A wait p99 above this (ms), or more than {@link CONTENTION_NOT_ACQUIRED_RATE} failed acquisitions, suggests a too-broad key. */
export const CONTENTION_WAIT_P99_MS = 100;
export const CONTENTION_NOT_ACQUIRED_RATE = 0.01;
/** The hold-time chart's lowest bin (ms): on a log scale, holds under 1 µs show here. */
const HOLD_BIN_MIN_MS = 0.001;

/**
 * One pattern's numbers from its rollup rows (in time order): percentiles,
 * outcomes, the TTL in use, the hourly series, the recommendation and the verdict.
 */
export function summarize(pattern: string, rows: readonly HourRow[], policy: RecommendationPolicy, expiredHolds: () => number[] = () => []): PatternAnalysis {
  return decidePattern(patternFigures(pattern, rows, policy, expiredHolds), policy);
}

/** A pattern's figures before its decision: a source that knows more of them (the p99's bucket) adds it, then decides. */
export type PatternFigures = Omit<PatternAnalysis, 'verdict' | 'decision'>;

/**
 * The pattern's decision for the TTL in use, taken once: the report's verdict is the same decision
 * `check` and `apply` take for a policy's TTL.
 */
export function decidePattern(figures: PatternFigures, policy: RecommendationPolicy): PatternAnalysis {
  const decision = decide(figures, { ttlMs: figures.ttl.currentMs, source: 'in-use' }, policy);
  return { ...figures, verdict: decision.verdict, decision };
}

/** One pattern's figures from its rollup rows (in time order). */
export function patternFigures(pattern: string, rows: readonly HourRow[], policy: RecommendationPolicy, expiredHolds: () => number[] = () => []): PatternFigures {
  const { hold, seen, censored, wait, lease, ttls, outcomes, hourly, count, threw, unconfirmed, extended, extensions, unreadableRows, holdSumUs, firstMs, lastMs } = foldRows(rows);
  const holdCount = hold.totalCount;
  const ms = (us: number) => us / 1000;
  const p99Ms = ms(hold.valueAtPercentile(99));
  const rank = upperBoundRank(holdCount);
  const fixedTtlMs = recommendTtl(p99Ms, policy, ms(hold.maxValue));
  const p99UpperBoundMs = rank === undefined ? undefined : ms(hold.valueAtRank(rank));
  const neededMs = Math.max(policy.multiplier * p99Ms, p99UpperBoundMs ?? 0);
  const ttl = currentTtl(ttls);
  const leaseAnalysis = analyzeLease(lease, { holdCount, holdP99Ms: p99Ms, ttlMs: ttl.currentMs, floorMs: policy.floorMs, stepMs: policy.stepMs });
  // A lease's TTL is advised from its renewals' lateness, not from its hold time (see lease.ts).
  const recommendedTtlMs = leaseAnalysis ? leaseAnalysis.recommended.leaseMs : fixedTtlMs;
  const waitP99Ms = ms(wait.valueAtPercentile(99));

  const notAcquiredRate = count > 0 ? outcomes.not_acquired / count : 0;
  const contended = waitP99Ms > CONTENTION_WAIT_P99_MS || notAcquiredRate > CONTENTION_NOT_ACQUIRED_RATE;
  // A lease's extensions are its renewals, a finding of its own (`lease`), not a hint beside it.
  const hints = patternHints({ count, lost: outcomes.lost, waitCount: wait.totalCount, extended, extensions, ttl }).filter((h) => !leaseAnalysis || h.kind !== 'extended');

  const summary: PatternFigures = {
    pattern,
    count,
    holdCount,
    censored: censored.totalCount,
    holdLowerBound: lowerBounds(hold, censored),
    ...(censored.totalCount > 0 && censored.minValue <= hold.valueAtPercentile(99) ? { p99CeilingMs: p99Ceiling(seen, censored.totalCount) } : {}),
    holdMs: {
      p50: ms(hold.valueAtPercentile(50)),
      p90: ms(hold.valueAtPercentile(90)),
      p99: p99Ms,
      p999: ms(hold.valueAtPercentile(99.9)),
      max: ms(hold.maxValue),
      mean: holdCount > 0 ? ms(holdSumUs / holdCount) : 0,
    },
    waitMs: { p50: ms(wait.valueAtPercentile(50)), p99: waitP99Ms },
    waitCount: wait.totalCount,
    outcomes,
    threw,
    unconfirmed,
    extended,
    extensions,
    ...(leaseAnalysis ? { lease: leaseAnalysis } : {}),
    ttl,
    firstMs: Number.isFinite(firstMs) ? firstMs : 0,
    lastMs: Number.isFinite(lastMs) ? lastMs : 0,
    p99UpperBoundMs,
    neededMs,
    recommendedTtlMs,
    holdTail: holdTailOf(hold, seen, censored),
    hints,
    contended,
    hourly,
    distribution: logBins(hold, HOLD_BIN_MIN_MS),
    unreadableRows,
    incompleteHours: 0,
    risk: riskOf(hold, ttl.currentMs, recommendedTtlMs, Number.isFinite(firstMs) ? lastMs - firstMs : 0, { seen, censored }),
  };
  if (outcomes.expired > 0) summary.expiredHoldsMs = expiredHolds();
  return summary;
}

/** The holds above the p99 whose end was seen, by upper edge; every censored one, by how long it was seen held. */
function holdTailOf(hold: DenseHistogram, seen: DenseHistogram, censored: DenseHistogram): PatternAnalysis['holdTail'] {
  const tail: PatternAnalysis['holdTail'] = [];
  const p99Us = hold.valueAtPercentile(99);
  seen.forEachBucket((index, n) => {
    const highUs = highestValueAt(index);
    if (highUs > p99Us) tail.push([highUs / 1000, n]);
  });
  censored.forEachBucket((index, n) => void tail.push([Math.max(lowestValueAt(index), censored.minValue) / 1000, n, true]));
  return tail;
}

/**
 * Which figures are lower bounds: a percentile read at or above a censored hold's value could
 * be higher (that hold ran on, unseen); the longest hold and the mean, whenever any is censored.
 */
function lowerBounds(hold: DenseHistogram, censored: DenseHistogram): PatternAnalysis['holdLowerBound'] {
  const any = censored.totalCount > 0;
  const reaches = (percentile: number) => any && censored.minValue <= hold.valueAtPercentile(percentile);
  return { p50: reaches(50), p90: reaches(90), p99: reaches(99), p999: reaches(99.9), max: any, mean: any };
}

/**
 * The p99 if every censored hold ran on for ever: the same rank read among the holds whose end
 * was seen; `null` when the rank falls among the censored ones (no bound).
 */
function p99Ceiling(seen: DenseHistogram, censoredCount: number): number | null {
  const rank = nearestRank(99, seen.totalCount + censoredCount);
  return rank > seen.totalCount ? null : seen.valueAtRank(rank) / 1000;
}

function currentTtl(ttls: Map<number, number>): { currentMs: number; minMs: number; maxMs: number } {
  let minMs = Number.POSITIVE_INFINITY;
  let maxMs = 0;
  for (const ttl of ttls.keys()) {
    if (ttl < minMs) minMs = ttl;
    if (ttl > maxMs) maxMs = ttl;
  }
  return { currentMs: mostCommon(ttls, 0), minMs: Number.isFinite(minMs) ? minMs : 0, maxMs };
}
