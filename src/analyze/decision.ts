import { MIN_SAMPLES_FOR_P99 } from './confidence.js';
import { DECISION_DEFAULTS, type Decision, type DecisionFacts, type DecisionOptions, type Expirations, type Finding, type HoldReason, type ApplyStep, type JudgedTtl, type RulePolicy } from './decision-types.js';
import { applyStep, DecisionFindings } from './evidence.js';
import { decideLease } from './lease-decision.js';
import { roundUpToStep } from './recommend.js';
import { rateOf } from './risk.js';
import { verdictFor, type Verdict } from './verdict.js';

export * from './decision-types.js';

/**
 * ONE decision per pattern and TTL, used by every report format, `check` (every
 * format) and `apply`/`init`: the verdict, the recommended TTL, what `apply`
 * writes (or why it does not), whether `check` fails, and the findings that
 * explain it, as data (`report/decision-text.ts` words them).
 *
 * The invariant it keeps: `check` fails only on something `apply` (with the
 * same options) would change, or on a decision only a human can take, named in
 * the row (a pinned TTL, too little data). After `apply`, `check` on the same
 * data passes or names that decision.
 */

/** The decision for one pattern's data and one TTL. */
export function decide(p: DecisionFacts, judged: JudgedTtl, rule: RulePolicy, options: DecisionOptions = DECISION_DEFAULTS): Decision {
  if (p.lease) return decideLease(p, p.lease, judged, rule, options);
  if (p.p99Bucket?.highMs === null) return refuseBeyondBuckets(p, judged, p.p99Bucket.lowMs, options);
  const ttlMs = judged.ttlMs;
  const recommendedTtlMs = judged.coverMs === undefined ? p.recommendedTtlMs : Math.max(p.recommendedTtlMs, roundUpToStep(judged.coverMs, rule.stepMs));
  const insufficient = p.holdCount < MIN_SAMPLES_FOR_P99;
  const expirations = splitExpirations(p, ttlMs, recommendedTtlMs);
  const unseenAtRisk = expirations.unseen > 0 && ttlMs < recommendedTtlMs;
  const verdict: Verdict =
    expirations.fixable > 0 || unseenAtRisk
      ? 'expired'
      : verdictFor(ttlMs, { expired: 0, holdCount: p.holdCount, recommendedTtlMs, neededMs: p.neededMs, floorMs: rule.floorMs });
  const apply = applyStep({ count: p.holdCount, of: 'holds', spanMs: p.lastMs - p.firstMs }, judged, recommendedTtlMs, verdict === 'expired', options);
  const writes = apply.kind === 'write';

  const f = new DecisionFindings(judged);
  if (verdict === 'expired') {
    // Locks expired that the recommendation would have saved: fails until applied, or names why apply cannot.
    const unseen = unseenAtRisk ? expirations.unseen : 0;
    f.add({ kind: 'expired', count: expirations.fixable + unseen, unseen, inUseTtlMs: p.ttl.currentMs, recommendedTtlMs });
    f.fails = true;
  } else if (verdict === 'too-short') {
    f.add({ kind: 'too-short', ttlMs, scaledP99Ms: rule.multiplier * p.holdMs.p99, multiplier: rule.multiplier, recommendedTtlMs });
    f.fails = writes;
    // A move under --min-change is not worth a look either (the rule's multiplier has room for it).
    f.warns = apply.kind !== 'hold' || apply.why.kind !== 'under-min-change';
  } else if (verdict === 'too-long') {
    f.add({ kind: 'too-long', ttlMs, recommendedTtlMs });
    f.fails = writes && options.strict;
    f.warns = writes;
  } else if (verdict === 'below-floor') {
    f.add({ kind: 'below-floor', ttlMs, floorMs: rule.floorMs });
    f.warns = writes;
  } else if (verdict === 'insufficient-data') {
    f.add({ kind: 'insufficient-data', holdCount: p.holdCount, neededCount: MIN_SAMPLES_FOR_P99 });
    // A pinned entry is a human's decision already; too little data fails only where a human has not decided.
    f.fails = options.failOnInsufficientData && !judged.pinned;
    f.warns = true;
  }
  // Why apply leaves a TTL that wants a move; with too little data there is no recommendation to leave out.
  if (insufficient && verdict !== 'insufficient-data') f.add({ kind: 'insufficient-data', holdCount: p.holdCount, neededCount: MIN_SAMPLES_FOR_P99 });
  if (apply.kind === 'hold' && (verdict !== 'ok' || judged.source === 'default') && apply.why.kind !== 'too-few-samples') {
    f.add({ kind: 'held', fromMs: ttlMs, toMs: apply.toMs, why: apply.why, advice: !insufficient });
  }

  const tail = tailOf(p, recommendedTtlMs, expirations.beyond, rule.multiplier);
  if (tail) {
    f.add(tail);
    // Holds beyond the rule are a finding, not a failure apply cannot fix; expirations among them want a look.
    if (tail.expired > 0) f.warns = true;
  }
  if (expirations.unseen > 0 && !unseenAtRisk) {
    f.add({ kind: 'unseen-expirations', count: expirations.unseen, ttlMs });
    f.warns = true;
  }
  if (p.holdLowerBound.p99) {
    const ceiling = p.p99CeilingMs ?? null;
    const ceilingTtlMs = ceiling === null ? null : Math.max(recommendedTtlMs, roundUpToStep(Math.max(rule.floorMs, rule.multiplier * ceiling), rule.stepMs));
    f.add({ kind: 'censored', censored: p.censored, p99Ms: p.holdMs.p99, p99CeilingMs: ceiling, recommendedTtlMs, ceilingTtlMs });
  }
  if (expirations.covered > 0) f.add({ kind: 'resolved', count: expirations.covered, inUseTtlMs: p.ttl.currentMs });
  if (p.p99Bucket) f.add({ kind: 'resolution', bucket: p.p99Bucket });
  return {
    verdict,
    recommendedTtlMs,
    atLeast: p.holdLowerBound.p99,
    insufficient,
    expirations,
    apply,
    ...f.close(p, judged),
  };
}

