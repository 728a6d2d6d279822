import { LEASE_LIBRARIES, type LeaseLibrary } from '../sample/sample.js';
import type { DecodeTarget, LeaseParts } from '../store/histogram/codec.js';
import type { DenseHistogram } from '../store/histogram/histogram.js';
import { LeaseSum } from '../store/rollup.js';
import { MAX_TTL_MS } from '../units.js';
import { MIN_SAMPLES_FOR_P99 } from './confidence.js';
import { TOO_LONG_FACTOR } from './recommend.js';

/**
 * Renewed locks (leases): their TTL is not a hold budget but (a) how late a
 * renewal may come before the lock is lost and (b) how long everyone waits when
 * the holder dies. So the lease is advised from how late renewals come, and the
 * hold time gives a separate cap to enforce as a job timeout, not as the TTL:
 *
 * - period renewal (every α × TTL: BullMQ, redis-semaphore, Redisson, `autoExtend`):
 *   lease = max(floor, s × q99.9(lateness) / (1 − α)), renewing every α × lease;
 * - threshold renewal (node-redlock's `using()`, when less than a threshold is left):
 *   threshold ≥ s × q99.9(lateness) + p99(renewal round trip), duration kept small;
 * - max-hold cap = max(floor, 3 × p99(hold)).
 *
 * s = {@link LEASE_SAFETY}. Lateness is a renewal's gap − its nominal period (the
 * holder's own where the door knew it, else the median gap).
 */

/** How many times the late tail the margin must hold. */
export const LEASE_SAFETY = 2;
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
/** Libraries whose every lock is a lease, renewed or not yet. */
const ALWAYS_LEASES: ReadonlySet<LeaseLibrary> = new Set(['bullmq', 'redisson']);

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
  /** period ÷ TTL in use. */
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
  lateness: { lowMs: number; highMs: number; count: number }[];
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
  const library = mostCommon(sum.libraries, 0, (code) => LEASE_LIBRARIES[code] ?? 'unknown');
  if (holds < LEASE_SHARE * facts.holdCount && !ALWAYS_LEASES.has(library)) return undefined;
  const ms = (us: number) => us / 1000;
  const { gap, lateness, margin, roundTrip, loopDelay } = sum;
  // The holders' own period where the door knew it (BullMQ, Redisson, autoExtend), even before any renewal.
  const known = sum.periods.size > 0;
  const ttlMs = Math.max(facts.ttlMs, 1);
  // The holders' own period, or the median gap: then a gap's lateness is how far past the median it came.
  const periodMs = known ? mostCommon(sum.periods, 0, (p) => p) : ms(gap.valueAtPercentile(50));
  const late = (percentile: number) => (known ? ms(lateness.valueAtPercentile(percentile)) : Math.max(0, ms(gap.valueAtPercentile(percentile)) - periodMs));
  const latenessMs = { p99: late(99), p999: late(99.9), max: known ? ms(lateness.maxValue) : Math.max(0, ms(gap.maxValue) - periodMs) };
  const mode = library === 'redlock' ? 'threshold' : 'period';
  const alpha = Math.min(0.95, Math.max(0.05, periodMs / ttlMs));
  const roundTripMs = roundTrip.totalCount > 0 ? { p99: ms(roundTrip.valueAtPercentile(99)), max: ms(roundTrip.maxValue) } : null;

  const step = (value: number) => Math.min(Math.ceil(value / facts.stepMs - 1e-9) * facts.stepMs, MAX_TTL_MS);
  const maxHoldMs = step(Math.max(facts.floorMs, 3 * facts.holdP99Ms));
  let recommended: LeaseAnalysis['recommended'];
  if (mode === 'threshold') {
    const thresholdMs = step(LEASE_SAFETY * latenessMs.p999 + (roundTripMs?.p99 ?? 0));
    // The duration stays small (a crash costs it), and long enough that renewals are not back to back.
    const leaseMs = step(Math.max(facts.floorMs, 2 * thresholdMs));
    recommended = { leaseMs, renewEveryMs: leaseMs - thresholdMs, thresholdMs, maxHoldMs };
  } else {
    const leaseMs = step(Math.max(facts.floorMs, (LEASE_SAFETY * latenessMs.p999) / (1 - alpha)));
    recommended = { leaseMs, renewEveryMs: Math.max(1, Math.floor(alpha * leaseMs)), maxHoldMs };
  }

  // An on-time renewal leaves (1 − α) of the TTL: with threshold renewal, the threshold.
  const onTimeMarginMs = Math.max(0, ttlMs - periodMs);
  const atRiskBelowMs = Math.min(AT_RISK_SHARE * ttlMs, onTimeMarginMs / 2);
  const atRisk = countBelow(margin, atRiskBelowMs * 1000);
  const ranOut = countBelow(margin, 1);
  const renewals = gap.totalCount;
  const verdict: LeaseVerdict =
    atRisk > 0
      ? 'lease-at-risk'
      : renewals < MIN_RENEWALS
        ? 'insufficient-data'
        : facts.ttlMs > TOO_LONG_FACTOR * recommended.leaseMs
          ? 'lease-too-long'
          : 'ok';
  return {
    holds,
    renewals,
    library,
    mode,
    periodMs,
    periodSource: known ? 'known' : 'inferred',
    alpha: periodMs / ttlMs,
    ...(mode === 'threshold' ? { thresholdMs: Math.max(0, facts.ttlMs - periodMs) } : {}),
    gapMs: { p50: ms(gap.valueAtPercentile(50)), p99: ms(gap.valueAtPercentile(99)), max: ms(gap.maxValue) },
    latenessMs,
    minMarginMs: margin.totalCount > 0 ? ms(margin.minValue) : ttlMs,
    atRiskBelowMs,
    atRisk,
    ranOut,
    roundTripMs,
    loopDelayMaxMs: loopDelay.totalCount > 0 ? ms(loopDelay.maxValue) : null,
    recommended,
    verdict,
    hourly: [...reader.hourlyMin].map(([hourStartMs, us]) => ({ hourStartMs, minMarginMs: ms(us) })).sort((a, b) => a.hourStartMs - b.hourStartMs),
    lateness: latenessBins(known ? lateness : gap, known ? 0 : periodMs),
  };
}

/** Values below `limitUs` (by bucket: a bucket counts when its highest value is below the limit, or it holds 0). */
function countBelow(h: DenseHistogram, limitUs: number): number {
  let n = 0;
  for (const b of h.buckets()) if (b.highUs < limitUs || b.lowUs === 0) n += b.count;
  return n;
}

function mostCommon<T>(counts: ReadonlyMap<number, number>, fallback: number, as: (key: number) => T): T {
  let best = fallback;
  let most = -1;
  for (const [key, n] of counts) if (n > most || (n === most && key < best)) [best, most] = [key, n];
  return as(best);
}

/** Lateness in about ten log-spaced bins per decade (ms); with an inferred period, gaps shifted by it. */
function latenessBins(h: DenseHistogram, shiftMs: number): LeaseAnalysis['lateness'] {
  const bins = new Map<number, { lowMs: number; highMs: number; count: number }>();
  for (const b of h.buckets()) {
    const valueMs = Math.max(b.lowUs / 1000 - shiftMs, 0.1);
    const slot = Math.floor(Math.log10(valueMs) * 10);
    let bin = bins.get(slot);
    if (!bin) bins.set(slot, (bin = { lowMs: 10 ** (slot / 10), highMs: 10 ** ((slot + 1) / 10), count: 0 }));
    bin.count += b.count;
  }
  return [...bins.values()].sort((a, b) => a.lowMs - b.lowMs);
}
