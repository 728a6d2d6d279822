import type { RollupDelta } from './rollup.js';

/** What the store's writer takes in, from whichever producer: its contracts, defined here so the store imports no producer. */

/**
 * Samples laid out in typed arrays: what the writer takes in. A recorder builds
 * it on its own thread and transfers it to the writer's (no copy, no
 * per-object structured clone).
 */
export interface EncodedBatch {
  count: number;
  /** Per sample, {@link NUMBERS_PER_SAMPLE} numbers: at (epoch ms), holdUs (-1 when never won), waitUs, ttlMs, attempts, extensions. */
  numbers: Float64Array;
  /** Per sample: outcome code | threw << 3. */
  flags: Uint8Array;
  /** All keys, concatenated; split with `keyLengths`. */
  keys: string;
  keyLengths: Uint32Array;
  /** Explicit patterns, sparse: [sample index, pattern]. */
  patterns: [number, string][];
  /** Explicit instances, sparse: [sample index, instance]. */
  instances: [number, string][];
}

export const NUMBERS_PER_SAMPLE = 6;

/**
 * Rollup deltas already folded by a producer (a stream sink), with sampled raw
 * rows. `(instance, epoch, seq)` identifies the batch, so it is applied exactly
 * once however often it is delivered.
 */
export interface DeltaBatch {
  instance: string;
  epoch: string;
  seq: number;
  rollups: RollupDelta<string, string>[];
  /** [tsMs, key, pattern, holdUs (-1 when never won), waitUs, ttlMs, flags (as stored), extensions, lost (0 or 1)] */
  raw: [number, string, string, number, number, number, number, number, number][];
}
