import { MAX_TRACKABLE_VALUE, bucketIndexOf, smallBucketIndexOf } from './buckets.js';
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
 *
 * Counts are 16-bit (a quarter of the memory of doubles, so more of a
 * pattern-hour's buckets stay in the CPU cache while samples fold: a miss
 * there was most of what a record cost); a bucket's count that would pass
 * 65,535 carries into a map, so none is ever lost.
 */
export class PagedHistogram implements EncodableHistogram {
  totalCount = 0;
  minValue = Number.POSITIVE_INFINITY;
  maxValue = 0;
  /** Page number → where its counts start in {@link pool}, plus one (0: no page yet). */
  private table = new Int32Array(0);
  /**
   * Every page's counts, side by side in one array: a count is found with two
   * typed-array reads, where an array of pages cost a read of the page object
   * and of its buffer as well, each a cache miss of its own.
   */
  private pool = new Uint16Array(0);
  private poolUsed = 0;
  /** Non-empty buckets. */
  private used = 0;
  /** Counts carried out of full slots (index → count), made on the first. */
  private carried: Map<number, number> | undefined;

  /** @param slotMax A slot's largest count before it carries (a test's small value shows the carry). */
  constructor(private readonly slotMax = 0xffff) {}

  get bucketCount(): number {
    return this.used;
  }

  /** Records one value (µs); negative values count as 0, values past the trackable range as its maximum. */
  record(value: number): void {
    // A whole number of µs below 2³¹ (what `toMicros` gives for any lock) takes the int32 path.
    const small = value >= 0 && value <= 0x7fffffff && value === (value | 0);
    const v = small ? value : value < 0 ? 0 : value > MAX_TRACKABLE_VALUE ? MAX_TRACKABLE_VALUE : Math.round(value);
    const index = small ? smallBucketIndexOf(v) : bucketIndexOf(v);
    const p = index >> PAGE_BITS;
    let at = p < this.table.length ? this.table[p]! : 0;
    if (at === 0) at = this.addPage(p);
    const i = at - 1 + (index & PAGE_MASK);
    let count = this.pool[i]!;
    if (count === 0) this.used++;
    else if (count === this.slotMax) count = this.carry(index, count);
    this.pool[i] = count + 1;
    this.totalCount++;
    if (v < this.minValue) this.minValue = v;
    if (v > this.maxValue) this.maxValue = v;
  }

  forEachBucket(visit: (index: number, count: number) => void): void {
    const { table, pool } = this;
    for (let p = 0; p < table.length; p++) {
      const at = table[p]!;
      if (at === 0) continue;
      for (let slot = 0; slot < PAGE_SIZE; slot++) {
        const count = pool[at - 1 + slot]!;
        if (count === 0) continue;
        const index = (p << PAGE_BITS) | slot;
        visit(index, count + (this.carried?.get(index) ?? 0));
      }
    }
  }

  /** Empties the histogram, keeping its pages. */
  reset(): void {
    if (this.totalCount === 0) return;
    this.pool.fill(0, 0, this.poolUsed);
    this.carried = undefined;
    this.used = 0;
    this.totalCount = 0;
    this.minValue = Number.POSITIVE_INFINITY;
    this.maxValue = 0;
  }

  /** Bytes held for counts (pages, with room to grow, and the page table): what one pattern-hour's histogram costs in memory. */
  get pageBytes(): number {
    return this.pool.byteLength + this.table.byteLength;
  }

  /** Makes page `p` (the arrays grow by doubling); returns its {@link table} entry. */
  private addPage(p: number): number {
    if (p >= this.table.length) {
      const table = new Int32Array(Math.max(p + 1, this.table.length * 2));
      table.set(this.table);
      this.table = table;
    }
    if (this.poolUsed + PAGE_SIZE > this.pool.length) {
      const pool = new Uint16Array(Math.max(this.poolUsed + PAGE_SIZE, this.pool.length * 2));
      pool.set(this.pool);
      this.pool = pool;
    }
    this.table[p] = this.poolUsed + 1;
    this.poolUsed += PAGE_SIZE;
    return this.poolUsed - PAGE_SIZE + 1;
  }

  /** Moves a full slot's count into {@link carried}; the slot starts again from 0. */
  private carry(index: number, count: number): number {
    const carried = (this.carried ??= new Map());
    carried.set(index, (carried.get(index) ?? 0) + count);
    return 0;
  }
}
