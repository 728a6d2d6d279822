import { join } from 'node:path';
import { expect } from 'vitest';
import { SqliteRecorder, type LockSample } from '../../src/index.js';

/** Lease samples as a door would record them (with no renewals, fixed locks'), spread evenly over two days (the window rule is met). */
export const LEASE_START = Date.UTC(2026, 10, 30, 0);
const HOUR = 3_600_000;

export interface LeaseShape {
  key: (i: number) => string;
  ttlMs: number;
  holds: number;
  renewalsPerHold: number;
  /** The gap of renewal `r` of hold `i`. */
  gapMs: (i: number, r: number) => number;
  periodMs?: number;
  library: NonNullable<LockSample['renewal']>['library'];
  roundTripMs?: number;
}

/** Writes `shape`'s holds to `<dir>/<name>.db` through a real SqliteRecorder; returns the path. */
export async function recordLeases(dir: string, name: string, shape: LeaseShape): Promise<string> {
  const path = join(dir, `${name}.db`);
  const recorder = new SqliteRecorder({ path, instance: name });
  for (let i = 0; i < shape.holds; i++) {
    const gapsMs = Array.from({ length: shape.renewalsPerHold }, (_, r) => shape.gapMs(i, r));
    // No renewals: a fixed lock's sample, for data that mixes both.
    const minMarginMs = gapsMs.length === 0 ? shape.ttlMs : Math.min(...gapsMs.map((g) => shape.ttlMs - g));
    const sample: LockSample = {
      key: shape.key(i),
      // Two days, evenly: the window rule is met.
      at: LEASE_START + Math.floor((i / shape.holds) * 48 * HOUR),
      holdMs: gapsMs.reduce((a, b) => a + b, 0) + 50,
      ttlMs: shape.ttlMs,
      outcome: minMarginMs <= 0 ? 'expired' : 'released',
      extensions: gapsMs.length,
    };
    if (gapsMs.length > 0) {
      sample.renewal = {
        gapsMs,
        minMarginMs,
        library: shape.library,
        ...(shape.periodMs !== undefined && { periodMs: shape.periodMs }),
        ...(shape.roundTripMs !== undefined && { maxRoundTripMs: shape.roundTripMs }),
      };
    }
    recorder.record(sample);
  }
  await recorder.close();
  expect(recorder.stats().dropped).toBe(0);
  return path;
}

/**
 * BullMQ at `lockDuration: 1000`, renewed every 500 ms: 400 jobs, 3 renewals each; one job in 40 blocks its
 * worker's event loop 350–510 ms, so one renewal comes that late (10 leases under 200 ms left, 2 run out).
 */
export const LATE_BULLMQ: LeaseShape = {
  key: (i) => `bull:thumbs:${i}:lock`,
  ttlMs: 1000,
  holds: 400,
  renewalsPerHold: 3,
  gapMs: (i, r) => (i % 40 === 0 && r === 1 ? 850 + (i % 200) : 500 + (i % 5)),
  periodMs: 500,
  library: 'bullmq',
};

/** node-redlock `using()` at a 1 s duration, renewing with 500 ms left: 400 holds, 6 renewals each, every one a few ms late at most. */
export const IN_TIME_REDLOCK: LeaseShape = {
  key: (i) => `order:lock:${i}`,
  ttlMs: 1000,
  holds: 400,
  renewalsPerHold: 6,
  gapMs: (i, r) => 500 + ((i * 7 + r * 3) % 11),
  library: 'redlock',
  roundTripMs: 2,
};
