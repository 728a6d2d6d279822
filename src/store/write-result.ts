/** What a `SampleWriter` (`writer.ts`) counts and reports of a write. */

/** A recorder's running totals, stored per instance in `recorder_stats`. */
export interface WriterCounters {
  recorded: number;
  written: number;
  dropped: number;
  rawWritten: number;
  rawDropped: number;
}

export interface WriteResult {
  /** Batches applied (with a sequence: those not seen before). */
  applied: number;
  /** Batches with a sequence already applied, skipped. */
  duplicates: number;
  /** Samples the applied rollups count. */
  samples: number;
  /** Raw rows inserted. */
  raw: number;
  /** Raw rows left out because the file reached `maxDatabaseBytes`. */
  rawOverLimit: number;
  /** Samples whose pattern went to `{other}` because the file holds `maxPatterns` patterns. */
  patternOverflow: number;
  /** Stored rollup rows that could not be decoded and were replaced by the new data alone. */
  replacedUnreadable: number;
  /** Gaps stored. */
  gaps: number;
  /** Renames of learned patterns received. */
  aliases: number;
}

export interface ApplyOptions {
  /** The recorder's counters given what this write adds, stored in the same transaction (the recorder's own writer). */
  counters?: (result: WriteResult) => WriterCounters;
  /** Runs last inside the transaction: throwing there rolls the whole write back. */
  beforeCommit?: () => void;
}
