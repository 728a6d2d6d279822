import * as hdr from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { bucketIndexOf, highestValueAt, lowestValueAt } from '../../src/store/histogram/buckets.js';
import { addEncodedCounts, encodeCounts } from '../../src/store/histogram/codec.js';
import { Histogram } from '../../src/store/histogram/histogram.js';

// Integer arithmetic, independent of the code under test: percentiles here have at most 3 decimals.
function exactNearestRank(sorted: number[], percentile: number): number {
  const perHundredThousand = Math.round(percentile * 1000);
  const rank = Math.max(1, Math.ceil((perHundredThousand * sorted.length) / 100_000));
  return sorted[rank - 1]!;
}

function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('Histogram', () => {
  it('maps every value into a bucket no wider than 1/1024 of its lower bound', () => {
    for (const v of [0, 1, 2047, 2048, 2049, 4095, 4096, 123_456, 2 ** 31, 2 ** 32 + 5, 2 ** 40 + 12345]) {
      const index = bucketIndexOf(v);
      const low = lowestValueAt(index);
      const high = highestValueAt(index);
      expect(low).toBeLessThanOrEqual(v);
      expect(high).toBeGreaterThanOrEqual(v);
      if (v >= 2048) expect((high - low + 1) / low).toBeLessThanOrEqual(1 / 1024);
      else expect(high).toBe(low);
    }
  });

  it('uses the same buckets as hdr-histogram-js at 3 significant digits', () => {
    const reference = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 2 ** 40, numberOfSignificantValueDigits: 3 });
    const ours = new Histogram();
    const random = lcg(7);
    for (let i = 0; i < 20_000; i++) {
      const v = Math.floor(Math.exp(random() * 20));
      reference.recordValue(v);
      ours.record(v);
    }
    for (const p of [50, 90, 99, 99.9]) {
      // hdr-histogram-js reports the bucket's highest equivalent value, as we do.
      expect(ours.valueAtPercentile(p)).toBe(Math.min(reference.getValueAtPercentile(p), ours.maxValue));
    }
  });

  it('stays within 0.1 % of the exact nearest-rank percentile', () => {
    const random = lcg(42);
    const values: number[] = [];
    const h = new Histogram();
    for (let i = 0; i < 50_000; i++) {
      // lognormal around 20 ms with a long tail
      const u = Math.max(1e-12, random());
      const v = Math.round(Math.exp(Math.log(20_000) + 0.8 * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random())));
      values.push(v);
      h.record(v);
    }
    values.sort((a, b) => a - b);
    for (const p of [1, 50, 90, 99, 99.9, 100]) {
      const exact = exactNearestRank(values, p);
      const approx = h.valueAtPercentile(p);
      expect(approx).toBeGreaterThanOrEqual(exact);
      expect((approx - exact) / exact).toBeLessThanOrEqual(0.001);
    }
    expect(h.valueAtPercentile(100)).toBe(values.at(-1));
    expect(h.minValue).toBe(values[0]);
  });

  it('nearest rank: p99 of 1..100 is 99, of 1..1000 is 990', () => {
    const a = new Histogram();
    for (let v = 1; v <= 100; v++) a.record(v);
    expect(a.valueAtPercentile(99)).toBe(99);
    expect(a.valueAtPercentile(50)).toBe(50);
    const b = new Histogram();
    for (let v = 1; v <= 1000; v++) b.record(v);
    expect(b.valueAtPercentile(99)).toBe(990);
    expect(b.valueAtRank(1)).toBe(1);
    expect(b.valueAtRank(1000)).toBe(1000);
  });

  it('round-trips through its encoding and merges like adding the values', () => {
    const random = lcg(3);
    const a = new Histogram();
    const b = new Histogram();
    const all = new Histogram();
    for (let i = 0; i < 10_000; i++) {
      const v = Math.floor(random() * 5_000_000);
      (i % 3 === 0 ? a : b).record(v);
      all.record(v);
    }
    const merged = Histogram.decode(a.encode());
    merged.addEncoded(b.encode());
    expect(merged.totalCount).toBe(all.totalCount);
    expect(merged.minValue).toBe(all.minValue);
    expect(merged.maxValue).toBe(all.maxValue);
    expect([...merged.counts.entries()].sort((x, y) => x[0] - y[0])).toEqual(
      [...all.counts.entries()].sort((x, y) => x[0] - y[0]),
    );
  });

  it('keeps counts beyond 2^32 exact', () => {
    const h = new Histogram();
    h.record(1500, 2 ** 40 + 3);
    const back = Histogram.decode(h.encode());
    expect(back.totalCount).toBe(2 ** 40 + 3);
  });

  it('an empty histogram encodes and answers 0', () => {
    const back = Histogram.decode(new Histogram().encode());
    expect(back.totalCount).toBe(0);
    expect(back.valueAtPercentile(99)).toBe(0);
  });

  it('rejects a truncated or inconsistent blob', () => {
    const bytes = new Histogram().encode();
    const h = new Histogram();
    h.record(5);
    const full = h.encode();
    expect(() => Histogram.decode(full.subarray(0, full.length - 1))).toThrow(/truncated/);
    expect(() => Histogram.decode(Buffer.from([9, ...bytes.subarray(1)]))).toThrow(/version/);
  });

  it('encodes exact counts for TTL values', () => {
    const counts = new Map([
      [10_000, 5],
      [3_000, 2],
      [123_456_789, 1],
    ]);
    const into = new Map<number, number>([[3_000, 1]]);
    addEncodedCounts(encodeCounts(counts), into);
    expect(into).toEqual(
      new Map([
        [3_000, 3],
        [10_000, 5],
        [123_456_789, 1],
      ]),
    );
  });
});
