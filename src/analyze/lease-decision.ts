import type { ApplyStep, Decision, DecisionFacts, DecisionOptions, JudgedTtl, RulePolicy } from './decision-types.js';
import { applyStep, DecisionFindings } from './evidence.js';
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

  const f = new DecisionFindings(judged);
  if (verdict === 'lease-at-risk') {
    f.add({
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
    f.fails = moves && (writes || (apply.kind === 'hold' && lease.ranOut > 0));
    f.warns = true;
  } else if (verdict === 'lease-too-long') {
    f.add({ kind: 'lease-too-long', ttlMs: base, recommendedTtlMs, p999LateMs: lease.latenessMs.p999 });
    f.fails = writes && options.strict;
    f.warns = writes;
  } else if (verdict === 'insufficient-data') {
    f.fails = options.failOnInsufficientData && !judged.pinned;
    f.warns = true;
  }
  // The verdict itself, or why apply leaves a lease that wants a move: no advice to leave out.
  if (insufficient) f.add({ kind: 'insufficient-renewals', renewals: lease.renewals, neededCount: MIN_RENEWALS });
  // What the renewals showed and the advice in the library's words, after what is wrong.
  f.add({ kind: 'lease', lease, ttlMs: base, floorMs: rule.floorMs });
  if (apply.kind === 'hold' && moves && apply.why.kind !== 'too-few-renewals') {
    f.add({ kind: 'held', fromMs: ttlMs, toMs: apply.toMs, why: apply.why, advice: !insufficient });
  }
  const expired = p.outcomes.expired;
  return {
    verdict,
    recommendedTtlMs,
    atLeast: false,
    insufficient,
    // A lease's expirations are leases that ran out: renewal lateness, not hold time, decides them.
    expirations: { total: expired, covered: 0, fixable: 0, beyond: 0, unseen: expired },
    apply,
    ...f.close(p, judged),
  };
}

