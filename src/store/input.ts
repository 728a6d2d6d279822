import type { RollupValues } from './rollup.js';

/** What the store's writer takes in, from whichever producer: its contracts, defined here so the store imports no producer. */

/**
 * What one (pattern, hour) of one instance adds up to since the producer's
 * previous batch, already in the stored layout: a producer folds its samples
 * into these as they come (see `record/aggregator.ts`), and the writer adds
 * them to the stored rows.
 */
export interface FoldedRollup {
  pattern: string;
  bucketStartMs: number;
  values: RollupValues;
}

/**
 * One raw row: [tsMs, key, pattern, holdUs (-1 when never won), waitUs (-1 when not measured), ttlMs,
 * flags (as stored: outcome 0–3 | threw << 2 | attempts << 3), extensions, lost (0 or 1),
 * censored (0 or 1: the hold's end was not seen, the hold is at least holdUs)].
 */
export type RawRow = [number, string, string, number, number, number, number, number, number, number];

/**
 * Rollup deltas of one instance, with the raw rows its producer chose to keep.
 * With an `epoch` and `seq` (a stream sink's batches) the batch is applied
 * exactly once, however often it is delivered; a recorder's own writer thread
 * sends each batch once and needs neither.
 */
export interface DeltaBatch {
  instance: string;
  epoch?: string | undefined;
  seq?: number | undefined;
  rollups: FoldedRollup[];
  raw: RawRow[];
  /**
   * The producer's own counters when it sealed the batch (a stream sink's): what
   * it recorded and dropped so far, so a collector's file shows each instance's losses.
   */
  counters?: { recorded: number; dropped: number; rawDropped: number } | undefined;
  /** Stretches of time its producer could not see every lock (`watch`'s lost notifications). */
  gaps?: GapRow[] | undefined;
  /** Patterns renamed since the previous batch because a position of theirs was learned (see `keys/miner.ts`). */
  aliases?: AliasRow[] | undefined;
}

/**
 * A provisional pattern and the learned pattern it belongs to, with the distinct values the
 * learned position had seen: what was recorded under `from` is read as `to`'s.
 */
export type AliasRow = [from: string, to: string, distinct: number];

/**
 * A gap in what a producer saw: [source (a watched node), fromMs, toMs, reason, openHolds].
 * The hours it touches hold lower bounds of their counts.
 */
export type GapRow = [source: string, fromMs: number, toMs: number, reason: string, openHolds: number];
