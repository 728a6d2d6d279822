import { describe, expect, it } from 'vitest';
import { minSamplesForQuantile, normalQuantile, upperBoundRank } from '../../src/analyze/confidence.js';
import { recommendTtl, resolveRecommendationPolicy } from '../../src/analyze/recommend.js';
import { parseTime } from '../../src/cli/args.js';

describe('recommendTtl: max(floor, multiplier × p99), rounded up to a step', () => {
  const policy = resolveRecommendationPolicy();
  it.each([
    [0, 3000], // no data: the floor
    [400, 3000], // 3 × 400 = 1200 < floor: the floor wins
    [1000, 3000], // exactly the floor
    [1000.1, 3100], // a hair above rounds up a whole step
    [1234.5, 3800], // 3703.5 → 3800
    [2000, 6000], // exact multiples stay
    [5402.623, 16300],
  ])('p99 %d ms → %d ms', (p99, ttl) => {
    expect(recommendTtl(p99, policy)).toBe(ttl);
  });

  it('honours multiplier, floor and step', () => {
    expect(recommendTtl(1000, resolveRecommendationPolicy({ multiplier: 2 }))).toBe(3000);
    expect(recommendTtl(1000, resolveRecommendationPolicy({ multiplier: 2, floorMs: 0 }))).toBe(2000);
    expect(recommendTtl(1001, resolveRecommendationPolicy({ multiplier: 2, floorMs: 0, stepMs: 1000 }))).toBe(3000);
    // TTLs are whole milliseconds, so is a step: 0.3 would make recommendations no policy file takes.
    expect(() => resolveRecommendationPolicy({ stepMs: 0.3 })).toThrow('Expected `stepMs` to be an integer from 1 to 2147483647, got `0.3`');
    expect(recommendTtl(1e12, resolveRecommendationPolicy({ multiplier: 1000 }))).toBe(2 ** 31 - 1);
  });

  it('rejects invalid policies with the option named', () => {
    expect(() => resolveRecommendationPolicy({ multiplier: 0 })).toThrow('Expected `multiplier` to be a finite number > 0, got `0`');
    expect(() => resolveRecommendationPolicy({ floorMs: -1 })).toThrow('`floorMs`');
    expect(() => resolveRecommendationPolicy({ stepMs: Number.NaN })).toThrow('`stepMs`');
  });
});

describe('confidence of p99', () => {
  it('needs 299 samples before the maximum bounds p99 at 95 %', () => {
    expect(minSamplesForQuantile(0.99, 0.95)).toBe(299);
    expect(upperBoundRank(298)).toBeUndefined();
    expect(upperBoundRank(299)).toBe(299);
  });

  it('matches a brute-force binomial computation', () => {
    for (const n of [299, 500, 1000, 5000]) {
      // Independent: sum the pmf from 0 upward in plain floating point.
      const pmf = (k: number) => Math.exp(lnChoose(n, k) + k * Math.log(0.99) + (n - k) * Math.log(0.01));
      let cdf = 0;
      let expected = n;
      for (let k = 0; k < n; k++) {
        cdf += pmf(k); // P(X ≤ k)
        if (cdf >= 0.95) {
          expected = k + 1; // the (k+1)-th order statistic
          break;
        }
      }
      expect(upperBoundRank(n)).toBe(expected);
    }
  });

  it('uses a normal approximation for very large n that agrees with the exact walk', () => {
    const n = 200_000;
    const exact = upperBoundRank(n)!;
    const approx = upperBoundRank(n + 1)!;
    expect(Math.abs(approx - exact)).toBeLessThanOrEqual(3);
    expect(normalQuantile(0.95)).toBeCloseTo(1.6448536, 6);
  });
});

function lnChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log(n - k + i) - Math.log(i);
  return s;
}

describe('parseTime', () => {
  const now = Date.UTC(2026, 11, 2, 12);
  it.each([
    ['48h', now - 48 * 3_600_000],
    ['90m', now - 90 * 60_000],
    ['2d', now - 2 * 86_400_000],
    ['now', now],
    ['2026-11-30', Date.UTC(2026, 10, 30)],
    ['2026-11-30T08:00Z', Date.UTC(2026, 10, 30, 8)],
    ['1796233205632', 1796233205632],
  ])('%s', (text, ms) => {
    expect(parseTime(text, '--since', now)).toBe(ms);
  });

  it.each(['yesterdayish', '', '48', '-2h', '2026-13-45'])('rejects %j', (text) => {
    expect(() => parseTime(text, '--since', now)).toThrow(/Expected `--since`/);
  });
});
