import type { LeaseAnalysis } from './lease.js';
import type { RecommendationPolicy } from './recommend.js';
import type { Verdict } from './verdict.js';

/**
 * The shapes of a decision (see `decision.ts`): what it is taken from, what it
 * says, and the evidence rules' options — shared by the fixed-lock and the lease
 * decisions.
 */

/** How a decision is taken; `check` and `apply` take the same. */
export interface DecisionOptions {
  /** A TTL moves only by at least this percentage, unless locks expired that the move would save. @default 10 */
  minChangePercent: number;
  /** A TTL moves only on data spanning at least this (ms): daily peaks may be missing. @default 24 h */
  minWindowMs: number;
  /** `check` also fails on a TTL more than 3× the recommendation (that `apply` would lower). @default false */
  strict: boolean;
  /** `check` fails on a pattern with too few hold times for a p99 claim. @default false */
  failOnInsufficientData: boolean;
}

export const DECISION_DEFAULTS: Readonly<DecisionOptions> = Object.freeze({
  minChangePercent: 10,
  minWindowMs: 24 * 3_600_000,
  strict: false,
  failOnInsufficientData: false,
});

/** The TTL being judged, and where it comes from. */
export interface JudgedTtl {
  ttlMs: number;
  /** `policy`: an entry of a policy file; `default`: no entry, the policy's default TTL; `in-use`: the TTL the data was recorded with. */
  source: 'policy' | 'default' | 'in-use';
  pinned?: boolean | undefined;
  /** The entry's pinned reason, shown with it. */
  reason?: string | undefined;
  /** The entry asks to cover holds up to this long (ms): the recommendation is at least this. */
  coverMs?: number | undefined;
}

/** Why `apply` does not write the recommendation: each is a decision for a human, named in the row. */
export type HoldReason =
  | { kind: 'pinned'; reason: string | undefined }
  | { kind: 'too-few-samples'; holdCount: number; neededCount: number }
  /** A lease moves only on enough renewals (see `MIN_RENEWALS`). */
  | { kind: 'too-few-renewals'; renewals: number; neededCount: number }
  | { kind: 'short-window'; spanMs: number; minWindowMs: number }
  | { kind: 'under-min-change'; changePercent: number; minChangePercent: number }
  /** A template entry several data patterns share: `other` needs a TTL this pattern's move would not give it. */
  | { kind: 'shared-entry'; other: string; otherMs: number }
  /** The p99 falls in a histogram's `+Inf` bucket: above `lastBoundMs`, by how much the buckets cannot say. */
  | { kind: 'beyond-buckets'; lastBoundMs: number };

/** What `apply` does with this pattern's TTL. */
export type ApplyStep = { kind: 'keep' } | { kind: 'write'; toMs: number } | { kind: 'hold'; toMs: number; why: HoldReason };

/** The expirations of a pattern against the judged TTL and the recommendation. */
export interface Expirations {
  total: number;
  /** Seen to end before the judged TTL: they happened under an older, shorter TTL (resolved). */
  covered: number;
  /** Outlived the judged TTL, and the recommended TTL would cover them. */
  fixable: number;
  /** Outlived the judged TTL and would outlive the recommended one too: the tail. */
  beyond: number;
  /** Whose end was not seen (censored), or whose hold was not kept as a raw row: cannot be judged. */
  unseen: number;
}

