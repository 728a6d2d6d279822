/**
 * The bucket layout of HdrHistogram at 3 significant digits (2048 sub-buckets,
 * 1 µs resolution): every value lands in a bucket whose width is at most 1/1024
 * of its lower bound, so any percentile read back is within 0.1 % of the exact
 * nearest-rank value. The indices are HdrHistogram's own; the tests check our
 * percentiles against hdr-histogram-js.
 */

const SUB_BUCKET_HALF_COUNT_MAGNITUDE = 10; // 3 significant digits → 2048 sub-buckets
const SUB_BUCKET_HALF_COUNT = 1 << SUB_BUCKET_HALF_COUNT_MAGNITUDE;
const SUB_BUCKET_MASK = 2 * SUB_BUCKET_HALF_COUNT - 1;
const TWO_POW_32 = 2 ** 32;

/** Largest value a histogram keeps (µs, about 4.4 years); larger values are clamped to it. */
export const MAX_TRACKABLE_VALUE = 2 ** 47 - 1;

function bitLength(value: number): number {
  return value < TWO_POW_32 ? 32 - Math.clz32(value) : 64 - Math.clz32(Math.floor(value / TWO_POW_32));
}

/** A value clamped to what a histogram keeps: an integer from 0 to {@link MAX_TRACKABLE_VALUE}. */
export function clampValue(value: number): number {
  return value < 0 ? 0 : value > MAX_TRACKABLE_VALUE ? MAX_TRACKABLE_VALUE : Math.floor(value);
}

/** The HdrHistogram counts index of a non-negative integer value. */
export function bucketIndexOf(value: number): number {
  // Below 2³¹ (35 minutes in µs: every lock's hold, nearly), integer math on the value as given.
  if (value >= 0 && value <= 0x7fffffff && value === (value | 0)) return smallBucketIndexOf(value);
  const v = clampValue(value);
  const small = v <= SUB_BUCKET_MASK;
  const bucket = small ? 0 : bitLength(v) - (SUB_BUCKET_HALF_COUNT_MAGNITUDE + 1);
  const subBucket = small ? v : v < TWO_POW_32 ? v >>> bucket : Math.floor(v / 2 ** bucket);
  return ((bucket + 1) << SUB_BUCKET_HALF_COUNT_MAGNITUDE) + (subBucket - SUB_BUCKET_HALF_COUNT);
}

/** {@link bucketIndexOf} of an integer from 0 to 2³¹ − 1, in int32 arithmetic. */
export function smallBucketIndexOf(v: number): number {
  if (v <= SUB_BUCKET_MASK) return v;
  // bitLength(v) − (SUB_BUCKET_HALF_COUNT_MAGNITUDE + 1), for v < 2³¹.
  const bucket = 21 - Math.clz32(v);
  return ((bucket + 1) << SUB_BUCKET_HALF_COUNT_MAGNITUDE) + ((v >>> bucket) - SUB_BUCKET_HALF_COUNT);
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
