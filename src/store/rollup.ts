import { addEncodedRollup, encodeRollup } from './histogram/codec.js';
import { DenseHistogram, Histogram } from './histogram/histogram.js';
import { BUCKET_MS } from './format.js';

/**
 * Rollups: per (pattern, hour, instance), what that hour's locks add up to.
 * `rollups` holds one row per instance, `fleet_rollups` the same summed over
 * instances; both share the value columns below, in this order.
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
] as const);

/** Columns added by later schema versions, with the version that added them: older files read them as 0. */
const ADDED_IN: Readonly<Partial<Record<(typeof ROLLUP_VALUE_COLUMNS)[number], number>>> = { extended: 5, extensions: 5, lost: 5 };

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
  hists: Buffer,
  /** Locks extended at least once while held. */
  extended: number,
  /** Extensions, summed. */
  extensions: number,
  /** Locks whose key vanished before their TTL could have run out. */
  lost: number,
];

/** Positions of the summed counters in {@link RollupValues}: count … wait_sum_us. */
export const SUMMED_VALUES = 8;
export const FIRST_TS = 8;
export const LAST_TS = 9;
export const HISTS = 10;
export const EXTENDED = 11;
export const EXTENSIONS = 12;
export const LOST = 13;

/**
 * What one (pattern, hour, instance) rollup row adds up: counts per outcome,
 * sums, first/last time, and the hold, wait and TTL distributions. Built from
 * samples by the recorder's writer and by the stream sink, merged into the
 * database by upsert.
 */
export interface RollupDelta<P = number, I = number> {
  pattern: P;
  instance: I;
  bucketStartMs: number;
  count: number;
  /** released, expired, not_acquired, error, lost */
  outcomes: [number, number, number, number, number];
  threw: number;
  holdSumUs: number;
  waitSumUs: number;
  firstTsMs: number;
  lastTsMs: number;
  hold: Histogram;
  wait: Histogram;
  ttls: Map<number, number>;
  /** Locks extended at least once while held, and their extensions summed. */
  extended: number;
  extensions: number;
}

/** Start of the rollup bucket a timestamp falls in (epoch ms). */
export function bucketStartOf(tsMs: number): number {
  return tsMs - (((tsMs % BUCKET_MS) + BUCKET_MS) % BUCKET_MS);
}

export function newDelta<P, I>(pattern: P, instance: I, bucketStartMs: number, tsMs: number): RollupDelta<P, I> {
  return {
    pattern,
    instance,
    bucketStartMs,
    count: 0,
    outcomes: [0, 0, 0, 0, 0],
    threw: 0,
    holdSumUs: 0,
    waitSumUs: 0,
    firstTsMs: tsMs,
    lastTsMs: tsMs,
    hold: new Histogram(),
    wait: new Histogram(),
    ttls: new Map(),
    extended: 0,
    extensions: 0,
  };
}

/** Adds one sample (µs and ms as stored; `holdUs` < 0 when the lock was never won). */
export function addSample(
  delta: RollupDelta<unknown, unknown>,
  tsMs: number,
  holdUs: number,
  waitUs: number,
  ttlMs: number,
  outcome: number,
  threw: number,
  extensions: number,
): void {
  delta.count++;
  if (extensions > 0) {
    delta.extended++;
    delta.extensions += extensions;
  }
  delta.outcomes[outcome as 0 | 1 | 2 | 3 | 4]++;
  delta.threw += threw;
  delta.waitSumUs += waitUs;
  delta.wait.record(waitUs);
  if (holdUs >= 0) {
    delta.holdSumUs += holdUs;
    delta.hold.record(holdUs);
  }
  delta.ttls.set(ttlMs, (delta.ttls.get(ttlMs) ?? 0) + 1);
  if (tsMs < delta.firstTsMs) delta.firstTsMs = tsMs;
  if (tsMs > delta.lastTsMs) delta.lastTsMs = tsMs;
}

/**
 * Adds rollup rows together: the counters summed, the time range widened, the
 * distributions merged. Reused across rows (the histograms keep their memory).
 */
export class RollupSum {
  readonly hold = new DenseHistogram();
  readonly wait = new DenseHistogram();
  ttls = new Map<number, number>();
  readonly sums = new Array<number>(SUMMED_VALUES).fill(0);
  firstTsMs = Number.POSITIVE_INFINITY;
  lastTsMs = Number.NEGATIVE_INFINITY;
  extended = 0;
  extensions = 0;
  lost = 0;
  rows = 0;

  /** Adds a stored row. */
  addRow(values: RollupValues): void {
    for (let i = 0; i < SUMMED_VALUES; i++) this.sums[i]! += values[i] as number;
    this.widen(values[FIRST_TS], values[LAST_TS]);
    addEncodedRollup(values[HISTS], this.hold, this.wait, this.ttls);
    this.extended += values[EXTENDED];
    this.extensions += values[EXTENSIONS];
    this.lost += values[LOST];
    this.rows++;
  }

  /** Adds a delta built from samples. */
  addDelta(d: RollupDelta<unknown, unknown>): void {
    const [released, expired, notAcquired, error, lost] = d.outcomes;
    const counters = [d.count, released, expired, notAcquired, error, d.threw, d.holdSumUs, d.waitSumUs];
    for (let i = 0; i < SUMMED_VALUES; i++) this.sums[i]! += counters[i]!;
    this.widen(d.firstTsMs, d.lastTsMs);
    this.hold.addHistogram(d.hold);
    this.wait.addHistogram(d.wait);
    for (const [ttl, n] of d.ttls) this.ttls.set(ttl, (this.ttls.get(ttl) ?? 0) + n);
    this.extended += d.extended;
    this.extensions += d.extensions;
    this.lost += lost;
    this.rows++;
  }

  /** The row to store, in {@link ROLLUP_VALUE_COLUMNS} order. */
  values(): unknown[] {
    return [...this.sums, this.firstTsMs, this.lastTsMs, encodeRollup(this.hold, this.wait, this.ttls), this.extended, this.extensions, this.lost];
  }

  clear(): void {
    this.hold.clear();
    this.wait.clear();
    this.ttls = new Map();
    this.sums.fill(0);
    this.firstTsMs = Number.POSITIVE_INFINITY;
    this.lastTsMs = Number.NEGATIVE_INFINITY;
    this.extended = 0;
    this.extensions = 0;
    this.lost = 0;
    this.rows = 0;
  }

  private widen(first: number, last: number): void {
    if (first < this.firstTsMs) this.firstTsMs = first;
    if (last > this.lastTsMs) this.lastTsMs = last;
  }
}
