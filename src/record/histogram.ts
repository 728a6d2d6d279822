/**
 * A mergeable latency histogram with the bucket layout of HdrHistogram at
 * 3 significant digits (2048 sub-buckets, 1 µs resolution): every recorded
 * value lands in a bucket whose width is at most 1/1024 of its lower bound, so
 * any percentile read back is within 0.1 % of the exact nearest-rank value.
 *
 * Why not hdr-histogram-js's own serialization: its compressed format inflates
 * and allocates a dense counts array (tens of thousands of slots) per decode.
 * Lock durations cluster in a few hundred buckets, so we store only the
 * non-empty buckets as varints; merging thousands of rollups for a report then
 * costs microseconds each (see the histogram benchmark). The bucket indices are
 * the same as HdrHistogram's, and the tests check our percentiles against
 * hdr-histogram-js.
 *
 * Encoding (all integers unsigned LEB128 varints):
 *   version(=1) · totalCount · minValue · maxValue · bucketCount · (indexDelta · count) × bucketCount
 */

const SUB_BUCKET_HALF_COUNT_MAGNITUDE = 10; // 3 significant digits → 2048 sub-buckets
const SUB_BUCKET_HALF_COUNT = 1 << SUB_BUCKET_HALF_COUNT_MAGNITUDE;
const SUB_BUCKET_MASK = 2 * SUB_BUCKET_HALF_COUNT - 1;
const TWO_POW_32 = 2 ** 32;

/** Largest value a histogram keeps (µs, about 4.4 years); larger values are clamped to it. */
export const MAX_TRACKABLE_VALUE = 2 ** 47 - 1;

const CODEC_VERSION = 1;

function bitLength(value: number): number {
  return value < TWO_POW_32 ? 32 - Math.clz32(value) : 64 - Math.clz32(Math.floor(value / TWO_POW_32));
}

/** The HdrHistogram counts index of a non-negative integer value. */
export function bucketIndexOf(value: number): number {
  const v = value < 0 ? 0 : value > MAX_TRACKABLE_VALUE ? MAX_TRACKABLE_VALUE : Math.floor(value);
  const small = v <= SUB_BUCKET_MASK;
  const bucket = small ? 0 : bitLength(v) - (SUB_BUCKET_HALF_COUNT_MAGNITUDE + 1);
  const subBucket = small ? v : v < TWO_POW_32 ? v >>> bucket : Math.floor(v / 2 ** bucket);
  return ((bucket + 1) << SUB_BUCKET_HALF_COUNT_MAGNITUDE) + (subBucket - SUB_BUCKET_HALF_COUNT);
}

/** The largest counts index a valid histogram can use. */
export const MAX_INDEX = bucketIndexOf(MAX_TRACKABLE_VALUE);

/** The smallest value that maps to a counts index. */
export function lowestValueAt(index: number): number {
  let bucket = (index >> SUB_BUCKET_HALF_COUNT_MAGNITUDE) - 1;
  let subBucket = (index & (SUB_BUCKET_HALF_COUNT - 1)) + SUB_BUCKET_HALF_COUNT;
  if (bucket < 0) {
    subBucket -= SUB_BUCKET_HALF_COUNT;
    bucket = 0;
  }
  return subBucket * 2 ** bucket;
}

/** The largest value that maps to a counts index. */
export function highestValueAt(index: number): number {
  const bucket = Math.max(0, (index >> SUB_BUCKET_HALF_COUNT_MAGNITUDE) - 1);
  return lowestValueAt(index) + 2 ** bucket - 1;
}

/**
 * The nearest rank of a percentile among `count` values: ceil(percentile / 100 × count),
 * at least 1. The product is nudged down by its own rounding error so that,
 * say, 99.9 % of 50 000 is rank 49 950 and not 49 951.
 */
export function nearestRank(percentile: number, count: number): number {
  const exact = (percentile / 100) * count;
  return Math.max(1, Math.ceil(exact - Math.max(1e-9, exact * 1e-12)));
}

/**
 * What both histogram kinds share: the exact count, min and max, and
 * percentiles read through `valueAtRank`.
 */
abstract class HistogramTotals {
  totalCount = 0;
  minValue = Number.POSITIVE_INFINITY;
  maxValue = 0;

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

