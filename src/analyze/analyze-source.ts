import { OVERFLOW_PATTERN } from '../keys/pattern.js';
import type { SourceBucket, SourceData, SourcePattern } from '../source/types.js';
import { nearestRank } from '../store/histogram/buckets.js';
import { assembleAnalysis, checkWindow, type Analysis, type AnalyzeOptions } from './analyze.js';
import type { P99Bucket } from './decision.js';
import type { AnalysisWarning } from './hints.js';
import { resolveRecommendationPolicy, type RecommendationPolicy } from './recommend.js';
import { decidePattern, patternFigures, summarize, type PatternAnalysis } from './summarize.js';

/**
 * The analysis of data read from a source other than samples databases (Prometheus): the same
 * summary and the ONE decision per pattern, so report, check, apply and init work unchanged; each
 * pattern also carries the bucket its p99 lies in (`p99Bucket`), and a p99 above the last finite
 * bucket is refused a recommendation.
 */
export function analyzeSource(data: SourceData, options: AnalyzeOptions = {}): Analysis {
  const policy = resolveRecommendationPolicy(options);
  checkWindow(options.sinceMs, options.untilMs);
  // `{other}` is no critical section: counted apart, never advised on.
  const other = data.patterns.find((p) => p.pattern === OVERFLOW_PATTERN);
  const unattributed = other && summarize(other.pattern, other.rows, policy);
  const patterns = data.patterns.filter((p) => p !== other).map((p) => analyzePattern(p, policy));
  return assembleAnalysis(
    {
      patterns,
      unconfirmed: [],
      ...(unattributed ? { unattributed: { count: unattributed.count, firstMs: unattributed.firstMs, lastMs: unattributed.lastMs } } : {}),
      held: undefined,
      gaps: [],
      notes: leftOutNotes(data),
      unreadable: new Map(),
      sources: [data.source],
    },
    policy,
    options,
  );
}

/** What the source left out of what it read, as warnings: each kind once, with its count. */
function leftOutNotes({ leftOut }: SourceData): AnalysisWarning[] {
  if (!leftOut) return [];
  return [
    ...(leftOut.outsideWindow > 0 ? [{ kind: 'outside-window' as const, points: leftOut.outsideWindow }] : []),
    ...(leftOut.invalid > 0 ? [{ kind: 'invalid-values' as const, values: leftOut.invalid }] : []),
    ...(leftOut.overBudget ? [{ kind: 'pattern-budget' as const, ...leftOut.overBudget }] : []),
  ];
}

/** A pattern's figures with the bucket its p99 lies in, then its one decision. */
function analyzePattern(source: SourcePattern, policy: RecommendationPolicy): PatternAnalysis {
  const figures = patternFigures(source.pattern, source.rows, policy);
  const bucket = p99BucketOf(source);
  if (!bucket) return decidePattern(figures, policy);
  // Above the last bound the figure is the bound: a lower bound, said as `≥`.
  const holdLowerBound = bucket.highMs === null ? { ...figures.holdLowerBound, p99: true } : figures.holdLowerBound;
  return decidePattern({ ...figures, p99Bucket: bucket, holdLowerBound }, policy);
}

/**
 * The bucket the p99's nearest rank falls in, over the window; undefined without hold times. With
 * it, what PromQL's `histogram_quantile` would say of the same counts (linear within the bucket):
 * computed here from the exact counts, because `histogram_quantile` over `increase(…[window])`
 * gets extrapolated counts, and NaN for series born within the window whose buckets then stood still.
 */
export function p99BucketOf(source: Pick<SourcePattern, 'holdBuckets' | 'layout'>): P99Bucket | undefined {
  const buckets: readonly SourceBucket[] = source.holdBuckets;
  const total = buckets.reduce((n, b) => n + b.count, 0);
  if (total === 0) return undefined;
  const rank = nearestRank(99, total);
  let seen = 0;
  let lastFiniteMs = 0;
  for (const b of buckets) {
    const below = seen;
    seen += b.count;
    if (Number.isFinite(b.highMs)) lastFiniteMs = b.highMs;
    if (seen < rank) continue;
    const extra = {
      // Native histograms interpolate otherwise (exponentially) in PromQL: no figure said for them.
      ...(Number.isFinite(b.highMs) && source.layout.kind === 'classic' ? { estimateMs: b.lowMs + ((b.highMs - b.lowMs) * (0.99 * total - below)) / b.count } : {}),
      ...(source.layout.kind === 'native' ? { nativeSchema: source.layout.schema } : {}),
    };
    if (Number.isFinite(b.highMs)) return { lowMs: b.lowMs, highMs: b.highMs, ...extra };
    // The +Inf bucket: above the last finite bound of the layout (the buckets seen may stop lower).
    const last = source.layout.kind === 'classic' ? (source.layout.boundsMs.at(-1) ?? lastFiniteMs) : Math.max(lastFiniteMs, b.lowMs);
    return { lowMs: last, highMs: null, ...extra };
  }
  return undefined;
}
