import { MAX_INDEX } from './buckets.js';

/**
 * The byte format of histograms and rollup blobs in the samples database.
 *
 * Why not hdr-histogram-js's own serialization: its compressed format inflates
 * and allocates a dense counts array (tens of thousands of slots) per decode.
 * Lock durations cluster in a few hundred buckets, so we store only the
 * non-empty buckets as varints; merging thousands of rollups for a report then
 * costs microseconds each.
 *
 * A histogram (all integers unsigned LEB128 varints):
 *   version(=1) · totalCount · minValue · maxValue · bucketCount · (indexDelta · count) × bucketCount
 * Exact counts (the TTLs in use):
 *   bucketCount · (valueDelta · count) × bucketCount
 * A rollup blob: hold-time histogram ‖ wait-time histogram ‖ TTL counts [‖ censored-hold histogram
 * [‖ lease part]]. The censored part is there when some hold's end was not seen (schema 8 on), or
 * (empty) before a lease part: the hold-time histogram holds the holds whose end was seen, the
 * censored one the others, at how long they were seen held. The lease part (schema 9 on), when
 * some holds were renewed: version(=1) ‖ renewal gaps ‖ renewal lateness ‖ least margin per hold ‖
 * renewal round trips ‖ event-loop delay per hold (histograms) ‖ nominal periods (ms → holds) ‖
 * libraries (code → holds) (exact counts).
 */

const CODEC_VERSION = 1;

/** What a histogram hands the encoder: its totals and its non-empty buckets in ascending index order. */
export interface EncodableHistogram {
  readonly totalCount: number;
  readonly minValue: number;
  readonly maxValue: number;
  /** Number of non-empty buckets. */
  readonly bucketCount: number;
  /** Calls `visit` for each non-empty bucket, ascending by index. */
  forEachBucket(visit: (index: number, count: number) => void): void;
}

/** Where a decoder puts what it reads. */
export interface DecodeTarget {
  addAt(index: number, count: number): void;
  addSummary(total: number, min: number, max: number): void;
}

/** Encodes one histogram. */
export function encodeHistogram(histogram: EncodableHistogram): Buffer {
  return SCRATCH.start().histogram(histogram).finish();
}

