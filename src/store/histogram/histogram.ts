import { MAX_TRACKABLE_VALUE, bucketIndexOf, highestValueAt, lowestValueAt, nearestRank } from './buckets.js';
import { decodeHistogramInto, encodeHistogram, type DecodeTarget, type EncodableHistogram } from './codec.js';

/**
 * Mergeable latency histograms of non-negative integer values (µs) with
 * HdrHistogram's bucket layout (see `buckets.ts`) and our sparse byte format
 * (see `codec.ts`). Two variants: {@link Histogram}, sparse, for building
 * rollups a sample at a time; {@link DenseHistogram}, for reading and merging
 * thousands of encoded rollups fast.
 */

/** One non-empty bucket with its value range. */
export interface HistogramBucket {
  lowUs: number;
  highUs: number;
  count: number;
}

/** What both variants share: the exact count, min and max, and percentiles read through `valueAtRank`. */
abstract class HistogramTotals implements EncodableHistogram, DecodeTarget {
  totalCount = 0;
  minValue = Number.POSITIVE_INFINITY;
  maxValue = 0;

  abstract get bucketCount(): number;
  abstract forEachBucket(visit: (index: number, count: number) => void): void;
  /** @internal One decoded bucket. */
  abstract addAt(index: number, count: number): void;

  /**
   * The value whose rank is `rank` (1-based) in sorted order, with the same
   * bucket semantics as {@link valueAtPercentile}. Used for order-statistic
   * confidence bounds.
   */
  abstract valueAtRank(rank: number): number;

  /**
   * The nearest-rank percentile (0 < percentile ≤ 100): the smallest recorded
   * value with at least `percentile` % of values at or below it. Returned as the
   * upper edge of its bucket (never an underestimate), clamped to the exact
   * min and max. 0 when empty.
   */
  valueAtPercentile(percentile: number): number {
    if (this.totalCount === 0) return 0;
    return this.valueAtRank(nearestRank(percentile, this.totalCount));
  }

  /** The non-empty buckets in ascending order, with their value range. */
  buckets(): HistogramBucket[] {
    const result: HistogramBucket[] = [];
    this.forEachBucket((index, count) => result.push({ lowUs: lowestValueAt(index), highUs: highestValueAt(index), count }));
    return result;
  }

  /** Our byte format; see `codec.ts`. */
  encode(): Buffer {
    return encodeHistogram(this);
  }

  /**
   * Adds an encoded histogram, starting at `offset`, into this one. Returns the
   * offset just past it (histograms are self-delimiting, so several can share a
   * blob). Throws on a malformed blob.
   */
  addEncoded(bytes: Uint8Array, offset = 0): number {
    return decodeHistogramInto(bytes, offset, this);
  }

  /** @internal Adds another histogram's totals (a decoded blob's, or a merged histogram's). */
  addSummary(total: number, min: number, max: number): void {
    if (total === 0) return;
    this.totalCount += total;
    if (min < this.minValue) this.minValue = min;
    if (max > this.maxValue) this.maxValue = max;
  }

  /** A bucket's upper edge, clamped to the exact extremes. */
  protected edgeOf(index: number): number {
    return Math.min(this.maxValue, Math.max(this.minValue, highestValueAt(index)));
  }
}

/** A sparse histogram: a map of the buckets in use. */
export class Histogram extends HistogramTotals {
  /** counts index → number of values */
  readonly counts = new Map<number, number>();

  static decode(bytes: Uint8Array): Histogram {
    const histogram = new Histogram();
    histogram.addEncoded(bytes);
    return histogram;
  }

  get bucketCount(): number {
    return this.counts.size;
  }

  record(value: number, count = 1): void {
    const v = value < 0 ? 0 : value > MAX_TRACKABLE_VALUE ? MAX_TRACKABLE_VALUE : Math.round(value);
    this.addAt(bucketIndexOf(v), count);
    this.addSummary(count, v, v);
  }

  add(other: Histogram): void {
    for (const [index, count] of other.counts) this.addAt(index, count);
    this.addSummary(other.totalCount, other.minValue, other.maxValue);
  }

  valueAtRank(rank: number): number {
    if (this.totalCount === 0) return 0;
    if (rank >= this.totalCount) return this.maxValue;
    let seen = 0;
    for (const index of this.sortedIndices()) {
      seen += this.counts.get(index)!;
      if (seen >= rank) return this.edgeOf(index);
    }
    return this.maxValue;
  }

  forEachBucket(visit: (index: number, count: number) => void): void {
    for (const index of this.sortedIndices()) visit(index, this.counts.get(index)!);
  }

  addAt(index: number, count: number): void {
    this.counts.set(index, (this.counts.get(index) ?? 0) + count);
  }

  private sortedIndices(): number[] {
    return [...this.counts.keys()].sort((a, b) => a - b);
  }
}

/**
 * A dense histogram: counts live in an array indexed like HdrHistogram's, and
 * the indices in use are listed, so adding a blob is a tight loop and clearing
 * or querying costs only the buckets in use. Used where thousands of rollups
 * are merged (the analyzer, the writer's row merges).
 */
export class DenseHistogram extends HistogramTotals {
  private counts = new Float64Array(4096);
  /** Indices with a count, in first-use order: what `clear()` and `add()` visit. */
  private readonly used: number[] = [];
  private lowIndex = Number.POSITIVE_INFINITY;
  private highIndex = -1;

  get bucketCount(): number {
    return this.used.length;
  }

  /** Adds a sparse {@link Histogram}. */
  addHistogram(other: Histogram): void {
    for (const [index, count] of other.counts) this.addAt(index, count);
    this.addSummary(other.totalCount, other.minValue, other.maxValue);
  }

  add(other: DenseHistogram): void {
    for (const index of other.used) this.addAt(index, other.counts[index]!);
    this.addSummary(other.totalCount, other.minValue, other.maxValue);
  }

  valueAtRank(rank: number): number {
    if (this.totalCount === 0) return 0;
    if (rank >= this.totalCount) return this.maxValue;
    // A scan of the occupied range: a few thousand slots, cheaper than sorting the indices in use.
    let seen = 0;
    const counts = this.counts;
    for (let index = this.lowIndex; index <= this.highIndex; index++) {
      seen += counts[index]!;
      if (seen >= rank) return this.edgeOf(index);
    }
    return this.maxValue;
  }

  forEachBucket(visit: (index: number, count: number) => void): void {
    for (let index = this.lowIndex; index <= this.highIndex; index++) {
      const count = this.counts[index]!;
      if (count > 0) visit(index, count);
    }
  }

  /** Empties the histogram, keeping its memory. */
  clear(): void {
    for (const index of this.used) this.counts[index] = 0;
    this.used.length = 0;
    this.lowIndex = Number.POSITIVE_INFINITY;
    this.highIndex = -1;
    this.totalCount = 0;
    this.minValue = Number.POSITIVE_INFINITY;
    this.maxValue = 0;
  }

  addAt(index: number, count: number): void {
    if (count <= 0) return;
    if (index >= this.counts.length) {
      const bigger = new Float64Array(Math.max(index + 1, this.counts.length * 2));
      bigger.set(this.counts);
      this.counts = bigger;
    }
    if (this.counts[index] === 0) {
      this.used.push(index);
      if (index < this.lowIndex) this.lowIndex = index;
      if (index > this.highIndex) this.highIndex = index;
    }
    this.counts[index]! += count;
  }
}
