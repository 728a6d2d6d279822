import { addEncodedRollup, encodeRollup, type LeaseParts } from './histogram/codec.js';
import { DenseHistogram } from './histogram/histogram.js';
import { BUCKET_MS } from './format.js';

/**
 * Rollups: per (pattern, hour, instance), what that hour's locks add up to.
 * `rollups` holds one row per instance, `fleet_rollups` the same summed over
 * instances (in a file of several instances: see `SOLE_INSTANCE_META`); both
 * share the value columns below, in this order. Producers
 * fold samples into deltas of the same layout (`FoldedRollup`), which the writer
 * adds to the stored rows with {@link RollupSum}.
 */

/** The value columns of `rollups` and `fleet_rollups`, after each table's key columns. */
export const ROLLUP_VALUE_COLUMNS = Object.freeze([
  'count',
  'released',
  'expired',
  'not_acquired',
  'error',
  'threw',
  'hold_sum_us',
  'wait_sum_us',
  'first_ts_ms',
  'last_ts_ms',
  'hists',
  'extended',
  'extensions',
  'lost',
  'unconfirmed',
] as const);

/** Columns added by later schema versions, with the version that added them: older files read them as 0. */
const ADDED_IN: Readonly<Partial<Record<(typeof ROLLUP_VALUE_COLUMNS)[number], number>>> = { extended: 5, extensions: 5, lost: 5, unconfirmed: 8 };

/** The value columns as an SQL list, each with `prefix` (e.g. `r.`); read from a file of `schemaVersion`, missing ones are 0. */
export function rollupValuesSql(prefix = '', schemaVersion = Number.POSITIVE_INFINITY): string {
  return ROLLUP_VALUE_COLUMNS.map((column) => ((ADDED_IN[column] ?? 0) > schemaVersion ? `0 AS ${column}` : prefix + column)).join(', ');
}

/** A rollup row's values, read with `.raw(true)` in {@link ROLLUP_VALUE_COLUMNS} order (arrays cost less than objects per row). */
export type RollupValues = [
  count: number,
  released: number,
  expired: number,
  notAcquired: number,
  error: number,
  threw: number,
  holdSumUs: number,
  waitSumUs: number,
  firstTsMs: number,
  lastTsMs: number,
  hists: Uint8Array,
  /** Locks extended at least once while held. */
  extended: number,
  /** Extensions, summed. */
  extensions: number,
  /** Locks whose key vanished before their TTL could have run out. */
  lost: number,
  /** Samples on a pattern not seen released yet (`watch`): see `LockSample.unconfirmed`. */
  unconfirmed: number,
];

/** Positions of the summed counters in {@link RollupValues}: count … wait_sum_us. */
export const SUMMED_VALUES = 8;
export const FIRST_TS = 8;
export const LAST_TS = 9;
export const HISTS = 10;
export const EXTENDED = 11;
export const EXTENSIONS = 12;
export const LOST = 13;
export const UNCONFIRMED = 14;

/** Start of the rollup bucket a timestamp falls in (epoch ms). */
export function bucketStartOf(tsMs: number): number {
  return tsMs - (((tsMs % BUCKET_MS) + BUCKET_MS) % BUCKET_MS);
}

/** A renewed lock's distributions summed over rows (see `LeaseParts`). */
export class LeaseSum implements LeaseParts<DenseHistogram> {
  readonly gap = new DenseHistogram();
  readonly lateness = new DenseHistogram();
  readonly margin = new DenseHistogram();
  readonly roundTrip = new DenseHistogram();
  readonly loopDelay = new DenseHistogram();
  readonly periods = new Map<number, number>();
  readonly libraries = new Map<number, number>();

  /** Lease holds counted (each has one library code). */
  get holds(): number {
    let n = 0;
    for (const count of this.libraries.values()) n += count;
    return n;
  }

  clear(): void {
    for (const h of [this.gap, this.lateness, this.margin, this.roundTrip, this.loopDelay]) h.clear();
    this.periods.clear();
    this.libraries.clear();
  }
}

/**
 * Adds rollup rows together: the counters summed, the time range widened, the
 * distributions merged. Reused across rows (the histograms keep their memory).
 */
export class RollupSum {
  readonly hold = new DenseHistogram();
  readonly wait = new DenseHistogram();
  /** Holds whose end was not seen, at how long they were seen held. */
  readonly censored = new DenseHistogram();
  /** Renewed locks' renewals. */
  readonly lease = new LeaseSum();
  ttls = new Map<number, number>();
  readonly sums = new Array<number>(SUMMED_VALUES).fill(0);
  firstTsMs = Number.POSITIVE_INFINITY;
  lastTsMs = Number.NEGATIVE_INFINITY;
  extended = 0;
  extensions = 0;
  lost = 0;
  unconfirmed = 0;
  rows = 0;

  /** Adds a stored row. */
  addRow(values: RollupValues): void {
    for (let i = 0; i < SUMMED_VALUES; i++) this.sums[i]! += values[i] as number;
    this.widen(values[FIRST_TS], values[LAST_TS]);
    addEncodedRollup(values[HISTS], this.hold, this.wait, this.ttls, this.censored, this.lease);
    this.extended += values[EXTENDED];
    this.extensions += values[EXTENSIONS];
    this.lost += values[LOST];
    this.unconfirmed += values[UNCONFIRMED] ?? 0;
    this.rows++;
  }

  /** The row to store, in {@link ROLLUP_VALUE_COLUMNS} order. */
  values(): unknown[] {
    return [...this.sums, this.firstTsMs, this.lastTsMs, encodeRollup(this.hold, this.wait, this.ttls, this.censored, this.lease), this.extended, this.extensions, this.lost, this.unconfirmed];
  }

  clear(): void {
    this.hold.clear();
    this.wait.clear();
    this.censored.clear();
    this.lease.clear();
    this.ttls = new Map();
    this.sums.fill(0);
    this.firstTsMs = Number.POSITIVE_INFINITY;
    this.lastTsMs = Number.NEGATIVE_INFINITY;
    this.extended = 0;
    this.extensions = 0;
    this.lost = 0;
    this.unconfirmed = 0;
    this.rows = 0;
  }

  private widen(first: number, last: number): void {
    if (first < this.firstTsMs) this.firstTsMs = first;
    if (last > this.lastTsMs) this.lastTsMs = last;
  }
}
