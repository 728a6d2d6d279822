import { zeroOutcomeCounts, type Outcome } from '../sample/sample.js';
import type { DecodeTarget } from '../store/histogram/codec.js';
import { addEncodedRollup, isReadableRollup } from '../store/histogram/codec.js';
import { DenseHistogram } from '../store/histogram/histogram.js';
import { HOUR_MS } from '../units.js';
import { LeaseReader } from './lease.js';
import type { HourRow } from './read-rollups.js';

export interface HourlyPoint {
  /** Start of the hour, epoch ms. */
  hourStartMs: number;
  count: number;
  p99Ms: number;
  /** The longest hold that hour. */
  maxMs: number;
  /** A gap in what was seen (`watch` lost notifications) touches this hour: its count is a lower bound. */
  incomplete?: true;
}

/**
 * One pattern's rollup rows folded together (the fold, apart from the figures `summarize` reads of it):
 * its histograms, outcome counts, TTLs in use and hourly series. Rows come in time order, so one hour's
 * histogram is built at a time and then added to the total.
 */
export class PatternFold {
  /** Every hold (a censored one at how long it was seen held), the ones whose end was seen, the censored ones. */
  readonly hold = new DenseHistogram();
  readonly seen = new DenseHistogram();
  readonly censored = new DenseHistogram();
  readonly wait = new DenseHistogram();
  readonly lease = new LeaseReader();
  /** TTL in use (ms) → holds taken with it. */
  readonly ttls = new Map<number, number>();
  readonly outcomes: Record<Outcome, number> = zeroOutcomeCounts();
  readonly hourly: HourlyPoint[] = [];
  count = 0;
  threw = 0;
  unconfirmed = 0;
  extended = 0;
  extensions = 0;
  /** Rows whose distributions could not be decoded (a damaged file): left out of every figure. */
  unreadableRows = 0;
  holdSumUs = 0;
  firstMs = Number.POSITIVE_INFINITY;
  lastMs = Number.NEGATIVE_INFINITY;

  private readonly hour = new DenseHistogram();
  private hourStart = Number.NaN;
  private hourCount = 0;
  private readonly holdAndSeen = both(this.hour, this.seen);
  private readonly holdAndCensored = both(this.hour, this.censored);

  /** Folds one row; rows come in time order. */
  add(row: HourRow): void {
    const [bucketStartMs, rowCount, released, expired, notAcquired, error, rowThrew, rowHoldSumUs, , rowFirstMs, rowLastMs, hists, rowExtended, rowExtensions, rowLost, rowUnconfirmed] = row;
    if (!isReadableRollup(hists)) {
      this.unreadableRows++;
      return;
    }
    const rowHour = Math.floor(bucketStartMs / HOUR_MS) * HOUR_MS;
    if (rowHour !== this.hourStart) {
      this.closeHour();
      this.hour.clear();
      this.hourStart = rowHour;
      this.hourCount = 0;
    }
    this.lease.setHour(rowHour);
    addEncodedRollup(hists, this.holdAndSeen, this.wait, this.ttls, this.holdAndCensored, this.lease);
    this.hourCount += rowCount;
    this.count += rowCount;
    this.threw += rowThrew;
    this.unconfirmed += rowUnconfirmed ?? 0;
    this.extended += rowExtended;
    this.extensions += rowExtensions;
    this.holdSumUs += rowHoldSumUs;
    this.outcomes.released += released;
    this.outcomes.expired += expired;
    this.outcomes.not_acquired += notAcquired;
    this.outcomes.error += error;
    this.outcomes.lost += rowLost;
    if (rowFirstMs < this.firstMs) this.firstMs = rowFirstMs;
    if (rowLastMs > this.lastMs) this.lastMs = rowLastMs;
  }

  /** Adds the last hour to the total; the fold is then read, not added to. */
  finish(): this {
    this.closeHour();
    this.hourStart = Number.NaN;
    return this;
  }

  private closeHour(): void {
    if (Number.isNaN(this.hourStart)) return;
    this.hourly.push({ hourStartMs: this.hourStart, count: this.hourCount, p99Ms: this.hour.valueAtPercentile(99) / 1000, maxMs: this.hour.maxValue / 1000 });
    this.hold.add(this.hour);
  }
}

/** A pattern's rows, folded. */
export function foldRows(rows: readonly HourRow[]): PatternFold {
  const fold = new PatternFold();
  for (const row of rows) fold.add(row);
  return fold.finish();
}

/** A decode target that adds into two histograms. */
function both(a: DecodeTarget, b: DecodeTarget): DecodeTarget {
  return {
    addAt: (index, count) => (a.addAt(index, count), b.addAt(index, count)),
    addSummary: (total, min, max) => (a.addSummary(total, min, max), b.addSummary(total, min, max)),
  };
}