/**
 * No recommendation where the p99 lies above the last finite histogram bucket: it could be any
 * length beyond it, and a TTL from the bound would be below the truth. `apply` leaves the TTL
 * (a human decides, or finer buckets), so `check` fails only with --fail-on-insufficient-data.
 */
function refuseBeyondBuckets(p: DecisionFacts, judged: JudgedTtl, lastBoundMs: number, options: DecisionOptions): Decision {
  const f = new DecisionFindings(judged);
  f.add({ kind: 'beyond-buckets', lastBoundMs });
  const why: HoldReason = judged.pinned ? { kind: 'pinned', reason: judged.reason } : { kind: 'beyond-buckets', lastBoundMs };
  // Refused, the level is the data's, whatever the closing findings: failing only where a human must decide.
  const { findings } = f.close(p, judged);
  const expired = p.outcomes.expired;
  return {
    verdict: 'insufficient-data',
    recommendedTtlMs: p.recommendedTtlMs,
    atLeast: true,
    insufficient: true,
    expirations: { total: expired, covered: 0, fixable: 0, beyond: 0, unseen: expired },
    apply: { kind: 'hold', toMs: judged.ttlMs, why },
    level: options.failOnInsufficientData && !judged.pinned ? 'fail' : 'warn',
    findings,
  };
}

/**
 * The decisions for the data patterns that share one entry (a template, or one
 * pattern alone): the entry has one TTL, so `apply` writes the largest move its
 * members' decisions ask for, and a member whose own move that would not make
 * (a lower TTL another member needs, or nothing because another is held) is
 * held with the reason — so its row fails only where `apply` acts.
 */
