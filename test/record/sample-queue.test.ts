import { describe, expect, it } from 'vitest';
import { Aggregator, FOLD } from '../../src/record/aggregator.js';
import { FOLD_AS_IS, SampleQueue } from '../../src/record/sample-queue.js';
import { TRUSTED_SAMPLE } from '../../src/sample/check-sample.js';
import type { LockSample } from '../../src/sample/sample.js';

const aggregator = (maxPatterns = 1000) =>
  new Aggregator({ instance: 'q', templates: [], maxPatterns, budget: { failed: 1000, slowest: 10, uniform: 0 }, rawSampleRate: 0, maxPendingRawRows: 10_000 });
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
    expect(queue.take(hostile)).toBe(FOLD.invalid);
    expect(queue.refusal).toBe('reading the sample threw: boom');
    expect(queue.length).toBe(0);
    // A sample marked trusted skips the check; a number of it that throws when read leaves no slot counted.
    const forged = { ...base, at: { valueOf: () => { throw new Error('late boom'); } }, [TRUSTED_SAMPLE]: true } as unknown as LockSample;
    expect(queue.take(forged)).toBe(FOLD.invalid);
    expect(queue.refusal).toBe('reading the sample threw: late boom');
    expect(queue.length).toBe(0);
    expect(queue.take(base)).toBe(FOLD.counted);
    expect(queue.length).toBe(1);
  });

  it("counts an outcome by its value, not by the string it is: 'released' built at runtime takes the short path, a String object or an unknown outcome is refused as the fold refuses it", () => {
    const direct = aggregator();
    const queued = aggregator();
    const queue = new SampleQueue();
    const outcomes: unknown[] = [[...'released'].join(''), 'released', `${'expi'}${'red'}`, new String('released'), 'Released', '', undefined, 'toString'];
    outcomes.forEach((outcome, i) => {
      const sample = { key: `order:lock:item:${i}`, at: START + i, holdMs: 2, ttlMs: 5000, outcome } as unknown as LockSample;
      const d = direct.fold({ ...sample });
      expect(queue.take(sample)).toBe(d);
      if (d === FOLD.invalid) expect(queue.refusal).toBe(direct.lastRefusal);
    });
    expect(queue.length).toBe(3);
    expect(queue.foldInto(queued)).toBe(0);
    const sealed = rollups(queued);
    expect(sealed[0]!.values.slice(0, 3)).toEqual([3, 2, 1]);
    expect(sealed).toEqual(rollups(direct));
  });

  it('folds a queued sample as the object fold does: rollups, raw rows, refusals, the pattern cap and trusted samples alike', () => {
    const direct = aggregator(3);
    const queued = aggregator(3);
    const queue = new SampleQueue();
    const refusals: string[][] = [[], []];
    for (let i = 0; i < 600; i++) {
      // Seven patterns against a cap of three: {other} and its overflow count; failures and slow holds make raw rows.
      const sample: Record<string | symbol, unknown> = {
        key: `svc${String.fromCharCode(97 + (i % 7))}:lock:${i}`, at: START + i * 30_000, holdMs: i % 10 === 0 ? undefined : (i % 89) * 3.7,
        waitMs: i % 3 === 0 ? null : i % 4, ttlMs: 5000, attempts: 1 + (i % 2), extensions: i % 5, threw: i % 11 === 0, outcome: OUTCOMES[i % 5]!,
      };
      if (i % 13 === 0) sample['holdMs'] = -5; // refused
      if (i % 17 === 0) sample['at'] = 1_700_000_000; // seconds: refused
      if (i % 19 === 0) sample[TRUSTED_SAMPLE] = true;
      const d = direct.fold({ ...sample } as unknown as LockSample);
      const q = queue.take(sample as unknown as LockSample);
      expect(q).toBe(d === FOLD.invalid ? FOLD.invalid : FOLD.counted);
      if (d === FOLD.invalid) refusals[0]!.push(direct.lastRefusal);
      if (q === FOLD.invalid) refusals[1]!.push(queue.refusal);
      if (queue.full) expect(queue.foldInto(queued)).toBe(0);
    }
    expect(queue.foldInto(queued)).toBe(0);
    expect(refusals[0]!.length).toBeGreaterThan(50);
    expect(refusals[1]).toEqual(refusals[0]);
    expect(queued.patternOverflow).toBe(direct.patternOverflow);
    expect(direct.patternOverflow).toBeGreaterThan(0);
    const sealed = (a: Aggregator) => a.seal(START + 10 * 3_600_000, true).batches.map((b) => ({ ...b, rollups: [...b.rollups].sort((x, y) => (x.pattern + x.bucketStartMs).localeCompare(y.pattern + y.bucketStartMs)) }));
    const expected = sealed(direct);
    expect(expected[0]!.raw.length).toBeGreaterThan(100);
    expect(sealed(queued)).toEqual(expected);
  });
});

