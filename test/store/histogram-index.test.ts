import { describe, expect, it } from 'vitest';
import { MAX_TRACKABLE_VALUE, bucketIndexOf, clampValue, highestValueAt, lowestValueAt, smallBucketIndexOf } from '../../src/store/histogram/buckets.js';
import { Histogram } from '../../src/store/histogram/histogram.js';
import { PagedHistogram } from '../../src/store/histogram/paged.js';

/** HdrHistogram's index written out in floating point, as the layout defines it: the reference for the int32 path. */
function referenceIndex(value: number): number {
  const v = clampValue(value);
  if (v < 2048) return v;
  const bucket = Math.floor(Math.log2(v)) - 10;
  return (bucket + 1) * 1024 + (Math.floor(v / 2 ** bucket) - 1024);
}

function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('bucket indices in int32 arithmetic', () => {
  const edges: number[] = [0, 1, 2046, 2047, 2048, 2049, 4095, 4096, 2 ** 31 - 1];
  for (let b = 11; b <= 31; b++) for (const d of [-1, 0, 1]) if (2 ** b + d < 2 ** 31) edges.push(2 ** b + d);

  it('give the same index as the layout, at every power of two and between', () => {
    const random = lcg(3);
    const values = [...edges, ...Array.from({ length: 100_000 }, () => Math.floor(2 ** (random() * 31)))];
    for (const v of values) {
      expect(smallBucketIndexOf(v), String(v)).toBe(referenceIndex(v));
      expect(bucketIndexOf(v), String(v)).toBe(referenceIndex(v));
      expect(lowestValueAt(smallBucketIndexOf(v))).toBeLessThanOrEqual(v);
      expect(highestValueAt(smallBucketIndexOf(v))).toBeGreaterThanOrEqual(v);
    }
  });

  it('leave values outside the int32 path to the general one: fractions, negatives, 2³¹ and up, past the range', () => {
    for (const v of [2047.5, 0.4, -3, 2 ** 31, 2 ** 32 + 5, 2 ** 40 + 12_345, MAX_TRACKABLE_VALUE, MAX_TRACKABLE_VALUE * 2]) {
      expect(bucketIndexOf(v), String(v)).toBe(referenceIndex(v));
    }
  });

  it('a PagedHistogram counts like a Histogram (same buckets, count, min, max, percentiles), whatever path each value took', () => {
    const random = lcg(11);
    const paged = new PagedHistogram();
    const sparse = new Histogram();
    const values = [...edges, 2 ** 31, 2 ** 40, 1234.6, -1, MAX_TRACKABLE_VALUE + 10, ...Array.from({ length: 50_000 }, () => Math.round(Math.exp(random() * 25)))];
    for (const v of values) {
      paged.record(v);
      sparse.record(v);
    }
    const buckets: [number, number][] = [];
    paged.forEachBucket((index, count) => buckets.push([index, count]));
    expect(buckets).toEqual([...sparse.counts.entries()].sort((a, b) => a[0] - b[0]));
    expect([paged.totalCount, paged.minValue, paged.maxValue, paged.bucketCount]).toEqual([sparse.totalCount, sparse.minValue, sparse.maxValue, sparse.bucketCount]);
  });

  it('a slot that fills carries its count on, so no count is lost (shown with slots of at most 3)', () => {
    const paged = new PagedHistogram(3);
    for (let i = 0; i < 10; i++) paged.record(5);
    paged.record(6);
    const buckets: [number, number][] = [];
    paged.forEachBucket((index, count) => buckets.push([index, count]));
    expect(buckets).toEqual([
      [5, 10],
      [6, 1],
    ]);
    expect([paged.totalCount, paged.bucketCount]).toEqual([11, 2]);
    paged.reset();
    paged.record(5);
    const after: [number, number][] = [];
    paged.forEachBucket((index, count) => after.push([index, count]));
    expect(after).toEqual([[5, 1]]);
  });

  it('at its default, a slot carries past 65,535: 200,000 values in one bucket are counted 200,000', () => {
    const paged = new PagedHistogram();
    for (let i = 0; i < 200_000; i++) paged.record(i % 2 === 0 ? 7 : 8);
    const buckets: [number, number][] = [];
    paged.forEachBucket((index, count) => buckets.push([index, count]));
    expect(buckets).toEqual([
      [7, 100_000],
      [8, 100_000],
    ]);
  });
});
