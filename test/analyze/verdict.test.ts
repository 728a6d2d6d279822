import { describe, expect, it } from 'vitest';
import { verdictFor } from '../../src/analyze/verdict.js';

describe('verdicts separate risk from hygiene', () => {
  const evidence = (p99Ms: number, recommendedTtlMs: number) => ({ expired: 0, holdCount: 10_000, recommendedTtlMs, neededMs: 3 * p99Ms, floorMs: 3000 });

  it.each([
    // A 2 s TTL on a 22 ms p99: far above the need (66 ms), only under the 3 s floor.
    ['a TTL under the floor that covers the data', 2000, evidence(22, 3000), 'below-floor'],
    // A 2 s TTL on a 900 ms p99: the data needs 2.7 s.
    ['a TTL under what the data needs', 2000, evidence(900, 2700), 'too-short'],
    // 4.05 s against 3 × 1.35 s = 4.05 s, rounded up to 4.1 s: short only of the rounding.
    ['a TTL short only of the rounding', 4050, evidence(1350, 4100), 'ok'],
    ['a TTL more than 3× the recommendation', 10_000, evidence(100, 3000), 'too-long'],
    ['any expiration', 60_000, { ...evidence(100, 3000), expired: 1 }, 'expired'],
    ['too few samples', 2000, { ...evidence(900, 2700), holdCount: 100 }, 'insufficient-data'],
  ] as const)('%s', (_name, ttlMs, ev, verdict) => {
    expect(verdictFor(ttlMs, ev)).toBe(verdict);
  });
});
