import type { Analysis } from '../analyze/analyze.js';
import { DECISION_DEFAULTS, decideEntry, type Decision, type HoldReason } from '../analyze/decision.js';
import type { LeaseAnalysis } from '../analyze/lease.js';
import { byEntry, decisionOptions, judgedTtl } from './check.js';
import type { PolicyDocument, PolicyEntry, TtlPolicy } from './policy.js';

/** Options of {@link applyRecommendations}: the decision's, the same `check` takes. */
export interface ApplyOptions {
  /** Leave TTLs alone whose recommendation differs by less than this percentage, unless locks expired that the move would save. @default 10 */
  minChangePercent?: number | undefined;
  /** Move no TTL on a pattern whose data spans less than this (ms): daily peaks may be missing. @default 24 h */
  minWindowMs?: number | undefined;
}

export interface PolicyChange {
  pattern: string;
  fromMs: number | undefined;
  toMs: number;
}

/** A recommendation `apply` did not write, and why (a decision for a human: `report/` words it). */
export interface SkippedChange {
  pattern: string;
  /** The TTL in the policy file; `undefined` for a pattern not in it. */
  fromMs: number | undefined;
  toMs: number;
  reason: HoldReason['kind'];
  why: HoldReason;
  /** Too few hold times for a p99 claim: `toMs` is no recommendation (reports show the need, not the number). */
  noRecommendation: boolean;
}

export const DEFAULT_APPLY_MIN_CHANGE_PERCENT = DECISION_DEFAULTS.minChangePercent;
export const DEFAULT_APPLY_MIN_WINDOW_MS = DECISION_DEFAULTS.minWindowMs;

/**
 * The policy with the data's recommended TTLs written in, by the decision
 * `check` takes (`analyze/decision.ts`): entries keep their order, pinned
 * entries are untouched, new patterns are appended in name order. A TTL moves
 * only on evidence — at least 299 hold times spanning at least `minWindowMs`,
 * and by at least `minChangePercent` unless locks expired that the move would
 * save; every recommendation left out is returned with its reason. Data
 * patterns that share an entry (a template) give it the largest move they
 * ask for. Applying the result again to the same data changes nothing.
 */
export function applyRecommendations(
  analysis: Analysis,
  policy: TtlPolicy,
  options: ApplyOptions = {},
): { document: PolicyDocument; changes: PolicyChange[]; skipped: SkippedChange[] } {
  const o = decisionOptions(options);
  const locks = { ...policy.document.locks };
  const changed = new Map<string, PolicyChange>();
  const skipped: SkippedChange[] = [];
  const added: [string, PolicyEntry][] = [];
  for (const members of byEntry(analysis, policy).values()) {
    const { entryPattern, judged } = judgedTtl(policy, members[0]!.pattern);
    const { decisions, apply, neediest } = decideEntry(members, judged, analysis.policy, o);
    const fromMs = entryPattern === undefined ? undefined : judged.ttlMs;
    decisions.forEach((d, i) => {
      const pattern = entryPattern ?? members[i]!.pattern;
      // One line per recommendation left out, with its reason: held, or below what a shared entry gets.
      if (d.apply.kind === 'hold') skipped.push({ pattern, fromMs, toMs: d.apply.toMs, reason: d.apply.why.kind, why: d.apply.why, noRecommendation: d.insufficient });
      else if (d.apply.kind === 'write' && d.recommendedTtlMs < d.apply.toMs) {
        const why = { kind: 'shared-entry', other: members[neediest]!.pattern, otherMs: d.apply.toMs } as const;
        skipped.push({ pattern, fromMs, toMs: d.recommendedTtlMs, reason: why.kind, why, noRecommendation: d.insufficient });
      }
    });
    if (apply.kind !== 'write') continue;
    const lease = leaseOf(decisions[neediest]!);
    if (entryPattern === undefined) added.push([members[0]!.pattern, { ttlMs: apply.toMs, ...leaseFields(undefined, lease, apply.toMs) }]);
    else {
      changed.set(entryPattern, { pattern: entryPattern, fromMs, toMs: apply.toMs });
      locks[entryPattern] = { ...locks[entryPattern]!, ttlMs: apply.toMs, ...leaseFields(locks[entryPattern], lease, apply.toMs) };
    }
  }
  // In the file's order, then the new patterns in name order.
  const changes = Object.keys(policy.document.locks).flatMap((pattern) => changed.get(pattern) ?? []);
  for (const [pattern, entry] of added.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    locks[pattern] = entry;
    changes.push({ pattern, fromMs: undefined, toMs: entry.ttlMs });
  }
  return { document: { ...policy.document, locks }, changes, skipped };
}

/** The lease analysis behind a decision, when its pattern is a lease. */
export function leaseOf(d: Decision): LeaseAnalysis | undefined {
  const f = d.findings.find((finding) => finding.kind === 'lease');
  return f?.kind === 'lease' ? f.lease : undefined;
}

/**
 * A renewal setting when its TTL moves from `fromMs` to `toMs` (a policy entry's, or a lease option in
 * code): an interval keeps its share of the TTL; a threshold keeps its share when the TTL falls and is
 * at least what lateness needs (`neededThresholdMs`); both stay under the TTL.
 */
export function movedRenewalMs(kind: 'interval' | 'threshold', valueMs: number, fromMs: number, toMs: number, neededThresholdMs: number): number {
  const under = (ms: number) => Math.max(1, Math.min(toMs - 1, Math.round(ms)));
  if (kind === 'interval') return under((valueMs / fromMs) * toMs);
  return under(Math.max(toMs < fromMs ? (valueMs / fromMs) * toMs : valueMs, neededThresholdMs));
}

/**
 * A lease entry's other fields when its TTL moves to `toMs`, whatever moved it (a lease's decision, or
 * a fixed lock's sharing its entry): the renewal keeps its share of the TTL (`renewEveryMs`); a threshold
 * keeps its share when the TTL falls and at least what lateness needs (`extendThresholdMs`); both stay
 * under the TTL, so the file `apply` writes is one it reads. A hold cap a human set stays. A new lease
 * entry gets the data's: when to renew, and the hold cap.
 */
function leaseFields(entry: PolicyEntry | undefined, lease: LeaseAnalysis | undefined, toMs: number): Partial<PolicyEntry> {
  const under = (ms: number) => Math.max(1, Math.min(toMs - 1, Math.round(ms)));
  const needed = lease?.recommended.thresholdMs ?? 0;
  if (entry?.renewEveryMs !== undefined) return { renewEveryMs: movedRenewalMs('interval', entry.renewEveryMs, entry.ttlMs, toMs, needed) };
  if (entry?.extendThresholdMs !== undefined) return { extendThresholdMs: movedRenewalMs('threshold', entry.extendThresholdMs, entry.ttlMs, toMs, needed) };
  if (entry || !lease) return {};
  const renew =
    lease.mode === 'threshold'
      ? { extendThresholdMs: under(Math.max(needed, toMs - lease.periodMs)) }
      : { renewEveryMs: under(toMs === lease.recommended.leaseMs ? lease.recommended.renewEveryMs : lease.alpha * toMs) };
  return { ...renew, maxHoldMs: lease.recommended.maxHoldMs };
}