  /**
   * The value whose rank is `rank` (1-based) in sorted order, with the same
   * bucket semantics as {@link valueAtPercentile}. Used for order-statistic
   * confidence bounds.
   */
  abstract valueAtRank(rank: number): number;

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

/** A sparse histogram of non-negative integer values (µs). */
export class Histogram extends HistogramTotals {
  /** counts index → number of values */
  readonly counts = new Map<number, number>();

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
    const indices = [...this.counts.keys()].sort((a, b) => a - b);
    let seen = 0;
    for (const index of indices) {
      seen += this.counts.get(index)!;
      if (seen >= rank) return this.edgeOf(index);
    }
    return this.maxValue;
  }

  /** The non-empty buckets in ascending order, with their value range. */
  buckets(): { lowUs: number; highUs: number; count: number }[] {
    return [...this.counts.keys()]
      .sort((a, b) => a - b)
      .map((index) => ({ lowUs: lowestValueAt(index), highUs: highestValueAt(index), count: this.counts.get(index)! }));
  }

  encode(): Buffer {
    const indices = [...this.counts.keys()].sort((a, b) => a - b);
    const writer = new VarintWriter(16 + indices.length * 4);
    writer.write(CODEC_VERSION);
    writer.write(this.totalCount);
    writer.write(this.totalCount === 0 ? 0 : this.minValue);
    writer.write(this.maxValue);
    writer.write(indices.length);
    let previous = 0;
    for (const index of indices) {
      writer.write(index - previous);
      writer.write(this.counts.get(index)!);
      previous = index;
    }
    return writer.finish();
  }

  static decode(bytes: Uint8Array): Histogram {
    const histogram = new Histogram();
    histogram.addEncoded(bytes);
    return histogram;
  }

  /**
   * Adds an encoded histogram, starting at `offset`, into this one. Returns the
   * offset just past it (histograms are self-delimiting, so several can share a
   * blob). Throws on a malformed blob.
   */
  addEncoded(bytes: Uint8Array, offset = 0): number {
    return readEncoded(bytes, offset, this);
  }

  /** @internal One decoded bucket. */
  addAt(index: number, count: number): void {
    this.counts.set(index, (this.counts.get(index) ?? 0) + count);
  }

}

/** Where {@link readEncoded} puts what it decodes. */
interface DecodeTarget {
  addAt(index: number, count: number): void;
  addSummary(total: number, min: number, max: number): void;
}

/** Decodes one histogram at `offset` into `target`; returns the offset past it. Throws on a malformed blob. */
function readEncoded(bytes: Uint8Array, offset: number, target: DecodeTarget): number {
  const reader = new VarintReader(bytes, offset);
  const version = reader.read();
  if (version !== CODEC_VERSION) throw new RangeError(`Unknown histogram encoding version ${version}`);
  const total = reader.read();
  const min = reader.read();
  const max = reader.read();
  const buckets = reader.read();
  let index = 0;
  let sum = 0;
  for (let i = 0; i < buckets; i++) {
    index += reader.read();
    if (index > MAX_INDEX) throw new RangeError('Corrupt histogram: bucket index out of range');
    const count = reader.read();
    sum += count;
    target.addAt(index, count);
  }
  if (sum !== total) throw new RangeError('Corrupt histogram: bucket counts do not add up');
  target.addSummary(total, min, max);
  return reader.offset;
}

class VarintWriter {
  private buffer: Buffer;
  private length = 0;

  constructor(capacity: number) {
    this.buffer = Buffer.allocUnsafe(capacity);
  }

  write(value: number): void {
    if (this.length + 8 > this.buffer.length) {
      const bigger = Buffer.allocUnsafe(this.buffer.length * 2 + 16);
      this.buffer.copy(bigger, 0, 0, this.length);
      this.buffer = bigger;
    }
    let v = value;
    // Arithmetic rather than bitwise shifts: counts may exceed 2^32 in a fleet-wide merge.
    while (v >= 0x80) {
      this.buffer[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buffer[this.length++] = v;
  }

  finish(): Buffer {
    return Buffer.from(this.buffer.subarray(0, this.length));
  }
}

class VarintReader {
  constructor(
    private readonly bytes: Uint8Array,
    public offset = 0,
  ) {}

  read(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      if (this.offset >= this.bytes.length) throw new RangeError('Corrupt histogram: truncated');
      const byte = this.bytes[this.offset++]!;
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) return result;
      scale *= 0x80;
      if (scale > 2 ** 56) throw new RangeError('Corrupt histogram: varint too long');
    }
  }
}

