import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WALL_CLOCK_REFRESH_MS, epochMsAt } from '../src/clock.js';

describe('the wall clock from a monotonic reading', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('agrees with Date.now() to the millisecond, never ahead of it', () => {
    for (let i = 0; i < 1000; i++) {
      const before = Date.now();
      const at = epochMsAt(performance.now());
      const after = Date.now();
      expect(Number.isInteger(at)).toBe(true);
      expect(at).toBeGreaterThanOrEqual(before - 1);
      expect(at).toBeLessThanOrEqual(after);
    }
  });

  it('follows a wall clock that was set (NTP, a machine woken from sleep) within the refresh interval', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const now = performance.now();
    vi.setSystemTime(Date.UTC(2026, 11, 4, 12));
    const first = epochMsAt(now + 2 * WALL_CLOCK_REFRESH_MS);
    expect(Math.abs(first - Date.UTC(2026, 11, 4, 12))).toBeLessThanOrEqual(2 * WALL_CLOCK_REFRESH_MS + 1);
    // Set an hour back: seen at the next refresh, not before.
    vi.setSystemTime(Date.UTC(2026, 11, 4, 11));
    expect(epochMsAt(now + 2 * WALL_CLOCK_REFRESH_MS + 10)).toBe(first + 10);
    const later = epochMsAt(now + 3 * WALL_CLOCK_REFRESH_MS + 1);
    expect(Math.abs(later - Date.UTC(2026, 11, 4, 11) - WALL_CLOCK_REFRESH_MS)).toBeLessThanOrEqual(2 * WALL_CLOCK_REFRESH_MS + 1);
  });
});
