import { LEASE_LIBRARY_FACTS, latenessOf } from '../sample/libraries.js';
import { LEASE_LIBRARIES, type LeaseLibrary } from '../sample/sample.js';
import type { DecodeTarget, LeaseParts } from '../store/histogram/codec.js';
import type { DenseHistogram } from '../store/histogram/histogram.js';
import { LeaseSum } from '../store/rollup.js';
import { logBins, mostCommon, type DistributionBin } from './bins.js';
import { MIN_SAMPLES_FOR_P99 } from './confidence.js';
import { roundUpToStep, TOO_LONG_FACTOR } from './recommend.js';

/**
 * Renewed locks (leases): their TTL is not a hold budget but (a) how late a
 * renewal may come before the lock is lost and (b) how long everyone waits when
 * the holder dies. So the lease is advised from how late renewals come, and the
 * hold time gives a separate cap to enforce as a job timeout, not as the TTL:
 *
 * - period renewal (every α × TTL: BullMQ, redis-semaphore, Redisson, `autoExtend`):
 *   lease = max(floor, s × q99.9(lateness) / (1 − α)), renewing every α × lease;
 * - threshold renewal (node-redlock's `using()`, when less than a threshold is left):
 *   threshold ≥ s × q99.9(lateness) + p99(renewal round trip), duration
 *   max(floor, {@link THRESHOLD_DURATION_FACTOR} × threshold);
 * - max-hold cap = max(floor, {@link HOLD_CAP_MULTIPLIER} × p99(hold)).
 *
 * s = {@link LEASE_SAFETY}; α is clamped to {@link ALPHA_RANGE}. Lateness is a renewal's gap − its nominal period (the
 * holder's own where the door knew it, else the median gap).
 */

/** How many times the late tail the margin must hold. */
export const LEASE_SAFETY = 2;
/** With threshold renewal, the duration is at least this many thresholds: renewals are not back to back. */
export const THRESHOLD_DURATION_FACTOR = 2;
/** The hold cap (a job timeout, not the TTL) is this many times the hold p99, as the fixed-lock rule's default. */
export const HOLD_CAP_MULTIPLIER = 3;
/**
 * The share of the lease a renewal period is taken as, at the least and at the most: a period near 0
 * or past the TTL (gaps longer than the lease) would make the formula's 1 − α meaningless.
 */
export const ALPHA_RANGE = Object.freeze([0.05, 0.95] as const);
/**
 * A renewal with less than this share of the TTL left puts the lease at risk — or with less than half
 * of what an on-time renewal leaves, where that is smaller (redis-semaphore's default refresh at 0.8
 * of the TTL leaves 20 % by design; node-redlock's threshold may be a few % of a long duration).
 */
export const AT_RISK_SHARE = 0.2;
/** Renewals needed before a lease is advised (as many as a p99 claim needs holds). */
export const MIN_RENEWALS = MIN_SAMPLES_FOR_P99;
/** A pattern is a lease when at least this share of its holds were leases (or its library's locks always are). */
const LEASE_SHARE = 0.1;

export type LeaseVerdict = 'lease-at-risk' | 'lease-too-long' | 'ok' | 'insufficient-data';

export interface LeaseAnalysis {
  /** Holds that were leases, and the renewals among them. */
  holds: number;
  renewals: number;
  /** The library most of the pattern's leases were recognized as. */
  library: LeaseLibrary;
  /** `threshold`: renewed when less than a threshold was left (node-redlock); `period`: every α × TTL. */
  mode: 'period' | 'threshold';
  /** The nominal renewal period (ms): `known` from the holders, or `inferred` as the median gap. */
  periodMs: number;
  periodSource: 'known' | 'inferred';
  /** period ÷ TTL in use, within {@link ALPHA_RANGE}: the share the advice keeps (the report, `apply` and `init` read this one). */
  alpha: number;
  /** With threshold renewal: TTL − period, what is left when a renewal is due (ms). */
  thresholdMs?: number;
  gapMs: { p50: number; p99: number; max: number };
  latenessMs: { p99: number; p999: number; max: number };
  /** The least time left at a renewal over all holds (ms; 0: a lease ran out). */
  minMarginMs: number;
  /** The at-risk line (ms): the lesser of {@link AT_RISK_SHARE} of the TTL and half an on-time renewal's margin. */
  atRiskBelowMs: number;
  /** Holds whose least margin fell under the at-risk line, and of them the ones that ran out. */
  atRisk: number;
  ranOut: number;
  roundTripMs: { p99: number; max: number } | null;
  /** The longest event-loop block seen while held (`autoExtend`), ms. */
  loopDelayMaxMs: number | null;
  /** What the lateness needs: the lease (ms), how often to renew it, a threshold (threshold mode), and the hold cap. */
  recommended: { leaseMs: number; renewEveryMs: number; thresholdMs?: number; maxHoldMs: number };
  verdict: LeaseVerdict;
  /** The least margin per hour, for the chart. */
  hourly: { hourStartMs: number; minMarginMs: number }[];
  /** Renewal lateness in log-spaced bins (ms), for the chart. */
  lateness: DistributionBin[];
}

