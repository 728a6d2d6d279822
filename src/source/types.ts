import type { RollupValues } from '../store/rollup.js';

/**
 * What a source hands the analysis, whichever it reads (samples databases, Prometheus): per pattern,
 * hour rows in the store's rollup layout, so that one summary and one decision serve every source.
 */

/** One hour of a pattern: its start (epoch ms), then the rollup values (see `store/rollup.ts`). */
export type SourceHourRow = [bucketStartMs: number, ...values: RollupValues];

/** One bucket of a histogram as its source keeps it: (lowMs, highMs], `highMs` = Infinity for `+Inf`. */
export interface SourceBucket {
  lowMs: number;
  highMs: number;
  count: number;
}

/** How finely a source's buckets resolve a value. */
export type BucketLayout =
  /** Prometheus classic buckets (`le`): the finite upper bounds, ascending (ms). */
  | { kind: 'classic'; boundsMs: number[] }
  /** Prometheus native (exponential) buckets of this schema: bounds 2^(2^-schema) apart. */
  | { kind: 'native'; schema: number };

/** One pattern's data from a source. */
export interface SourcePattern {
  pattern: string;
  /** In time order. The hold histograms hold each bucket's count at the bucket's upper bound (never below the truth). */
  rows: SourceHourRow[];
  /** The hold-time buckets over the whole window, ascending: what the p99's resolution is read from. */
  holdBuckets: SourceBucket[];
  layout: BucketLayout;
}

/**
 * What a source read and left out, counted, so that the analysis says it (once each) instead of a
 * report being fooled by it, as invalid samples are counted rather than stored.
 */
export interface SourceLeftOut {
  /** Points timed outside the window asked for (before it, after it, or no time at all). */
  outsideWindow: number;
  /** Values that are no count, bound or TTL (NaN, infinite, negative, out of range), or not in the shape the API answers. */
  invalid: number;
  /** More patterns than a samples file keeps: how many there were, and how many are reported (the rest are `{other}`). */
  overBudget?: { patterns: number; kept: number } | undefined;
}

/** What a source read: the patterns, and the source as reports may name it (credentials redacted). */
export interface SourceData {
  source: string;
  patterns: SourcePattern[];
  leftOut?: SourceLeftOut | undefined;
}
