import { describe, expect, it } from 'vitest';
import { Aggregator } from '../../src/record/aggregator.js';
import { DeferredInserts } from '../../src/record/deferred-inserts.js';
import { WaitHistogram } from '../../src/record/pattern-hour.js';
import { addEncodedRollup, encodeHistogram, type DecodeTarget } from '../../src/store/histogram/codec.js';
import { PagedHistogram } from '../../src/store/histogram/paged.js';

const START = Date.UTC(2026, 0, 1);
/** More inserts than the buffer holds, and not a multiple of it: some are done when it fills, the rest at the flush. */
const COUNT = 1000 + 77;

/** A decode target that keeps every bucket and the summary, to compare with a histogram filled directly. */
function collector() {
  const buckets = new Map<number, number>();
  const summary: number[] = [];
  const target: DecodeTarget = { addAt: (index, count) => void buckets.set(index, (buckets.get(index) ?? 0) + count), addSummary: (...s) => void summary.push(...s) };
  return { target, buckets, summary };
}

function contents(h: PagedHistogram | WaitHistogram) {
  const buckets = new Map<number, number>();
  h.forEachBucket((index, count) => void buckets.set(index, count));
  return { buckets, summary: h.totalCount === 0 ? [] : [h.totalCount, h.minValue, h.maxValue] };
}

describe('DeferredInserts: hold and wait inserts put off and done together', () => {
  it('leaves the histograms as direct inserts do, once flushed; before the flush the last ones are missing (the control)', () => {
    const direct = [new PagedHistogram(), new PagedHistogram(), new WaitHistogram()] as const;
    const deferred = [new PagedHistogram(), new PagedHistogram(), new WaitHistogram()] as const;
    const inserts = new DeferredInserts();
    for (let i = 0; i < COUNT; i++) {
      const which = (i % 3) as 0 | 1 | 2;
      const us = which === 2 && i % 2 === 0 ? 1 + (i % 50) : Math.round(Math.exp(7 + (i % 97) / 10));
      direct[which].record(us);
      inserts.add(deferred[which], us);
    }
    const before = deferred.reduce((n, h) => n + h.totalCount, 0);
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(COUNT);
    inserts.flush();
    for (let h = 0; h < 3; h++) expect(encodeHistogram(deferred[h]!).equals(encodeHistogram(direct[h]!)), `histogram ${h}`).toBe(true);
    inserts.flush();
    expect(deferred.reduce((n, h) => n + h.totalCount, 0)).toBe(COUNT);
  });

  it("an aggregator's seal holds every hold and wait folded before it, in the same buckets as direct inserts", () => {
    const a = new Aggregator({ instance: 'd', templates: [], maxPatterns: 10, budget: { failed: 0, slowest: 0, uniform: 0 }, rawSampleRate: 0, maxPendingRawRows: 10 });
    for (const round of [0, 1]) {
      const hold = new PagedHistogram();
      const wait = new WaitHistogram();
      for (let i = 0; i < COUNT; i++) {
        const holdMs = Math.exp(1 + ((i * 7 + round) % 101) / 20);
        const waitMs = i % 4 === 0 ? (i % 37) / 10 : 0;
        a.fold({ key: `order:lock:${i}`, at: START + round * 1000 + i, holdMs, waitMs, ttlMs: 10_000, outcome: 'released' });
        hold.record(Math.round(holdMs * 1000));
        wait.record(Math.round(waitMs * 1000));
      }
      const rollups = a.seal(START + 5000).batches.flatMap((b) => b.rollups);
      expect(rollups).toHaveLength(1);
      const got = { hold: collector(), wait: collector() };
      addEncodedRollup(rollups[0]!.values[10], got.hold.target, got.wait.target, new Map());
      for (const [name, h] of [['hold', hold], ['wait', wait]] as const) {
        const { buckets, summary } = contents(h);
        expect(got[name].summary, `${name}, round ${round}`).toEqual(summary);
        expect(got[name].buckets, `${name}, round ${round}`).toEqual(buckets);
      }
    }
  });
});
