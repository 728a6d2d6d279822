import type { PagedHistogram } from '../store/histogram/paged.js';
import type { WaitHistogram } from './pattern-hour.js';

/** Inserts put off at most; the one past them does them all first. */
const CAPACITY = 256;

/**
 * Histogram inserts put off and done together, in one short loop. A
 * pattern-hour's counts are kilobytes spread over its buckets, and by the time
 * a sample folds, the service's own work has pushed them out of the CPU's
 * caches: an insert inside the fold stalled on that miss — half of the fold's
 * time, profiled — while the CPU had nothing else to do. In a loop that only
 * inserts, the next inserts' loads start while the first ones wait, so the
 * misses overlap. Whatever reads a histogram {@link flush}es first.
 */
export class DeferredInserts {
  private length = 0;
  private readonly into = new Array<PagedHistogram | WaitHistogram | undefined>(CAPACITY).fill(undefined);
  private readonly values = new Float64Array(CAPACITY);

  /** Records `value` into `histogram`, now or at the next {@link flush}. */
  add(histogram: PagedHistogram | WaitHistogram, value: number): void {
    if (this.length === CAPACITY) this.flush();
    this.into[this.length] = histogram;
    this.values[this.length++] = value;
  }

  /** Does every insert put off. */
  flush(): void {
    const { into, values } = this;
    for (let i = 0; i < this.length; i++) into[i]!.record(values[i]!);
    this.length = 0;
  }
}
