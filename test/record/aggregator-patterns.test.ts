import { describe, expect, it } from 'vitest';
import { patternOf } from '../../src/keys/pattern.js';
import { Aggregator, FOLD } from '../../src/record/aggregator.js';

const aggregator = () =>
  new Aggregator({
    instance: 'test',
    templates: [],
    maxPatterns: 100_000,
    budget: { failed: 0, slowest: 0, uniform: 0 },
    rawSampleRate: 0,
    maxPendingRawRows: 1000,
  });

describe('the aggregator derives the same pattern as patternOf, through its fast paths', () => {
  const keys = [
    'order:lock:product:123',
    'order:lock:product:0',
    'order/lock/42',
    'order_lock_42',
    'order.lock.42',
    'order-lock-42', // `-` is no fast-path separator
    'user42',
    'shard1:lock:9',
    'lock:v2',
    'lock:12ab34',
    'cart:lock:7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a11',
    'cart:lock:7F1C0E2A-5B7E-4C1E-9D55-0C6B1F5E2A11',
    'cart-7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a11',
    'x:aaaaaaaa-5b7e-4c1e-9d55-012345678901',
    'deadbeefdeadbeef1234',
    'lock:deadbeefdeadbeef1234',
    '123',
    ':123',
    'ロック:商品:77',
    'a'.repeat(300) + ':5',
    'lock|`pipe`:\n9',
  ];
  it.each(keys)('%s', (key) => {
    const agg = aggregator();
    // Twice: the second fold goes through the caches.
    for (let i = 0; i < 2; i++) expect(agg.fold({ key, at: 1_700_000_000_000, holdMs: 1, ttlMs: 1000, outcome: 'released' })).toBe(FOLD.counted);
    const { batches } = agg.seal(1_700_000_000_000, true);
    expect(batches.flatMap((b) => b.rollups.map((r) => [r.pattern, r.values[0]]))).toEqual([[patternOf(key), 2]]);
  });

  it('200,000 distinct ids after one prefix are one pattern, and a cache that is full keeps working', () => {
    const agg = aggregator();
    for (let i = 0; i < 200_000; i++) agg.fold({ key: `order:lock:product:${i}`, at: 1_700_000_000_000, holdMs: 1, ttlMs: 1000, outcome: 'released' });
    for (let i = 0; i < 20_000; i++) agg.fold({ key: `mail:lock:${i.toString(36)}x`, at: 1_700_000_000_000, holdMs: 1, ttlMs: 1000, outcome: 'released' });
    const rollups = agg.seal(1_700_000_000_000, true).batches.flatMap((b) => b.rollups);
    const counts = new Map(rollups.map((r) => [r.pattern, r.values[0]]));
    expect(counts.get('order:lock:product:{id}')).toBe(200_000);
    expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(220_000);
  });
});

describe('an expiry on a pattern never seen released is never filed under {other}', () => {
  it('is dropped, counted, when its pattern finds no room; the locks of {other} stay its own', () => {
    const a = new Aggregator({ instance: 't', templates: [], maxPatterns: 1, budget: { failed: 0, slowest: 0, uniform: 0 }, rawSampleRate: 0, maxPendingRawRows: 10 });
    const at = Date.now();
    expect(a.fold({ key: 'order:lock:1', at, holdMs: 5, ttlMs: 3000, outcome: 'released' })).toBe(FOLD.counted);
    expect(a.fold({ key: 'cache:lock:1', at, holdMs: 60_000, ttlMs: 60_000, outcome: 'expired', censored: true, unconfirmed: true })).toBe(FOLD.noRoom);
    expect(a.lastRefusal).toMatch(/no room for a new pattern \(maxPatterns 1\) for an expiry on a pattern never seen released/);
    // A released lock past the cap still goes to {other}, as before.
    expect(a.fold({ key: 'mail:lock:1', at, holdMs: 5, ttlMs: 3000, outcome: 'released' })).toBe(FOLD.counted);
    const rollups = a.seal(at + 1, true).batches.flatMap((b) => b.rollups);
    expect(rollups.map((r) => [r.pattern, r.values[0], r.values[14]])).toEqual([
      ['order:lock:{id}', 1, 0],
      ['{other}', 1, 0],
    ]);
  });
});

describe('patternOverflow counts every sample filed under {other}', () => {
  it('however its series was found: a key seen before, a key sharing an id prefix, a new key', () => {
    const a = new Aggregator({ instance: 't', templates: [], maxPatterns: 1, budget: { failed: 0, slowest: 0, uniform: 0 }, rawSampleRate: 0, maxPendingRawRows: 10 });
    const at = Date.now();
    const lock = (key: string) => a.fold({ key, at, holdMs: 5, ttlMs: 3000, outcome: 'released' });
    lock('order:lock:1');
    // The same overflowed key again (the key cache), keys sharing its id prefix (the prefix cache), and a new pattern.
    for (const key of ['mail:lock:1', 'mail:lock:1', 'mail:lock:2', 'mail:lock:3', 'cart:lock:9']) expect(lock(key)).toBe(FOLD.counted);
    expect(a.patternOverflow).toBe(5);
    // With the key cache full (200,000 keys of the pattern that holds the slot), overflowed keys still count.
    for (let i = 0; i < 200_000; i++) lock(`order:lock:${i}`);
    for (let i = 0; i < 5000; i++) lock(`mail:lock:${1000 + i}`);
    expect(a.patternOverflow).toBe(5005);
    const rollups = a.seal(at + 1, true).batches.flatMap((b) => b.rollups);
    expect(rollups.find((r) => r.pattern === '{other}')!.values[0]).toBe(5005);
  });
});
