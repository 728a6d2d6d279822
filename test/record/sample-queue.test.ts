import { describe, expect, it } from 'vitest';
import { Aggregator, FOLD } from '../../src/record/aggregator.js';
import { FOLD_AS_IS, SampleQueue } from '../../src/record/sample-queue.js';
import type { LockSample } from '../../src/sample/sample.js';

const aggregator = () =>
  new Aggregator({ instance: 'q', templates: [], maxPatterns: 1000, budget: { failed: 1000, slowest: 10, uniform: 0 }, rawSampleRate: 0, maxPendingRawRows: 10_000 });
const START = Date.UTC(2026, 0, 1);
const OUTCOMES = ['released', 'expired', 'not_acquired', 'error', 'lost'] as const;

/** What the two aggregators hold, by pattern-hour: every rollup value (counts, sums, the histograms' and TTLs' blob). */
function rollups(a: Aggregator) {
  return a.seal(START + 10 * 3_600_000, true).batches.flatMap((b) => b.rollups).sort((x, y) => (x.pattern + x.bucketStartMs).localeCompare(y.pattern + y.bucketStartMs));
}

describe('SampleQueue: record() queues samples and folds them later', () => {
  it('folds what a sample held when it was taken, though the caller reuses and changes the object; every optional field as the fold reads it', () => {
    const direct = aggregator();
    const queued = aggregator();
    const queue = new SampleQueue();
    // One object, changed after each take, as a loop that reuses its sample does (the footprint benchmark).
    // Loosely typed: JavaScript callers pass null where the types say undefined, and the fold takes both.
    const sample: Record<string, unknown> = { key: '', at: 0, ttlMs: 0, outcome: 'released' };
    for (let i = 0; i < 1000; i++) {
      sample['key'] = `order:lock:${i % 3 === 0 ? 'item' : 'cart'}:${i}`;
      sample['at'] = START + i * 20_000;
      sample['holdMs'] = i % 7 === 0 ? undefined : i % 11 === 0 ? null : (i % 97) * 1.25;
      sample['waitMs'] = i % 5 === 0 ? undefined : i % 13 === 0 ? null : i % 17;
      sample['ttlMs'] = i % 4 === 0 ? 30_000 : 10_000;
      sample['attempts'] = i % 6 === 0 ? undefined : 1 + (i % 3);
      sample['extensions'] = i % 8 === 0 ? null : i % 4;
      sample['threw'] = i % 9 === 0;
      sample['outcome'] = OUTCOMES[i % 5]!;
      expect(direct.fold({ ...sample } as unknown as LockSample)).toBe(FOLD.counted);
      expect(queue.take(sample as unknown as LockSample)).toBe(FOLD.counted);
      if (queue.full) expect(queue.foldInto(queued)).toBe(0);
    }
    expect(queue.length).toBeGreaterThan(0);
    expect(queue.foldInto(queued)).toBe(0);
    expect(queue.length).toBe(0);
    const expected = rollups(direct);
    expect(expected.reduce((n, r) => n + (r.values[0] as number), 0)).toBe(1000);
    expect(rollups(queued)).toEqual(expected);
  });

  it('refuses an invalid sample when it is taken, and leaves to the fold the samples with fields it does not hold', () => {
    const queue = new SampleQueue();
    const base = { key: 'k:1', at: START, holdMs: 1, ttlMs: 1000, outcome: 'released' } as const;
    expect(queue.take({ ...base, holdMs: -1 })).toBe(FOLD.invalid);
    expect(queue.refusal).toMatch(/holdMs/);
    expect(queue.take({ ...base, waitMs: '5' as unknown as number })).toBe(FOLD.invalid);
    for (const extra of [{ pattern: 'p' }, { instance: 'other' }, { censored: true }, { renewal: { gapsMs: [], minMarginMs: 1 } }]) {
      expect(queue.take({ ...base, ...extra } as LockSample)).toBe(FOLD_AS_IS);
    }
    expect(queue.take({ ...base, outcome: 'expired', unconfirmed: true })).toBe(FOLD_AS_IS);
    expect(queue.length).toBe(0);
    const hostile = { ...base, get holdMs(): number { throw new Error('boom'); } };
    expect(queue.takeSafely(hostile)).toBe(FOLD.invalid);
    expect(queue.refusal).toBe('reading the sample threw: boom');
    expect(queue.length).toBe(0);
  });
});
