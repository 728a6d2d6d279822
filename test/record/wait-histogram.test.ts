import { describe, expect, it } from 'vitest';
import { WaitHistogram } from '../../src/record/pattern-hour.js';
import { encodeHistogram } from '../../src/store/histogram/codec.js';
import { PagedHistogram } from '../../src/store/histogram/paged.js';

/** The same waits (µs) into a paged histogram and a wait histogram: what each encodes to. */
function both(waits: readonly number[]): { paged: Buffer; wait: Buffer; histogram: WaitHistogram } {
  const paged = new PagedHistogram();
  const histogram = new WaitHistogram();
  for (const us of waits) {
    paged.record(us);
    histogram.record(us);
  }
  return { paged: encodeHistogram(paged), wait: encodeHistogram(histogram), histogram };
}

describe('WaitHistogram (zero waits counted apart)', () => {
  it('encodes byte for byte as a paged histogram of the same waits: zeros, others, both, none', () => {
    const cases = [[], [0], [0, 0, 0], [5, 1, 70_000], [0, 1, 0, 2, 0, 3_600_000_000, 0], Array.from({ length: 70_000 }, (_, i) => i % 3)];
    for (const waits of cases) {
      const { paged, wait } = both(waits);
      expect(wait.equals(paged), `waits ${waits.slice(0, 8).join(',')}`).toBe(true);
    }
  });

  it('reports the summary of zeros and others together, and starts again empty after reset', () => {
    const { histogram } = both([0, 0, 7, 900]);
    expect([histogram.totalCount, histogram.minValue, histogram.maxValue, histogram.bucketCount]).toEqual([4, 0, 900, 3]);
    histogram.reset();
    expect([histogram.totalCount, histogram.minValue, histogram.maxValue, histogram.bucketCount]).toEqual([0, Number.POSITIVE_INFINITY, 0, 0]);
    histogram.record(0);
    expect([histogram.totalCount, histogram.minValue, histogram.maxValue, histogram.bucketCount]).toEqual([1, 0, 0, 1]);
  });
});
