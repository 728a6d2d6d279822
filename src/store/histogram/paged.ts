import { MAX_TRACKABLE_VALUE, bucketIndexOf } from './buckets.js';
import type { EncodableHistogram } from './codec.js';

const PAGE_BITS = 7;
const PAGE_SIZE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SIZE - 1;

/**
 * A histogram for folding samples one at a time, in the process that records
 * them: counts live in pages of {@link PAGE_SIZE} buckets, allocated the first
 * time a value falls in their range and kept across {@link reset}, so that in
 * the steady state recording a value allocates nothing and costs an index
 * computation and an array increment. Lock durations cluster in a few pages.
 * Same bucket layout and byte format as `Histogram`.
 */
export class PagedHistogram implements EncodableHistogram {
  totalCount = 0;
  minValue = Number.POSITIVE_INFINITY;
  maxValue = 0;
  private pages: (Float64Array | undefined)[] = [];
  /** Non-empty buckets. */
  private used = 0;

  get bucketCount(): number {
    return this.used;
  }

  /** Records one value (µs); negative values count as 0, values past the trackable range as its maximum. */
  record(value: number): void {
    const v = value < 0 ? 0 : value > MAX_TRACKABLE_VALUE ? MAX_TRACKABLE_VALUE : Math.round(value);
    const index = bucketIndexOf(v);
    const p = index >> PAGE_BITS;
    let page = this.pages[p];
    if (page === undefined) {
      while (this.pages.length < p) this.pages.push(undefined);
      page = this.pages[p] = new Float64Array(PAGE_SIZE);
    }
    const slot = index & PAGE_MASK;
    if (page[slot] === 0) this.used++;
    page[slot]! += 1;
    this.totalCount++;
    if (v < this.minValue) this.minValue = v;
    if (v > this.maxValue) this.maxValue = v;
  }

  forEachBucket(visit: (index: number, count: number) => void): void {
    const pages = this.pages;
    for (let p = 0; p < pages.length; p++) {
      const page = pages[p];
      if (page === undefined) continue;
      for (let i = 0; i < PAGE_SIZE; i++) if (page[i]! > 0) visit((p << PAGE_BITS) | i, page[i]!);
    }
  }

  /** Empties the histogram, keeping its pages. */
  reset(): void {
    if (this.totalCount === 0) return;
    for (const page of this.pages) page?.fill(0);
    this.used = 0;
    this.totalCount = 0;
    this.minValue = Number.POSITIVE_INFINITY;
    this.maxValue = 0;
  }

  /** Bytes held in pages: what one pattern-hour's histogram costs in memory. */
  get pageBytes(): number {
    let n = 0;
    for (const page of this.pages) if (page) n += page.byteLength;
    return n;
  }
}
