import type { Analysis } from '../../src/analyze/analyze.js';
import { DEFAULT_RECOMMENDATION_POLICY, recommendTtl, type RecommendationPolicy } from '../../src/analyze/recommend.js';
import type { PatternAnalysis } from '../../src/analyze/summarize.js';
import { decide } from '../../src/analyze/decision.js';
import type { LeaseAnalysis } from '../../src/analyze/lease.js';
import { riskOf } from '../../src/analyze/risk.js';
import { DenseHistogram } from '../../src/store/histogram/histogram.js';

const DAY_MS = 86_400_000;

/** What a test says about a pattern; everything else follows from it as the analyzer would derive it. */
export interface PatternFacts {
  /** Hold-time p99 (ms). @default 1000 */
  p99Ms?: number;
  /** Hold times recorded. @default 1000 */
  holdCount?: number;
  /** The TTL in use in the data (ms). @default 3000 */
  currentTtlMs?: number;
  expired?: number;
  /** Hold times (ms) of the expired locks that have raw rows. */
  expiredHoldsMs?: number[];
  contended?: boolean;
  /** How long the data spans (ms). @default 2 days */
  spanMs?: number;
  /** The longest hold (ms). @default 1.5 × p99 */
  maxMs?: number;
  /** Holds above the p99 as [upper edge (ms), count] (see `holdTail`). @default one hold at `maxMs` */
  holdTail?: [number, number][];
  /** Holds whose end was not seen; with `p99LowerBound`, the p99 reaches them. @default 0 */
  censored?: number;
  p99LowerBound?: boolean;
  /** The pattern is a lease: these fields over a lease renewing in time (1,000 renewals, q99.9 lateness 20 ms, recommended 3 s). */
  lease?: Partial<LeaseAnalysis>;
}

/** A lease renewing in time at `ttlMs`, every half of it, as `analyzeLease` would describe it. */
function leaseOf(ttlMs: number, holdCount: number, over: Partial<LeaseAnalysis>): LeaseAnalysis {
  return {
    holds: holdCount,
    renewals: 1000,
    library: 'unknown',
    mode: 'period',
    periodMs: ttlMs / 2,
    periodSource: 'known',
    alpha: 0.5,
    gapMs: { p50: ttlMs / 2, p99: ttlMs / 2 + 10, max: ttlMs / 2 + 30 },
    latenessMs: { p99: 10, p999: 20, max: 30 },
    minMarginMs: ttlMs / 2 - 30,
    atRiskBelowMs: ttlMs / 5,
    atRisk: 0,
    ranOut: 0,
    roundTripMs: null,
    loopDelayMaxMs: null,
    recommended: { leaseMs: 3000, renewEveryMs: 1500, maxHoldMs: 3000 },
    verdict: 'ok',
    hourly: [],
    lateness: [],
    ...over,
  };
}

/**
 * One pattern's analysis built from a few facts, without a database: the
 * recommendation, the need and the verdict computed by the analyzer's own
 * functions, so policy tests exercise check and apply, not a copy of them.
 */
export function patternAnalysis(pattern: string, facts: PatternFacts = {}, policy: RecommendationPolicy = DEFAULT_RECOMMENDATION_POLICY): PatternAnalysis {
  const p99Ms = facts.p99Ms ?? 1000;
  const holdCount = facts.holdCount ?? 1000;
  const currentTtlMs = facts.currentTtlMs ?? 3000;
  const expired = facts.expired ?? 0;
  const spanMs = facts.spanMs ?? 2 * DAY_MS;
  const lease = facts.lease && leaseOf(currentTtlMs, holdCount, facts.lease);
  const recommendedTtlMs = lease ? lease.recommended.leaseMs : recommendTtl(p99Ms, policy);
  const neededMs = policy.multiplier * p99Ms;
  const firstMs = Date.UTC(2026, 10, 28);
  const maxMs = facts.maxMs ?? p99Ms * 1.5;
  const censored = facts.censored ?? 0;
  const lower = facts.p99LowerBound ?? false;
  const p: PatternAnalysis = {
    pattern,
    count: holdCount + expired,
    holdCount,
    holdMs: { p50: p99Ms / 3, p90: p99Ms / 2, p99: p99Ms, p999: Math.min(p99Ms * 1.2, maxMs), max: maxMs, mean: p99Ms / 3 },
    censored,
    holdLowerBound: { p50: false, p90: false, p99: lower, p999: lower, max: censored > 0, mean: censored > 0 },
    ...(lower && { p99CeilingMs: null }),
    holdTail: facts.holdTail ?? (maxMs > p99Ms ? [[maxMs, 1]] : []),
    waitMs: { p50: 0, p99: facts.contended ? 500 : 1 },
    waitCount: holdCount,
    outcomes: { released: holdCount, expired, not_acquired: 0, error: 0, lost: 0 },
    threw: 0,
    unconfirmed: 0,
    extended: 0,
    extensions: 0,
    ttl: { currentMs: currentTtlMs, minMs: currentTtlMs, maxMs: currentTtlMs },
    firstMs,
    lastMs: firstMs + spanMs,
    p99UpperBoundMs: undefined,
    recommendedTtlMs,
    neededMs,
    verdict: 'ok',
    decision: undefined as never,
    hints: [],
    contended: facts.contended ?? false,
    hourly: [],
    distribution: [],
    unreadableRows: 0,
    incompleteHours: 0,
    risk: riskOf(new DenseHistogram(), currentTtlMs, recommendedTtlMs, spanMs),
    ...(facts.expiredHoldsMs && { expiredHoldsMs: facts.expiredHoldsMs }),
    ...(lease && { lease }),
  };
  // The verdict the analyzer gives: the decision for the TTL in use.
  p.decision = decide(p, { ttlMs: currentTtlMs, source: 'in-use' }, policy);
  p.verdict = p.decision.verdict;
  return p;
}

/** An analysis of the given patterns, in the order given. */
export function analysisOf(patterns: PatternAnalysis[], policy: RecommendationPolicy = DEFAULT_RECOMMENDATION_POLICY): Analysis {
  const fromMs = Math.min(...patterns.map((p) => p.firstMs));
  const toMs = Math.max(...patterns.map((p) => p.lastMs));
  return {
    generatedAtMs: toMs,
    window: patterns.length ? { fromMs, toMs } : { fromMs: 0, toMs: 0 },
    requested: { sinceMs: undefined, untilMs: undefined },
    policy,
    sources: ['samples.db'],
    patterns,
    unconfirmed: [],
    warnings: [],
    gaps: [],
  };
}
