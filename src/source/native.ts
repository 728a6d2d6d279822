import type { NativeHistogramJson } from './prometheus-client.js';
import type { SourceBucket } from './types.js';

/**
 * A native (exponential) histogram sample as the API writes it, in ms: its buckets (negative ones
 * dropped: a duration is never below 0), count, sum, and the schema its bounds show: consecutive
 * bounds are 2^(2^-schema) apart. Counts are rounded: `increase()` over native histograms
 * extrapolates, so hours of them are near, not exact.
 */
export function parseNative(h: NativeHistogramJson): { buckets: SourceBucket[]; count: number; sum: number; schema: number | undefined } {
  const buckets: SourceBucket[] = [];
  let schema: number | undefined;
  for (const [, lower, upper, count] of h.buckets ?? []) {
    const low = Number(lower);
    const high = Number(upper);
    const n = Math.round(Number(count));
    if (!(high > 0) || !(n > 0)) continue;
    buckets.push({ lowMs: Math.max(0, low) * 1000, highMs: high * 1000, count: n });
    // The zero bucket ([-z, z]) says nothing of the schema.
    if (schema === undefined && low > 0) schema = Math.round(-Math.log2(Math.log2(high / low)));
  }
  buckets.sort((a, b) => a.highMs - b.highMs);
  return { buckets, count: Math.round(Number(h.count)), sum: Number(h.sum), schema };
}
