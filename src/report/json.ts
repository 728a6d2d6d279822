import type { Analysis } from '../analyze/analyze.js';
import { hintSentences, warningSentences } from './hint-text.js';

/** Version of the JSON report's shape; bumped only on a breaking change. */
export const JSON_REPORT_VERSION = 1;

const r3 = (ms: number) => Math.round(ms * 1000) / 1000;
const iso = (ms: number) => new Date(ms).toISOString();

/** The JSON report: stable, documented in README, read by later tools. */
export function renderJson(analysis: Analysis): string {
  const report = {
    version: JSON_REPORT_VERSION,
    generatedAt: iso(analysis.generatedAtMs),
    window: analysis.patterns.length
      ? { from: iso(analysis.window.fromMs), to: iso(analysis.window.toMs) }
      : { from: null, to: null },
    policy: { ...analysis.policy },
    sources: analysis.sources,
    // Sentences, as the report has always carried them (worded in hint-text.ts).
    warnings: warningSentences(analysis),
    // Stretches of time a watcher could not see (lost notifications): counts of the hours they touch are lower bounds.
    gaps: analysis.gaps.map((g) => ({ source: g.source, instance: g.instance, from: iso(g.fromMs), to: iso(g.toMs), reason: g.reason, openHolds: g.openHolds })),
    patterns: analysis.patterns.map((p) => ({
      pattern: p.pattern,
      count: p.count,
      holdCount: p.holdCount,
      p50Ms: r3(p.holdMs.p50),
      p90Ms: r3(p.holdMs.p90),
      p99Ms: r3(p.holdMs.p99),
      p999Ms: r3(p.holdMs.p999),
      maxMs: r3(p.holdMs.max),
      meanMs: r3(p.holdMs.mean),
      p99UpperBoundMs: p.p99UpperBoundMs === undefined ? null : r3(p.p99UpperBoundMs),
      // null when no lock of the pattern had its wait measured (all seen by `watch`)
      waitP50Ms: p.waitCount === 0 ? null : r3(p.waitMs.p50),
      waitP99Ms: p.waitCount === 0 ? null : r3(p.waitMs.p99),
      currentTtlMs: p.ttl.currentMs,
      ttlRangeMs: [p.ttl.minMs, p.ttl.maxMs],
      recommendedTtlMs: p.recommendedTtlMs,
      verdict: p.verdict,
      outcomes: { ...p.outcomes },
      threw: p.threw,
      extended: p.extended,
      extensions: p.extensions,
      firstAt: iso(p.firstMs),
      lastAt: iso(p.lastMs),
      hints: hintSentences(p),
      contended: p.contended,
      // Hours a gap touched: the counts above are then lower bounds.
      incompleteHours: p.incompleteHours,
      risk: {
        headroomP99: p.risk.headroom.p99 === null ? null : r3(p.risk.headroom.p99),
        headroomMax: p.risk.headroom.max === null ? null : r3(p.risk.headroom.max),
        nearMisses: p.risk.nearMisses,
        overCurrentTtl: p.risk.overCurrentTtl,
        overRecommendedTtl: p.risk.overRecommendedTtl,
        perDay: {
          nearMisses: r3(p.risk.perDay.nearMisses),
          overCurrentTtl: r3(p.risk.perDay.overCurrentTtl),
          overRecommendedTtl: r3(p.risk.perDay.overRecommendedTtl),
        },
        crashWaitMs: { ...p.risk.crashWaitMs },
      },
      hourly: p.hourly.map((h) => ({ hour: iso(h.hourStartMs), count: h.count, p99Ms: r3(h.p99Ms), maxMs: r3(h.maxMs), ...(h.incomplete && { incomplete: true }) })),
    })),
  };
  return JSON.stringify(report, null, 2) + '\n';
}