export function decideEntry(members: readonly DecisionFacts[], judged: JudgedTtl, rule: RulePolicy, options: DecisionOptions = DECISION_DEFAULTS): { decisions: Decision[]; apply: ApplyStep; neediest: number } {
  const decisions = members.map((p) => decide(p, judged, rule, options));
  if (decisions.length === 1) return { decisions, apply: decisions[0]!.apply, neediest: 0 };
  let neediest = 0;
  decisions.forEach((d, i) => void (d.recommendedTtlMs > decisions[neediest]!.recommendedTtlMs && (neediest = i)));
  const writes = decisions.flatMap((d) => (d.apply.kind === 'write' ? [d.apply.toMs] : []));
  const target = writes.length > 0 ? Math.max(...writes) : judged.ttlMs;
  // Never lower an entry below what a member needs, whatever evidence the others have.
  const lowersTooFar = target < judged.ttlMs && decisions[neediest]!.recommendedTtlMs > target;
  const apply: ApplyStep = target === judged.ttlMs || lowersTooFar ? { kind: 'keep' } : { kind: 'write', toMs: target };
  const endsAtMs = apply.kind === 'write' ? apply.toMs : judged.ttlMs;
  const reconciled = decisions.map((d, i): Decision => {
    if (d.apply.kind !== 'write' || d.apply.toMs === endsAtMs) return d;
    // The entry gets more than this member asked: its move is made by another's (apply lists the difference).
    if (apply.kind === 'write' && d.apply.toMs < endsAtMs) return { ...d, apply };
    // Its move would lower the entry under what another member needs: held, and said so.
    const other = members[i === neediest ? (i === 0 ? 1 : 0) : neediest]!;
    const why: HoldReason = { kind: 'shared-entry', other: other.pattern, otherMs: decisions[members.indexOf(other)]!.recommendedTtlMs };
    // Only a move apply makes may fail the check; a held one is a warning that names why.
    return { ...d, apply: { kind: 'hold', toMs: d.apply.toMs, why }, level: d.level === 'fail' && d.verdict !== 'expired' ? 'warn' : d.level, findings: [...d.findings, { kind: 'held', fromMs: judged.ttlMs, toMs: d.apply.toMs, why, advice: !d.insufficient }] };
  });
  return { decisions: reconciled, apply, neediest };
}


/**
 * The expirations against a TTL: an expiration whose hold was seen and is
 * shorter than the TTL happened under an older, shorter one (covered); one the
 * recommendation covers is fixable; the rest is the tail. A censored hold (its
 * end unseen) or one without a raw row cannot be judged: never called covered.
 */
export function splitExpirations(p: DecisionFacts, ttlMs: number, recommendedTtlMs: number): Expirations {
  const total = p.outcomes.expired;
  const result: Expirations = { total, covered: 0, fixable: 0, beyond: 0, unseen: 0 };
  if (total === 0) return result;
  const censored = Math.min(p.censored, total);
  const holds = (p.expiredHoldsMs ?? []).slice(0, total - censored);
  for (const h of holds) {
    if (h < ttlMs) result.covered++;
    else if (h < recommendedTtlMs) result.fixable++;
    else result.beyond++;
  }
  // A censored hold seen held at least as long as both TTLs outlives the recommendation too: the tail.
  let censoredLeft = censored;
  for (const [atLeastMs, n, isCensored] of p.holdTail) {
    if (!isCensored || censoredLeft === 0) continue;
    const k = Math.min(n, censoredLeft);
    censoredLeft -= k;
    if (atLeastMs >= ttlMs && atLeastMs >= recommendedTtlMs) result.beyond += k;
  }
  result.unseen = total - result.covered - result.fixable - result.beyond;
  return result;
}

/** Holds beyond the recommended TTL, as a finding; none when there are none. */
function tailOf(p: DecisionFacts, recommendedTtlMs: number, expired: number, multiplier: number): Extract<Finding, { kind: 'tail' }> | undefined {
  const holds = holdsOver(p, recommendedTtlMs);
  if (holds === 0 && expired === 0) return undefined;
  const spanMs = Math.max(0, p.lastMs - p.firstMs);
  const { per, units } = rateOf(spanMs);
  const count = Math.max(holds, expired);
  // With censored holds both the count and the longest are lower bounds.
  return { kind: 'tail', holds: count, rate: count / units, per, spanMs, longestMs: p.holdMs.max, atLeast: p.holdLowerBound.max, expired, recommendedTtlMs, multiplier };
}

/**
 * Holds longer than `thresholdMs`, from the pattern's upper tail: the ones whose end was seen by
 * bucket (never below the true count; see `holdsAbove`), and the censored ones seen held at least
 * that long (a lower bound of those that did).
 */
export function holdsOver(p: DecisionFacts, thresholdMs: number): number {
  let count = 0;
  for (const [ms, n, censored] of p.holdTail) if (censored ? ms >= thresholdMs : Math.min(ms, p.holdMs.max) > thresholdMs) count += n;
  return count;
}