/** Decodes one histogram at `offset` into `target`; returns the offset past it. Throws on a malformed blob. */
export function decodeHistogramInto(bytes: Uint8Array, offset: number, target: DecodeTarget): number {
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

/**
 * Encodes exact value → count pairs (used for the TTLs in use, which must stay
 * exact): bucketCount · (valueDelta · count) × bucketCount, as varints.
 */
export function encodeCounts(counts: ReadonlyMap<number, number>): Buffer {
  return SCRATCH.start().counts(counts).finish();
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
 * A renewed lock's distributions in a rollup (see the format above): `H` is an
 * encodable histogram when writing, a decode target when reading.
 */
export interface LeaseParts<H> {
  /** Time between renewals (the first: from the acquire), per renewal. */
  readonly gap: H;
  /** gap − the nominal period, per renewal whose holder's period is known (0 when early). */
  readonly lateness: H;
  /** The least time left at a renewal, per hold (0: a renewal came too late, or the lease ran out). */
  readonly margin: H;
  /** Renewal round trips, per renewal that reported one. */
  readonly roundTrip: H;
  /** The longest event-loop delay while held, per hold that measured it. */
  readonly loopDelay: H;
  /** Nominal renewal period (ms) → holds. */
  readonly periods: Map<number, number>;
  /** Library code (index in `LEASE_LIBRARIES`) → holds: every lease hold counted once. */
  readonly libraries: Map<number, number>;
}

const LEASE_PART_VERSION = 1;

/**
 * A rollup's distributions in one blob, so a reader fetches one value per row:
 * hold-time histogram ‖ wait-time histogram ‖ TTL counts, the censored-hold
 * histogram when it holds any (or a lease part follows), and the lease part when
 * some holds were leases.
 */
export function encodeRollup(
  hold: EncodableHistogram,
  wait: EncodableHistogram,
  ttls: ReadonlyMap<number, number>,
  censored?: EncodableHistogram | undefined,
  lease?: LeaseParts<EncodableHistogram> | undefined,
): Buffer {
  const out = SCRATCH.start().histogram(hold).histogram(wait).counts(ttls);
  const withLease = lease !== undefined && lease.libraries.size > 0;
  if (censored !== undefined && (censored.totalCount > 0 || withLease)) out.histogram(censored);
  else if (withLease) out.histogram(EMPTY);
  if (withLease) {
    out.write(LEASE_PART_VERSION);
    for (const h of [lease.gap, lease.lateness, lease.margin, lease.roundTrip, lease.loopDelay]) out.histogram(h);
    out.counts(lease.periods).counts(lease.libraries);
  }
  return out.finish();
}

/**
 * Adds a blob made by {@link encodeRollup} into the given accumulators (its censored holds
 * into `censored`, its lease part into `lease`). Throws on a malformed blob.
 */
export function addEncodedRollup(
  bytes: Uint8Array,
  hold: DecodeTarget,
  wait: DecodeTarget,
  ttls: Map<number, number>,
  censored: DecodeTarget = IGNORE,
  lease: LeaseParts<DecodeTarget> | undefined = undefined,
): void {
  let end = addEncodedCounts(bytes, ttls, decodeHistogramInto(bytes, decodeHistogramInto(bytes, 0, hold), wait));
  if (end < bytes.length) end = decodeHistogramInto(bytes, end, censored);
  if (end < bytes.length) {
    if (bytes[end] !== LEASE_PART_VERSION) throw new RangeError(`Unknown lease part version ${bytes[end]}`);
    const into = lease ?? ignoredLease();
    end++;
    for (const h of [into.gap, into.lateness, into.margin, into.roundTrip, into.loopDelay]) end = decodeHistogramInto(bytes, end, h);
    end = addEncodedCounts(bytes, into.libraries, addEncodedCounts(bytes, into.periods, end));
  }
  if (end !== bytes.length) throw new RangeError('Corrupt rollup: trailing bytes');
}

const IGNORE: DecodeTarget = { addAt: () => undefined, addSummary: () => undefined };
const EMPTY: EncodableHistogram = { totalCount: 0, minValue: 0, maxValue: 0, bucketCount: 0, forEachBucket: () => undefined };
function ignoredLease(): LeaseParts<DecodeTarget> {
  return { gap: IGNORE, lateness: IGNORE, margin: IGNORE, roundTrip: IGNORE, loopDelay: IGNORE, periods: new Map(), libraries: new Map() };
}

/** Whether a well-formed rollup blob has a lease part (schema 9 on): readers older than it cannot read the blob. */
export function hasLeasePart(bytes: Uint8Array): boolean {
  const lease = ignoredLease();
  addEncodedRollup(bytes, IGNORE, IGNORE, new Map(), IGNORE, lease);
  return lease.libraries.size > 0;
}

/** Whether a blob is a well-formed rollup blob: one unreadable row must be skipped, not fail a whole report. */
export function isReadableRollup(bytes: Uint8Array): boolean {
  try {
    addEncodedRollup(bytes, IGNORE, IGNORE, new Map(), IGNORE);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes varints into one buffer kept from encode to encode: a rollup's parts go
 * into it one after the other and leave it in a single copy of the exact size.
 * Seven small buffers per rollup (each part's, each part's copy, their
 * concatenation) cost a seal more than the encoding: fresh memory is what it paid for.
 */
class VarintWriter {
  private buffer = Buffer.allocUnsafeSlow(4096);
  private length = 0;

  start(): this {
    this.length = 0;
    return this;
  }

  write(value: number): void {
    if (this.length + 8 > this.buffer.length) {
      const bigger = Buffer.allocUnsafeSlow(this.buffer.length * 2);
      this.buffer.copy(bigger, 0, 0, this.length);
      this.buffer = bigger;
    }
    let v = value;
    if (v <= 0x7fffffff) {
      for (; v >= 0x80; v >>>= 7) this.buffer[this.length++] = (v & 0x7f) | 0x80;
    } else {
      // Arithmetic rather than bitwise shifts: counts may exceed 2^32 in a fleet-wide merge.
      for (; v >= 0x80; v = Math.floor(v / 0x80)) this.buffer[this.length++] = (v % 0x80) | 0x80;
    }
    this.buffer[this.length++] = v;
  }

  histogram(histogram: EncodableHistogram): this {
    this.write(CODEC_VERSION);
    this.write(histogram.totalCount);
    this.write(histogram.totalCount === 0 ? 0 : histogram.minValue);
    this.write(histogram.maxValue);
    this.write(histogram.bucketCount);
    let previous = 0;
    histogram.forEachBucket((index, count) => {
      this.write(index - previous);
      this.write(count);
      previous = index;
    });
    return this;
  }

  counts(counts: ReadonlyMap<number, number>): this {
    const values = [...counts.keys()].sort((a, b) => a - b);
    this.write(values.length);
    let previous = 0;
    for (const value of values) {
      this.write(value - previous);
      this.write(counts.get(value)!);
      previous = value;
    }
    return this;
  }

  /** The bytes written since {@link start}, in a buffer of their own. */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.length);
    this.buffer.copy(out, 0, 0, this.length);
    return out;
  }
}

/** Encoding is synchronous and never nested: one writer serves every encode of a thread. */
const SCRATCH = new VarintWriter();

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
