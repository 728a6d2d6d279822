import { MAX_COUNT, MAX_DURATION_S, floatOf } from './prometheus-answer.js';
import type { NativeHistogramJson } from './prometheus-client.js';
import type { SourceBucket } from './types.js';

/** The schemas Prometheus's exponential native histograms have: bounds 2^(2^-schema) apart. */
const MIN_SCHEMA = -4;
const MAX_SCHEMA = 8;

/**
 * A native (exponential) histogram sample as the API writes it, in ms: its buckets (negative ones
 * dropped: a duration is never below 0), count, sum, and the schema its bounds show: consecutive
 * bounds are 2^(2^-schema) apart. Counts are rounded: `increase()` over native histograms
 * extrapolates, so hours of them are near, not exact. The histogram's count and sum are checked by
 * `checkSeries`; a bucket that is not of the API's shape, or whose bounds or count are out of range,
 * is left out and counted in `invalid`.
 */
export function parseNative(h: NativeHistogramJson): { buckets: SourceBucket[]; count: number; sum: number; schema: number | undefined; invalid: number } {
  const buckets: SourceBucket[] = [];
  let schema: number | undefined;
  let invalid = 0;
  const listed: unknown = h.buckets ?? [];
  for (const bucket of Array.isArray(listed) ? (listed as unknown[]) : [undefined]) {
    const [, lower, upper, count] = Array.isArray(bucket) && bucket.length === 4 ? (bucket as unknown[]) : [];
    // A negative bound is a bucket of negative values: of the API's shape, and no duration.
    const low = typeof lower === 'string' && lower.startsWith('-') ? -(floatOf(lower.slice(1), MAX_DURATION_S) ?? Number.NaN) : floatOf(lower, MAX_DURATION_S);
    const high = typeof upper === 'string' && upper.startsWith('-') ? -(floatOf(upper.slice(1), MAX_DURATION_S) ?? Number.NaN) : floatOf(upper, MAX_DURATION_S);
    const n = floatOf(count, MAX_COUNT);
    if (low === undefined || high === undefined || Number.isNaN(low) || Number.isNaN(high) || n === undefined || low > high) {
      invalid++;
      continue;
    }
    const rounded = Math.round(n);
    if (!(high > 0) || !(rounded > 0)) continue;
    buckets.push({ lowMs: Math.max(0, low) * 1000, highMs: high * 1000, count: rounded });
    // The zero bucket ([-z, z]) says nothing of the schema; nor do bounds no schema makes.
    if (schema === undefined && low > 0 && high > low) {
      const s = Math.round(-Math.log2(Math.log2(high / low)));
      if (s >= MIN_SCHEMA && s <= MAX_SCHEMA) schema = s;
    }
  }
  buckets.sort((a, b) => a.highMs - b.highMs);
  return { buckets, count: Math.round(Number(h.count)), sum: Number(h.sum), schema, invalid };
}