/**
 * Collects a pattern's lease parts while its rollup rows are decoded: made on
 * the first row that has one (most patterns never do), with the least margin per hour.
 */
export class LeaseReader implements LeaseParts<DecodeTarget> {
  sum: LeaseSum | undefined;
  readonly hourlyMin = new Map<number, number>();
  private hourStartMs = 0;

  /** The hour the rows decoded next belong to. */
  setHour(hourStartMs: number): void {
    this.hourStartMs = hourStartMs;
  }
  private get s(): LeaseSum {
    return (this.sum ??= new LeaseSum());
  }
  get gap(): DecodeTarget {
    return this.s.gap;
  }
  get lateness(): DecodeTarget {
    return this.s.lateness;
  }
  get margin(): DecodeTarget {
    const margin = this.s.margin;
    return {
      addAt: (index, count) => margin.addAt(index, count),
      addSummary: (total, min, max) => {
        margin.addSummary(total, min, max);
        const before = this.hourlyMin.get(this.hourStartMs);
        if (total > 0 && (before === undefined || min < before)) this.hourlyMin.set(this.hourStartMs, min);
      },
    };
  }
  get roundTrip(): DecodeTarget {
    return this.s.roundTrip;
  }
  get loopDelay(): DecodeTarget {
    return this.s.loopDelay;
  }
  get periods(): Map<number, number> {
    return this.s.periods;
  }
  get libraries(): Map<number, number> {
    return this.s.libraries;
  }
}

/** What the lease advice reads of a pattern besides its lease parts. */
export interface LeaseFacts {
  holdCount: number;
  holdP99Ms: number;
  ttlMs: number;
  floorMs: number;
  stepMs: number;
}

