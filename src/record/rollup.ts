import { Histogram } from './histogram.js';
import { BUCKET_MS } from './schema.js';

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
  /** released, expired, not_acquired, error */
  outcomes: [number, number, number, number];
  threw: number;
  holdSumUs: number;
  waitSumUs: number;
  firstTsMs: number;
  lastTsMs: number;
  hold: Histogram;
  wait: Histogram;
  ttls: Map<number, number>;
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
    outcomes: [0, 0, 0, 0],
    threw: 0,
    holdSumUs: 0,
    waitSumUs: 0,
    firstTsMs: tsMs,
    lastTsMs: tsMs,
    hold: new Histogram(),
    wait: new Histogram(),
    ttls: new Map(),
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
): void {
  delta.count++;
  delta.outcomes[outcome as 0 | 1 | 2 | 3]++;
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
