import { describe, expect, it } from 'vitest';
import type { LockSample } from '../../src/index.js';
import { KeyspaceTracker, likelyTtl, roundingSlackCapMs } from '../../src/watch/keyspace-tracker.js';

/** The rounding without a cap, as it was: the roundest value in [remaining, remaining + slack], the smallest among equals. */
function roundestIn(remainingMs: number, slackMs: number): number {
  let best = remainingMs;
  let bestZeros = -1;
  for (let v = remainingMs; v <= remainingMs + Math.ceil(slackMs); v++) {
    let zeros = 0;
    for (let x = v; x > 0 && x % 10 === 0; x /= 10) zeros++;
    if (zeros > bestZeros) [best, bestZeros] = [v, zeros];
  }
  return best;
}

describe('watch: the TTL rounding slack is capped', () => {
  it('item 16: a slow PTTL answer no longer turns a 100 ms TTL into 1,000 ms (injected numbers)', () => {
    // Control: with the answer's 900 ms as slack, the roundest value is 1,000.
    expect(roundestIn(100, 900)).toBe(1000);
    expect(roundestIn(97, 950)).toBe(1000);
    // Capped at max(10 ms, 2 % of the remaining TTL).
    expect(likelyTtl(100, 900)).toBe(100);
    expect(likelyTtl(97, 950)).toBe(100);
    expect(likelyTtl(95, 900)).toBe(100); // 5 ms late on a 100 ms TTL (a loaded host): still 100, not rounded ten-fold
    expect(likelyTtl(85, 900)).toBe(90); // 15 ms late: read low, within the cap — never 1,000
    expect(roundingSlackCapMs(100)).toBe(10);
    expect(roundingSlackCapMs(50)).toBe(10);
    expect(roundingSlackCapMs(10_000)).toBe(200);
    // Seconds-long TTLs keep their rounding through a stall of up to 2 %…
    expect(likelyTtl(9_850, 2_000)).toBe(10_000);
    expect(likelyTtl(29_500, 5_000)).toBe(30_000);
    // …and not beyond: 3 % late is read as the roundest value within 2 %.
    expect(likelyTtl(9_703, 2_000)).toBe(9_800);
    expect(roundestIn(9_703, 2_000)).toBe(10_000);
    // A small slack works as before.
    expect(likelyTtl(9_999, 2)).toBe(10_000);
    expect(likelyTtl(149, 1.4)).toBe(150);
    expect(likelyTtl(1_233, 1.2)).toBe(1_233);
    expect(likelyTtl(0, 0)).toBe(0);
    expect(likelyTtl(5, 100)).toBe(10); // tiny TTLs may read up to 10 ms high after a stall, never ten-fold
  });

  it('item 16: within the cap the answer is the uncapped rule’s; never more than the cap above PTTL (random numbers)', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 5_000; i++) {
      const remaining = Math.floor(random() ** 3 * 200_000);
      const slack = random() ** 2 * 5_000;
      const ttl = likelyTtl(remaining, slack);
      const cap = roundingSlackCapMs(remaining);
      expect(ttl).toBeGreaterThanOrEqual(remaining);
      expect(ttl - remaining).toBeLessThanOrEqual(Math.max(10, remaining * 0.02));
      expect(ttl).toBe(roundestIn(remaining, Math.min(Math.ceil(slack), Math.floor(cap))));
    }
  });

  it('item 16: through the tracker, a PTTL answer 5 s after the set still records the 100 ms TTL', async () => {
    const samples: LockSample[] = [];
    let answer: (pttl: number) => void = () => undefined;
    const tracker = new KeyspaceTracker({
      recorder: { record: (s) => void samples.push(s) },
      templates: [],
      instance: undefined,
      maxOpen: 10,
      readTtl: () => new Promise((resolve) => (answer = resolve)),
    });
    // The set arrived 5 s before PTTL's answer: the old slack (5 s) would have read 1,000 (or 2,000…).
    const setMs = performance.now() - 5_000;
    tracker.onEvent('n', 0, 'slow:lock:1', 'set', setMs);
    answer(99);
    await new Promise((r) => setTimeout(r, 0));
    tracker.onEvent('n', 0, 'slow:lock:1', 'del', setMs + 40);
    expect(samples.map((s) => [s.key, s.ttlMs, s.holdMs])).toEqual([['slow:lock:1', 100, 40]]);
    expect(roundestIn(99, 5_000)).toBe(1_000);
  });

  it("through the tracker, a notification read 30 ms late still records a 3 s TTL (seen in CI); a round TTL more than 1 % away is not taken", async () => {
    const samples: LockSample[] = [];
    const answers: ((pttl: number) => void)[] = [];
    const tracker = new KeyspaceTracker({
      recorder: { record: (s) => void samples.push(s) },
      templates: [],
      instance: undefined,
      maxOpen: 10,
      readTtl: () => new Promise((resolve) => answers.push(resolve)),
    });
    // Each set is stamped as just arrived, so what PTTL's own trip shows is about nothing: only the allowance for the unseen trip rounds it.
    tracker.onEvent('n', 0, 'late:lock:1', 'set', performance.now());
    answers[0]!(2_970);
    // 2,600 is 50 ms (1.96 %) above 2,550: within the rounding's cap (2 %) and a flat 50 ms, not within 1 % (25.5 ms), so it stays.
    tracker.onEvent('n', 0, 'late:lock:2', 'set', performance.now());
    answers[1]!(2_550);
    await new Promise((r) => setTimeout(r, 0));
    tracker.onEvent('n', 0, 'late:lock:1', 'del', performance.now());
    tracker.onEvent('n', 0, 'late:lock:2', 'del', performance.now());
    expect(samples.map((s) => [s.key, s.ttlMs])).toEqual([
      ['late:lock:1', 3_000],
      ['late:lock:2', 2_550],
    ]);
  });
});