/** The lease analysis of a pattern, or `undefined` when it is not a lease. */
export function analyzeLease(reader: LeaseReader, facts: LeaseFacts): LeaseAnalysis | undefined {
  const sum = reader.sum;
  if (!sum) return undefined;
  const holds = sum.holds;
  const library = LEASE_LIBRARIES[mostCommon(sum.libraries, 0)] ?? 'unknown';
  const libraryFacts = LEASE_LIBRARY_FACTS[library];
  if (holds < LEASE_SHARE * facts.holdCount && !libraryFacts.alwaysLease) return undefined;
  const ms = (us: number) => us / 1000;
  const { gap, lateness, margin, roundTrip, loopDelay } = sum;
  // The holders' own period where the door knew it (BullMQ, Redisson, autoExtend), even before any renewal.
  const known = sum.periods.size > 0;
  const ttlMs = Math.max(facts.ttlMs, 1);
  // The holders' own period, or the median gap: then a gap's lateness is how far past the median it came.
  const periodMs = known ? mostCommon(sum.periods, 0) : ms(gap.valueAtPercentile(50));
  const late = (percentile: number) => (known ? ms(lateness.valueAtPercentile(percentile)) : latenessOf(ms(gap.valueAtPercentile(percentile)), periodMs));
  const latenessMs = { p99: late(99), p999: late(99.9), max: known ? ms(lateness.maxValue) : latenessOf(ms(gap.maxValue), periodMs) };
  const mode = libraryFacts.renewal;
  const alpha = Math.min(ALPHA_RANGE[1], Math.max(ALPHA_RANGE[0], periodMs / ttlMs));
  const roundTripMs = roundTrip.totalCount > 0 ? { p99: ms(roundTrip.valueAtPercentile(99)), max: ms(roundTrip.maxValue) } : null;

  const step = (value: number) => roundUpToStep(value, facts.stepMs);
  const maxHoldMs = step(Math.max(facts.floorMs, HOLD_CAP_MULTIPLIER * facts.holdP99Ms));
  let recommended: LeaseAnalysis['recommended'];
  if (mode === 'threshold') {
    const thresholdMs = step(LEASE_SAFETY * latenessMs.p999 + (roundTripMs?.p99 ?? 0));
    // The duration stays small (a crash costs it), and long enough that renewals are not back to back.
    const leaseMs = step(Math.max(facts.floorMs, THRESHOLD_DURATION_FACTOR * thresholdMs));
    recommended = { leaseMs, renewEveryMs: leaseMs - thresholdMs, thresholdMs, maxHoldMs };
  } else {
    const leaseMs = step(Math.max(facts.floorMs, (LEASE_SAFETY * latenessMs.p999) / (1 - alpha)));
    recommended = { leaseMs, renewEveryMs: Math.max(1, Math.floor(alpha * leaseMs)), maxHoldMs };
  }

  // An on-time renewal leaves (1 − α) of the TTL: with threshold renewal, the threshold.
  const onTimeMarginMs = Math.max(0, ttlMs - periodMs);
  const atRiskBelowMs = Math.min(AT_RISK_SHARE * ttlMs, onTimeMarginMs / 2);
  const analysis: Omit<LeaseAnalysis, 'verdict'> = {
    holds,
    renewals: gap.totalCount,
    library,
    mode,
    periodMs,
    periodSource: known ? 'known' : 'inferred',
    alpha,
    ...(mode === 'threshold' ? { thresholdMs: Math.max(0, facts.ttlMs - periodMs) } : {}),
    gapMs: { p50: ms(gap.valueAtPercentile(50)), p99: ms(gap.valueAtPercentile(99)), max: ms(gap.maxValue) },
    latenessMs,
    minMarginMs: margin.totalCount > 0 ? ms(margin.minValue) : ttlMs,
    atRiskBelowMs,
    atRisk: countBelow(margin, atRiskBelowMs * 1000),
    ranOut: countBelow(margin, 1),
    roundTripMs,
    loopDelayMaxMs: loopDelay.totalCount > 0 ? ms(loopDelay.maxValue) : null,
    recommended,
    hourly: [...reader.hourlyMin].map(([hourStartMs, us]) => ({ hourStartMs, minMarginMs: ms(us) })).sort((a, b) => a.hourStartMs - b.hourStartMs),
    lateness: known ? logBins(lateness, LATENESS_BIN_MIN_MS) : logBins(gap, LATENESS_BIN_MIN_MS, periodMs),
  };
  return { ...analysis, verdict: leaseVerdict(analysis, facts.ttlMs) };
}

/** The lateness chart's lowest bin (ms): on a log scale, on-time renewals (lateness 0) show here. */
const LATENESS_BIN_MIN_MS = 0.1;

/**
 * A lease's verdict for a lease of `ttlMs`, the one ladder the analysis and every decision take: a
 * renewal came near running out (at risk), else too few renewals to say, else far longer than lateness
 * needs ({@link TOO_LONG_FACTOR} × the recommendation), else ok.
 */
export function leaseVerdict(lease: Pick<LeaseAnalysis, 'atRisk' | 'renewals' | 'recommended'>, ttlMs: number): LeaseVerdict {
  if (lease.atRisk > 0) return 'lease-at-risk';
  if (lease.renewals < MIN_RENEWALS) return 'insufficient-data';
  return ttlMs > TOO_LONG_FACTOR * lease.recommended.leaseMs ? 'lease-too-long' : 'ok';
}

/**
 * node-redlock's threshold in use is under what lateness needs: it renews when that much is left, so a
 * longer duration does not help; the threshold must rise (a human's edit of `automaticExtensionThreshold`).
 */
export function thresholdTooShort(lease: LeaseAnalysis): boolean {
  return lease.mode === 'threshold' && (lease.thresholdMs ?? 0) < (lease.recommended.thresholdMs ?? 0);
}

/** Values below `limitUs` (by bucket: a bucket counts when its highest value is below the limit, or it holds 0). */
function countBelow(h: DenseHistogram, limitUs: number): number {
  let n = 0;
  for (const b of h.buckets()) if (b.highUs < limitUs || b.lowUs === 0) n += b.count;
  return n;
}
