import { encodeRollup } from '../store/histogram/codec.js';
import { PagedHistogram } from '../store/histogram/paged.js';
import type { FoldedRollup } from '../store/input.js';
import type { RollupValues } from '../store/rollup.js';
import { HourBudget, type RawBudget } from './raw-budget.js';

/** A pattern of one instance, and its hours in memory (usually one: the current). */
export class Series {
  current: PatternHour | undefined;
  readonly hours: PatternHour[] = [];
  constructor(
    readonly instance: string,
    readonly pattern: string,
  ) {}
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
  readonly wait = new PagedHistogram();
  /** Holds whose end was not seen (made on the first), at how long they were seen held. */
  censored: PagedHistogram | undefined;
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
      this.firstTsMs, this.lastTsMs, encodeRollup(this.hold, this.wait, ttls, this.censored), this.extended, this.extensions, lost, this.unconfirmed,
    ];
    this.count = this.threw = this.holdSumUs = this.waitSumUs = this.extended = this.extensions = this.ttlCount = this.unconfirmed = 0;
    this.outcomes.fill(0);
    this.firstTsMs = Number.POSITIVE_INFINITY;
    this.lastTsMs = Number.NEGATIVE_INFINITY;
    this.hold.reset();
    this.wait.reset();
    this.censored?.reset();
    this.otherTtls = undefined;
    return { pattern: this.series.pattern, bucketStartMs: this.bucketStartMs, values };
  }
}
