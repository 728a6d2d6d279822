import { performance } from 'node:perf_hooks';

/** How long a wall-clock offset is trusted before it is read again (ms of the monotonic clock). */
export const WALL_CLOCK_REFRESH_MS = 1000;

let wallMinusMonotonicMs = 0;
let refreshAfterMs = -Infinity;

/**
 * The wall-clock time (epoch ms, an integer) at a monotonic reading (`performance.now()`): a lock needs
 * both for its start — the wall clock for the sample's hour and the token, the monotonic one for
 * durations — and each clock read costs about 50 ns. The offset between the two is read again once a
 * second, so a wall clock set by NTP (or a machine woken from sleep) is followed within a second; in
 * between, the answer may be up to 1 ms below `Date.now()`, never above it.
 */
export function epochMsAt(monotonicMs: number): number {
  if (monotonicMs >= refreshAfterMs || monotonicMs < refreshAfterMs - 2 * WALL_CLOCK_REFRESH_MS) {
    wallMinusMonotonicMs = Date.now() - performance.now();
    refreshAfterMs = monotonicMs + WALL_CLOCK_REFRESH_MS;
  }
  return Math.floor(wallMinusMonotonicMs + monotonicMs);
}
