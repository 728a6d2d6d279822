import { OVERFLOW_PATTERN } from '../keys/pattern.js';
import { latenessOf } from '../sample/libraries.js';
import { LEASE_LIBRARIES, MAX_RENEWAL_GAPS, type RenewalTimings } from '../sample/sample.js';
import { encodeRollup, type EncodableHistogram, type LeaseParts } from '../store/histogram/codec.js';
import { PagedHistogram } from '../store/histogram/paged.js';
import type { FoldedRollup } from '../store/input.js';
import type { RollupValues } from '../store/rollup.js';
import { toMicros } from '../units.js';
import { HourBudget, type RawBudget } from './raw-budget.js';

/** A pattern-hour's lease distributions (see `LeaseParts`), made on its first lease hold. */
export class LeaseFold implements LeaseParts<PagedHistogram> {
  readonly gap = new PagedHistogram();
  readonly lateness = new PagedHistogram();
  readonly margin = new PagedHistogram();
  readonly roundTrip = new PagedHistogram();
  readonly loopDelay = new PagedHistogram();
  readonly periods = new Map<number, number>();
  readonly libraries = new Map<number, number>();

  /** Folds one lease hold's renewals (validated): per renewal its gap and lateness, per hold its least margin. */
  fold(r: RenewalTimings): void {
    const { gapsMs, periodMs, minMarginMs, maxRoundTripMs, maxLoopDelayMs, library } = r;
    const period = periodMs === undefined || periodMs === null ? -1 : periodMs;
    // Bounded again: a hostile getter could hand back a longer array than the one validated.
    const n = Math.min(gapsMs.length, MAX_RENEWAL_GAPS);
    for (let i = 0; i < n; i++) {
      const gap = gapsMs[i]!;
      this.gap.record(toMicros(gap));
      if (period >= 0) this.lateness.record(toMicros(latenessOf(gap, period)));
    }
    this.margin.record(toMicros(minMarginMs));
    if (maxRoundTripMs !== undefined && maxRoundTripMs !== null) this.roundTrip.record(toMicros(maxRoundTripMs));
    if (maxLoopDelayMs !== undefined && maxLoopDelayMs !== null) this.loopDelay.record(toMicros(maxLoopDelayMs));
    if (period >= 0) add(this.periods, Math.round(period));
    add(this.libraries, Math.max(0, LEASE_LIBRARIES.indexOf(library ?? 'unknown')));
  }

  reset(): void {
    for (const h of [this.gap, this.lateness, this.margin, this.roundTrip, this.loopDelay]) h.reset();
    this.periods.clear();
    this.libraries.clear();
  }
}

function add(counts: Map<number, number>, value: number): void {
  counts.set(value, (counts.get(value) ?? 0) + 1);
}

/**
 * The wait histogram of a pattern-hour: most locks are won at the first try, so
 * a wait of 0 is counted here in one increment (bucket 0 holds 0 alone), the
 * others in a paged histogram. A paged insert cost as much as the rest of the
 * wait's share of a `record()`.
 */
export class WaitHistogram implements EncodableHistogram {
  zeros = 0;
  private readonly others = new PagedHistogram();

  get totalCount(): number {
    return this.zeros + this.others.totalCount;
  }

  get minValue(): number {
    return this.zeros > 0 ? 0 : this.others.minValue;
  }

  get maxValue(): number {
    return this.others.maxValue;
  }

  get bucketCount(): number {
    return this.others.bucketCount + (this.zeros > 0 ? 1 : 0);
  }

  /** Records one wait (whole µs, ≥ 0, as the aggregator's fold computes them). */
  record(us: number): void {
    if (us === 0) this.zeros++;
    else this.others.record(us);
  }

  forEachBucket(visit: (index: number, count: number) => void): void {
    if (this.zeros > 0) visit(0, this.zeros);
    this.others.forEachBucket(visit);
  }

  reset(): void {
    this.zeros = 0;
    this.others.reset();
  }
}

/** A pattern of one instance, and its hours in memory (usually one: the current). */
export class Series {
  current: PatternHour | undefined;
  readonly hours: PatternHour[] = [];
  /** Whether this is `{other}`, the series past `maxPatterns`: a flag, where comparing the pattern cost two dozen instructions per sample. */
  readonly overflow: boolean;
  /** A provisional pattern renamed to a learned one: no new samples come to it. */
  renamed = false;
  constructor(
    readonly instance: string,
    readonly pattern: string,
  ) {
    this.overflow = pattern === OVERFLOW_PATTERN;
  }
}

/** One (instance, pattern, hour): what its locks add up to since the last seal, and the hour's raw-row budget. */
export class PatternHour {
  count = 0;
  readonly outcomes = [0, 0, 0, 0, 0];
  threw = 0;
  holdSumUs = 0;
  waitSumUs = 0;
  firstTsMs = Number.POSITIVE_INFINITY;
  lastTsMs = Number.NEGATIVE_INFINITY;
  extended = 0;
  extensions = 0;
  /** Samples on a pattern not seen released yet (`watch`). */
  unconfirmed = 0;
  readonly hold = new PagedHistogram();
  readonly wait = new WaitHistogram();
  /** Holds whose end was not seen (made on the first), at how long they were seen held. */
  censored: PagedHistogram | undefined;
  /** Renewed holds' renewals (made on the first). */
  lease: LeaseFold | undefined;
  /** The TTL most locks use, counted without a map lookup; others in `otherTtls`. */
  ttl = -1;
  ttlCount = 0;
  otherTtls: Map<number, number> | undefined;
  readonly budget: HourBudget;

  constructor(
    readonly series: Series,
    readonly bucketStartMs: number,
    budget: RawBudget,
  ) {
    this.budget = new HourBudget(budget);
  }

  /** The delta since the last seal, in the stored layout; then starts the next one. */
  seal(): FoldedRollup {
    const ttls = new Map(this.otherTtls);
    if (this.ttlCount > 0) ttls.set(this.ttl, (ttls.get(this.ttl) ?? 0) + this.ttlCount);
    const [released, expired, notAcquired, error, lost] = this.outcomes as [number, number, number, number, number];
    const values: RollupValues = [
      this.count, released, expired, notAcquired, error, this.threw, this.holdSumUs, this.waitSumUs,
      this.firstTsMs, this.lastTsMs, encodeRollup(this.hold, this.wait, ttls, this.censored, this.lease), this.extended, this.extensions, lost, this.unconfirmed,
    ];
    this.count = this.threw = this.holdSumUs = this.waitSumUs = this.extended = this.extensions = this.ttlCount = this.unconfirmed = 0;
    this.outcomes.fill(0);
    this.firstTsMs = Number.POSITIVE_INFINITY;
    this.lastTsMs = Number.NEGATIVE_INFINITY;
    this.hold.reset();
    this.wait.reset();
    this.censored?.reset();
    this.lease?.reset();
    this.otherTtls = undefined;
    return { pattern: this.series.pattern, bucketStartMs: this.bucketStartMs, values };
  }
}
