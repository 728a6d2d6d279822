import type { Analysis } from '../../src/analyze/analyze.js';
import { DEFAULT_RECOMMENDATION_POLICY, recommendTtl, type RecommendationPolicy } from '../../src/analyze/recommend.js';
import type { PatternAnalysis } from '../../src/analyze/summarize.js';
import { verdictFor } from '../../src/analyze/verdict.js';
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
  const recommendedTtlMs = recommendTtl(p99Ms, policy);
  const neededMs = policy.multiplier * p99Ms;
  const firstMs = Date.UTC(2026, 10, 28);
  return {
    pattern,
    count: holdCount + expired,
    holdCount,
    holdMs: { p50: p99Ms / 3, p90: p99Ms / 2, p99: p99Ms, p999: p99Ms * 1.2, max: p99Ms * 1.5, mean: p99Ms / 3 },
    waitMs: { p50: 0, p99: facts.contended ? 500 : 1 },
    waitCount: holdCount,
    outcomes: { released: holdCount, expired, not_acquired: 0, error: 0, lost: 0 },
    threw: 0,
    extended: 0,
    extensions: 0,
    ttl: { currentMs: currentTtlMs, minMs: currentTtlMs, maxMs: currentTtlMs },
    firstMs,
    lastMs: firstMs + spanMs,
    p99UpperBoundMs: undefined,
    recommendedTtlMs,
    neededMs,
    verdict: verdictFor(currentTtlMs, { expired, holdCount, recommendedTtlMs, neededMs, floorMs: policy.floorMs }),
    hints: [],
    contended: facts.contended ?? false,
    hourly: [],
    distribution: [],
    unreadableRows: 0,
    incompleteHours: 0,
    risk: riskOf(new DenseHistogram(), currentTtlMs, recommendedTtlMs, spanMs),
    ...(facts.expiredHoldsMs && { expiredHoldsMs: facts.expiredHoldsMs }),
  };
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
    warnings: [],
    gaps: [],
  };
}