/** What a decision found, as data, most important first. */
export type Finding =
  /** `count` expirations the recommendation would save (`unseen` of them not seen to end), under `inUseTtlMs`. */
  | { kind: 'expired'; count: number; unseen: number; inUseTtlMs: number; recommendedTtlMs: number }
  /** The TTL is under `multiplier` × p99 (`scaledP99Ms`), or under the p99's 95 % upper bound. */
  | { kind: 'too-short'; ttlMs: number; scaledP99Ms: number; multiplier: number; recommendedTtlMs: number }
  | { kind: 'too-long'; ttlMs: number; recommendedTtlMs: number }
  | { kind: 'below-floor'; ttlMs: number; floorMs: number }
  | { kind: 'insufficient-data'; holdCount: number; neededCount: number }
  | { kind: 'not-in-policy'; defaultTtlMs: number }
  /** `apply` leaves the TTL for a human (`advice`: the data's recommendation is one, not too little data). */
  | { kind: 'held'; fromMs: number; toMs: number; why: HoldReason; advice: boolean }
  /** Holds that would outlive the recommended TTL; `expired` of them expired under the judged TTL. */
  | { kind: 'tail'; holds: number; rate: number; per: 'day' | 'hour'; spanMs: number; longestMs: number; atLeast: boolean; expired: number; recommendedTtlMs: number; multiplier: number }
  /** Expirations whose hold is unknown, under a TTL at or above the recommendation: cannot tell whether it covers them. */
  | { kind: 'unseen-expirations'; count: number; ttlMs: number }
  /** The p99 reaches holds whose end was not seen: it and the recommendation are lower bounds. */
  | { kind: 'censored'; censored: number; p99Ms: number; p99CeilingMs: number | null; recommendedTtlMs: number; ceilingTtlMs: number | null }
  | { kind: 'resolved'; count: number; inUseTtlMs: number }
  /** The data ran with `inUseTtlMs`, the policy names `policyTtlMs`: the policy's TTL is not deployed yet (or not read). */
  | { kind: 'deploy-pending'; inUseTtlMs: number; policyTtlMs: number }
  | { kind: 'contended'; waitP99Ms: number; notAcquiredRate: number }
  /** A lease (renewed lock): what renewal lateness needs, in the library's terms (see `lease.ts`); always first for a lease. */
  | { kind: 'lease'; lease: LeaseAnalysis; ttlMs: number; floorMs: number }
  /** `atRisk` leases had under the at-risk line left at a renewal (see `AT_RISK_SHARE`), `ranOut` of them none (a late renewal, or a holder gone). */
  | { kind: 'lease-at-risk'; lease: LeaseAnalysis; atRisk: number; ranOut: number; holds: number; minMarginMs: number; latestLateMs: number; ttlMs: number; recommendedTtlMs: number }
  /** The lease is far longer than lateness needs: a crashed holder blocks the others that long. */
  | { kind: 'lease-too-long'; ttlMs: number; recommendedTtlMs: number; p999LateMs: number }
  | { kind: 'insufficient-renewals'; renewals: number; neededCount: number }
  /** The p99 came from histogram buckets (a Prometheus source): it lies in (lowMs, highMs]; the figures use highMs. */
  | { kind: 'resolution'; bucket: P99Bucket }
  /** The p99 is above the last finite bucket bound: no recommendation (see `HoldReason` `beyond-buckets`). */
  | { kind: 'beyond-buckets'; lastBoundMs: number };

/**
 * Where the p99 lies when the hold times come as histogram buckets (a Prometheus source) and
 * not as our own fine histograms: the bucket (lowMs, highMs] its rank falls in. `highMs` null:
 * the `+Inf` bucket, above the last finite bound `lowMs`.
 */
export interface P99Bucket {
  lowMs: number;
  highMs: number | null;
  /** The p99 as PromQL's `histogram_quantile` reads the same counts: linear within the bucket (ms). */
  estimateMs?: number;
  /** A native histogram's schema: its buckets are 2^(2^-schema) apart. Absent for classic buckets. */
  nativeSchema?: number;
}

export interface Decision {
  verdict: Verdict;
  /** The recommended TTL (ms), with the entry's `coverMs`. */
  recommendedTtlMs: number;
  /** The recommendation is a lower bound: the p99 reaches holds whose end was not seen. */
  atLeast: boolean;
  /** Too few hold times for a p99 claim: the recommendation is no advice (reports show the need instead). */
  insufficient: boolean;
  expirations: Expirations;
  apply: ApplyStep;
  /** `fail`: `check` fails; `warn`: a human should look (an annotation); `info`: nothing to do. */
  level: 'fail' | 'warn' | 'info';
  findings: Finding[];
}

/**
 * What a decision reads of a pattern's analysis (`PatternAnalysis` has all of it;
 * named here so that `summarize` can take the decision without an import cycle).
 */
export interface DecisionFacts {
  pattern: string;
  count: number;
  holdCount: number;
  holdMs: { p99: number; max: number };
  holdLowerBound: { p99: boolean; max: boolean };
  censored: number;
  p99CeilingMs?: number | null;
  holdTail: readonly (readonly [ms: number, count: number, censored?: true])[];
  waitMs: { p99: number };
  outcomes: { expired: number; not_acquired: number };
  ttl: { currentMs: number };
  firstMs: number;
  lastMs: number;
  recommendedTtlMs: number;
  neededMs: number;
  contended: boolean;
  expiredHoldsMs?: number[];
  /** The pattern's holds are renewed (a lease): decided from renewal lateness (see `lease.ts`). */
  lease?: LeaseAnalysis | undefined;
  /** The hold times came as histogram buckets: the p99's bucket (see {@link P99Bucket}). */
  p99Bucket?: P99Bucket | undefined;
}

/** The shape of a recommendation this module needs: the rule's floor, step and multiplier. */
export type RulePolicy = Pick<RecommendationPolicy, 'floorMs' | 'stepMs' | 'multiplier'>;
