import type { Analysis } from '../analyze/analyze.js';
import type { LeaseAnalysis } from '../analyze/lease.js';
import { findingText, unconfirmedText } from './decision-text.js';
import { hintSentences, warningSentences } from './hint-text.js';
import { learnedText, unattributedText } from './pattern-text.js';

/** Version of the JSON report's shape; bumped only on a breaking change. */
export const JSON_REPORT_VERSION = 2;

const r3 = (ms: number) => Math.round(ms * 1000) / 1000;
const iso = (ms: number) => new Date(ms).toISOString();

/** The JSON report: stable, documented in README, read by later tools. */
export function renderJson(analysis: Analysis): string {
  const report = {
    version: JSON_REPORT_VERSION,
    generatedAt: iso(analysis.generatedAtMs),
    window: analysis.patterns.length || analysis.unconfirmed.length
      ? { from: iso(analysis.window.fromMs), to: iso(analysis.window.toMs) }
      : { from: null, to: null },
    policy: { ...analysis.policy },
    sources: analysis.sources,
    // Sentences, as the report has always carried them (worded in hint-text.ts).
    warnings: warningSentences(analysis),
    // Stretches of time a watcher could not see (lost notifications): counts of the hours they touch are lower bounds.
    gaps: analysis.gaps.map((g) => ({ source: g.source, instance: g.instance, from: iso(g.fromMs), to: iso(g.toMs), reason: g.reason, openHolds: g.openHolds })),
    // Patterns watch saw only expire, never released: no statistics of their own, no recommendation.
    unconfirmed: analysis.unconfirmed.map((u) => ({
      pattern: u.pattern,
      expired: u.expired,
      ttlMs: u.ttl.currentMs,
      ttlRangeMs: [u.ttl.minMs, u.ttl.maxMs],
      firstAt: iso(u.firstMs),
      lastAt: iso(u.lastMs),
      text: unconfirmedText(u),
    })),
    // Samples under {other}: past the pattern budget, or keys the learner had no room for; no advice (absent when none).
    ...(analysis.unattributed && { unattributed: { count: analysis.unattributed.count, text: unattributedText(analysis.unattributed) } }),
    patterns: analysis.patterns.map((p) => ({
      pattern: p.pattern,
      // How the pattern was learned from the keys (null: named as recorded): positions learned, names merged.
      learned: p.learned ? { names: p.learned.names, positions: p.learned.positions, text: learnedText(p.learned) } : null,
      count: p.count,
      holdCount: p.holdCount,
      p50Ms: r3(p.holdMs.p50),
      p90Ms: r3(p.holdMs.p90),
      p99Ms: r3(p.holdMs.p99),
      // A figure that reaches a hold whose end was not seen is a lower bound (the true value is at least it).
      p99IsLowerBound: p.holdLowerBound.p99,
      p999Ms: r3(p.holdMs.p999),
      maxMs: r3(p.holdMs.max),
      meanMs: r3(p.holdMs.mean),
      lowerBounds: { ...p.holdLowerBound },
      censored: p.censored,
      // The p99 if every censored hold ran on for ever; null: no upper bound (over 1 % censored). Absent when p99 is exact.
      ...(p.p99CeilingMs !== undefined && { p99CeilingMs: p.p99CeilingMs === null ? null : r3(p.p99CeilingMs) }),
      p99UpperBoundMs: p.p99UpperBoundMs === undefined ? null : r3(p.p99UpperBoundMs),
      // Read from histogram buckets (Prometheus): the p99 lies in (lowMs, highMs]; highMs null: above the last bucket.
      ...(p.p99Bucket && { p99Bucket: { ...p.p99Bucket } }),
      // null when no lock of the pattern had its wait measured (all seen by `watch`)
      waitP50Ms: p.waitCount === 0 ? null : r3(p.waitMs.p50),
      waitP99Ms: p.waitCount === 0 ? null : r3(p.waitMs.p99),
      currentTtlMs: p.ttl.currentMs,
      ttlRangeMs: [p.ttl.minMs, p.ttl.maxMs],
      recommendedTtlMs: p.recommendedTtlMs,
      // false: too few hold times, the number above is no advice; atLeast: a lower bound (censored holds).
      recommendation: { advice: !p.decision.insufficient, atLeast: p.decision.atLeast },
      verdict: p.verdict,
      // The decision for the TTL in use, in words (the one check and apply take).
      findings: p.decision.findings.map((f) => ({ kind: f.kind, text: findingText(f) })),
      outcomes: { ...p.outcomes },
      threw: p.threw,
      extended: p.extended,
      extensions: p.extensions,
      // A renewed lock: its renewals and the lease advice (recommendedTtlMs is then the lease); null for a fixed lock.
      lease: p.lease ? leaseJson(p.lease) : null,
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
        // Per day only from at least a day of data (else null; see `rate`).
        perDay:
          p.risk.rate.per === 'day'
            ? { nearMisses: r3(p.risk.rate.nearMisses), overCurrentTtl: r3(p.risk.rate.overCurrentTtl), overRecommendedTtl: r3(p.risk.rate.overRecommendedTtl) }
            : null,
        // Per day from at least a day of data, else per hour (and from how much data).
        rate: {
          per: p.risk.rate.per,
          spanMs: p.risk.rate.spanMs,
          nearMisses: r3(p.risk.rate.nearMisses),
          overCurrentTtl: r3(p.risk.rate.overCurrentTtl),
          overRecommendedTtl: r3(p.risk.rate.overRecommendedTtl),
        },
        crashWaitMs: { ...p.risk.crashWaitMs },
      },
      hourly: p.hourly.map((h) => ({ hour: iso(h.hourStartMs), count: h.count, p99Ms: r3(h.p99Ms), maxMs: r3(h.maxMs), ...(h.incomplete && { incomplete: true }) })),
    })),
  };
  return JSON.stringify(report, null, 2) + '\n';
}

function leaseJson(l: LeaseAnalysis): object {
  return {
    library: l.library,
    mode: l.mode,
    holds: l.holds,
    renewals: l.renewals,
    periodMs: r3(l.periodMs),
    periodSource: l.periodSource,
    ...(l.thresholdMs !== undefined && { thresholdMs: r3(l.thresholdMs) }),
    gapMs: { p50: r3(l.gapMs.p50), p99: r3(l.gapMs.p99), max: r3(l.gapMs.max) },
    latenessMs: { p99: r3(l.latenessMs.p99), p999: r3(l.latenessMs.p999), max: r3(l.latenessMs.max) },
    minMarginMs: r3(l.minMarginMs),
    atRiskBelowMs: r3(l.atRiskBelowMs),
    atRisk: l.atRisk,
    ranOut: l.ranOut,
    roundTripMs: l.roundTripMs && { p99: r3(l.roundTripMs.p99), max: r3(l.roundTripMs.max) },
    loopDelayMaxMs: l.loopDelayMaxMs === null ? null : r3(l.loopDelayMaxMs),
    recommended: { ...l.recommended },
    verdict: l.verdict,
    hourly: l.hourly.map((h) => ({ hour: iso(h.hourStartMs), minMarginMs: r3(h.minMarginMs) })),
  };
}