/**
 * Encodes exact value → count pairs (used for the TTLs in use, which must stay
 * exact): bucketCount · (valueDelta · count) × bucketCount, as varints.
 */
export function encodeCounts(counts: ReadonlyMap<number, number>): Buffer {
  const values = [...counts.keys()].sort((a, b) => a - b);
  const writer = new VarintWriter(4 + values.length * 6);
  writer.write(values.length);
  let previous = 0;
  for (const value of values) {
    writer.write(value - previous);
    writer.write(counts.get(value)!);
    previous = value;
  }
  return writer.finish();
}

/** Adds counts encoded by {@link encodeCounts}, at `offset`, into `into`; returns the offset past them. Throws on a malformed blob. */
export function addEncodedCounts(bytes: Uint8Array, into: Map<number, number>, offset = 0): number {
  const reader = new VarintReader(bytes, offset);
  const n = reader.read();
  let value = 0;
  for (let i = 0; i < n; i++) {
    value += reader.read();
    into.set(value, (into.get(value) ?? 0) + reader.read());
  }
  return reader.offset;
}

/**
 * A histogram for reading many encoded histograms fast: counts live in a
 * dense array indexed like HdrHistogram's, and the indices in use are listed,
 * so adding a blob is a tight loop and clearing or querying costs only the
 * buckets in use. Used by the analyzer, which merges thousands of rollups.
 */
export class DenseHistogram extends HistogramTotals {
  private counts = new Float64Array(4096);
  /** Indices with a count, in first-use order: what `clear()` and `add()` visit. */
  private readonly used: number[] = [];
  private lowIndex = Number.POSITIVE_INFINITY;
  private highIndex = -1;

  /** Adds an encoded histogram (see {@link Histogram.encode}) at `offset`; returns the offset past it. Throws on a malformed blob. */
  addEncoded(bytes: Uint8Array, offset = 0): number {
    return readEncoded(bytes, offset, this);
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

  /** The non-empty buckets in ascending order, with their value range. */
  buckets(): { lowUs: number; highUs: number; count: number }[] {
    const result = [];
    for (let index = this.lowIndex; index <= this.highIndex; index++) {
      const count = this.counts[index]!;
      if (count > 0) result.push({ lowUs: lowestValueAt(index), highUs: highestValueAt(index), count });
    }
    return result;
  }

  /** The same encoding as {@link Histogram.encode}, read off the occupied range. */
  encode(): Buffer {
    const writer = new VarintWriter(16 + this.used.length * 4);
    writer.write(CODEC_VERSION);
    writer.write(this.totalCount);
    writer.write(this.totalCount === 0 ? 0 : this.minValue);
    writer.write(this.maxValue);
    writer.write(this.used.length);
    let previous = 0;
    for (let index = this.lowIndex; index <= this.highIndex; index++) {
      const count = this.counts[index]!;
      if (count === 0) continue;
      writer.write(index - previous);
      writer.write(count);
      previous = index;
    }
    return writer.finish();
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

  /** @internal One decoded bucket. */
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

/**
 * A rollup's three distributions in one blob, so a reader fetches one value per
 * row: hold-time histogram ‖ wait-time histogram ‖ TTL counts.
 */
export function encodeRollup(hold: { encode(): Buffer }, wait: { encode(): Buffer }, ttls: ReadonlyMap<number, number>): Buffer {
  return Buffer.concat([hold.encode(), wait.encode(), encodeCounts(ttls)]);
}

/** Adds a blob made by {@link encodeRollup} into the given accumulators. Throws on a malformed blob. */
export function addEncodedRollup(
  bytes: Uint8Array,
  hold: Histogram | DenseHistogram,
  wait: Histogram | DenseHistogram,
  ttls: Map<number, number>,
): void {
  const end = addEncodedCounts(bytes, ttls, wait.addEncoded(bytes, hold.addEncoded(bytes)));
  if (end !== bytes.length) throw new RangeError('Corrupt rollup: trailing bytes');
}
