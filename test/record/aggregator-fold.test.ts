import { describe, expect, it } from 'vitest';
import { Aggregator, FOLD } from '../../src/record/aggregator.js';
import { KEY_CACHE_LIMIT } from '../../src/sample/pattern-cache.js';
import { BUCKET_MS } from '../../src/store/format.js';

const aggregator = (maxPatterns = 1000) =>
  new Aggregator({ instance: 't', templates: [], maxPatterns, budget: { failed: 0, slowest: 0, uniform: 0 }, rawSampleRate: 0, maxPendingRawRows: 10 });

/** A word of letters only for `n`, so that every prefix made of it is a pattern of its own. */
const word = (n: number) => n.toString(26).replace(/./g, (c) => String.fromCharCode(97 + parseInt(c, 26)));

describe('patternOverflow, with the id-prefix cache full', () => {
  it('counts every sample filed under {other}: more distinct prefixes than the cache holds, each sample through the prefix path', () => {
    const a = aggregator(10);
    const at = Date.now();
    const prefixes = KEY_CACHE_LIMIT * 2 + 500;
    let folded = 0;
    // Three rounds over all prefixes: the cache fills, is emptied and refills, and every round meets prefixes it forgot.
    for (let round = 0; round < 3; round++) {
      for (let p = 0; p < prefixes; p++) {
        // Two ids per prefix: the first derives (or finds) the prefix's pattern, the second finds it cached.
        for (const id of [2 * p, 2 * p + 1]) {
          // Forty depths: forty patterns the learner cannot merge (the first position, a word per prefix, it learns).
          const key = `svc${word(p)}${':x'.repeat(p % 40)}:lock:${round * prefixes * 2 + id}`;
          expect(a.fold({ key, at, holdMs: 1, ttlMs: 1000, outcome: 'released' })).toBe(FOLD.counted);
          folded++;
        }
      }
    }
    const rollups = a.seal(at + 1, true).batches.flatMap((b) => b.rollups);
    const other = rollups.find((r) => r.pattern === '{other}')!.values[0];
    expect(rollups.reduce((sum, r) => sum + r.values[0], 0)).toBe(folded);
    // Past the first position's learning, ten depths have patterns of their own and thirty go to {other}.
    expect(other).toBeGreaterThan(folded * 0.7);
    expect(a.patternOverflow).toBe(other);
    const learned = new Set(rollups.map((r) => r.pattern).filter((p) => p.startsWith('{id}')));
    expect(learned.size).toBe(10);
  });
});

describe('the current hour, found without computing the bucket', () => {
  it('files samples on both sides of an hour boundary, and late ones, into their own hours', () => {
    const a = aggregator();
    const hour = Math.floor(Date.now() / BUCKET_MS) * BUCKET_MS - BUCKET_MS;
    const ats = [hour + 10, hour + BUCKET_MS - 1, hour + BUCKET_MS, hour + BUCKET_MS - 0.4, hour - 1, hour + BUCKET_MS + 0.4, hour, hour + 2 * BUCKET_MS - 1];
    for (const at of ats) expect(a.fold({ key: 'order:lock:1', at, holdMs: 1, ttlMs: 1000, outcome: 'released' })).toBe(FOLD.counted);
    const rollups = a.seal(Date.now(), true).batches.flatMap((b) => b.rollups);
    const byHour = Object.fromEntries(rollups.map((r) => [(r.bucketStartMs - hour) / BUCKET_MS, r.values[0]]));
    // hour - 1 → the hour before; hour + BUCKET_MS - 0.4 rounds up into the next hour.
    expect(byHour).toEqual({ '-1': 1, 0: 3, 1: 4 });
  });
});

describe('validation reads the clock seldom, and still refuses what is too far ahead', () => {
  it('refuses an `at` more than a day ahead right after thousands of samples taken without reading the clock', () => {
    const a = aggregator();
    const now = Date.now();
    for (let i = 0; i < 5000; i++) expect(a.fold({ key: `k:${i}`, at: now - i, holdMs: 1, ttlMs: 1000, outcome: 'released' })).toBe(FOLD.counted);
    expect(a.fold({ key: 'k:late', at: Date.now() + 24 * 3600_000 + 60_000, holdMs: 1, ttlMs: 1000, outcome: 'released' })).toBe(FOLD.invalid);
    expect(a.lastRefusal).toMatch(/`at` must be epoch milliseconds/);
    expect(a.fold({ key: 'k:soon', at: Date.now() + 24 * 3600_000 - 60_000, holdMs: 1, ttlMs: 1000, outcome: 'released' })).toBe(FOLD.counted);
    for (const at of [Number.NaN, Number.POSITIVE_INFINITY, 1_700_000_000, -1]) expect(a.fold({ key: 'k:bad', at, holdMs: 1, ttlMs: 1000, outcome: 'released' })).toBe(FOLD.invalid);
  });
});
