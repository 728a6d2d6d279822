import type { ApplyStep, Decision, DecisionFacts, DecisionOptions, Finding, JudgedTtl, RulePolicy } from './decision-types.js';
import { applyStep, closingFindings } from './evidence.js';
import { leaseVerdict, MIN_RENEWALS, thresholdTooShort, type LeaseAnalysis } from './lease.js';
import type { Verdict } from './verdict.js';

/**
 * The decision for a lease (a renewed lock) and one TTL, in the shape of every
 * decision (see `decision.ts`), with the same invariant: `check` fails only
 * where `apply` would change the lease, or where leases ran out and only a human
 * can decide (a pinned entry, too few renewals, too short a window).
 *
 * - `lease-at-risk` (a renewal came with under 20 % of the TTL left — or half
 *   an on-time renewal's margin, where smaller — or a lease ran out): `apply` raises the lease to what lateness needs, when that is more;
 *   when it is not, the late renewals are a tail the rule does not cover: a warning.
 * - `lease-too-long` (over 3× what lateness needs): `apply` lowers it; `check`
 *   fails on it only with `strict`, like a fixed TTL too long.
 * - otherwise the lease is kept: a lease that renews in time is safe at any
 *   length above its lateness, and shortening it is only worth the crash cost.
 */
export function decideLease(p: DecisionFacts, lease: LeaseAnalysis, judged: JudgedTtl, rule: RulePolicy, options: DecisionOptions): Decision {
  const ttlMs = judged.ttlMs;
  const recommendedTtlMs = lease.recommended.leaseMs;
  const insufficient = lease.renewals < MIN_RENEWALS;
  // A pattern not in the policy is judged by the lease in use, and gets an entry: that lease when it is safe, else the recommendation.
  const base = judged.source === 'default' ? p.ttl.currentMs : ttlMs;
  const verdict: Verdict = leaseVerdict(lease, base);
  // node-redlock renews when its threshold is left: a threshold too small is not mended by a longer duration (a human's edit).
  const moves = (verdict === 'lease-at-risk' && recommendedTtlMs > base && !thresholdTooShort(lease)) || verdict === 'lease-too-long';
  const target = moves ? recommendedTtlMs : base;
  const apply: ApplyStep =
    target === ttlMs && judged.source !== 'default'
      ? { kind: 'keep' }
      : applyStep({ count: lease.renewals, of: 'renewals', spanMs: p.lastMs - p.firstMs }, judged, target, lease.ranOut > 0, options);
  const writes = apply.kind === 'write';

  const findings: Finding[] = [];
  let fails = false;
  let warns = false;
  if (judged.source === 'default') {
    findings.push({ kind: 'not-in-policy', defaultTtlMs: ttlMs });
    warns = true;
  }
  if (verdict === 'lease-at-risk') {
    findings.push({
      kind: 'lease-at-risk',
      lease,
      atRisk: lease.atRisk,
      ranOut: lease.ranOut,
      holds: lease.holds,
      minMarginMs: lease.minMarginMs,
      latestLateMs: lease.latenessMs.max,
      ttlMs: p.ttl.currentMs,
      recommendedTtlMs,
    });
    // Leases ran out: fails until applied, or names why apply cannot; late renewals the rule covers already: a look.
    fails = moves && (writes || (apply.kind === 'hold' && lease.ranOut > 0));
    warns = true;
  } else if (verdict === 'lease-too-long') {
    findings.push({ kind: 'lease-too-long', ttlMs: base, recommendedTtlMs, p999LateMs: lease.latenessMs.p999 });
    fails = writes && options.strict;
    warns = writes;
  } else if (verdict === 'insufficient-data') {
    fails = options.failOnInsufficientData && !judged.pinned;
    warns = true;
  }
  // The verdict itself, or why apply leaves a lease that wants a move: no advice to leave out.
  if (insufficient) findings.push({ kind: 'insufficient-renewals', renewals: lease.renewals, neededCount: MIN_RENEWALS });
  // What the renewals showed and the advice in the library's words, after what is wrong.
  findings.push({ kind: 'lease', lease, ttlMs: base, floorMs: rule.floorMs });
  if (apply.kind === 'hold' && moves && apply.why.kind !== 'too-few-renewals') {
    findings.push({ kind: 'held', fromMs: ttlMs, toMs: apply.toMs, why: apply.why, advice: !insufficient });
  }
  if (closingFindings(p, judged, findings)) warns = true;
  const expired = p.outcomes.expired;
  return {
    verdict,
    recommendedTtlMs,
    atLeast: false,
    insufficient,
    // A lease's expirations are leases that ran out: renewal lateness, not hold time, decides them.
    expirations: { total: expired, covered: 0, fixable: 0, beyond: 0, unseen: expired },
    apply,
    level: fails ? 'fail' : warns ? 'warn' : 'info',
    findings,
  };
}

