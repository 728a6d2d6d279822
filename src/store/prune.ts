import type { Db } from './db.js';
import { BUCKET_MS } from './format.js';
import { fileBytes } from './stats.js';

/** What {@link pruneOlderThan} removed. */
export interface PruneResult {
  /** Data before this time (epoch ms, the start of an hour) was removed. */
  cutoffMs: number;
  rawRows: number;
  rollupRows: number;
  fleetRollupRows: number;
  streamBatches: number;
  /** Gaps in what a producer saw that ended before the cutoff. */
  gaps: number;
  /** Pages given back to the file system (`auto_vacuum` files, or with `vacuum`). */
  freedBytes: number;
}

/**
 * Removes everything recorded before the hour that contains `olderThanMs`:
 * raw rows, per-instance and fleet rollups (whole hours, so every remaining
 * hour stays complete), the exactly-once records of stream batches applied
 * before it, and the gaps that ended before it. Each table goes in its own short transaction, so recorders writing
 * to the file meanwhile wait at most one delete. Freed pages are reused by
 * later writes; a file created with `auto_vacuum` (every file since schema 6)
 * gives them back to the disk, and `vacuum` rewrites any file to its size.
 */
export function pruneOlderThan(db: Db, path: string, olderThanMs: number, options: { vacuum?: boolean } = {}): PruneResult {
  const cutoffMs = olderThanMs - (((olderThanMs % BUCKET_MS) + BUCKET_MS) % BUCKET_MS);
  const before = fileBytes(path);
  const remove = (sql: string) => db.transaction(() => db.prepare(sql).run(cutoffMs).changes).immediate();
  const result: PruneResult = {
    cutoffMs,
    rawRows: remove('DELETE FROM raw_samples WHERE ts_ms < ?'),
    rollupRows: remove('DELETE FROM rollups WHERE bucket_start_ms < ?'),
    fleetRollupRows: remove('DELETE FROM fleet_rollups WHERE bucket_start_ms < ?'),
    streamBatches: remove('DELETE FROM stream_batches WHERE applied_ms < ?'),
    gaps: remove('DELETE FROM gaps WHERE to_ms < ?'),
    freedBytes: 0,
  };
  if (options.vacuum) db.exec('VACUUM');
  else if (db.pragma('auto_vacuum', { simple: true }) === 2) db.pragma('incremental_vacuum');
  db.pragma('wal_checkpoint(TRUNCATE)');
  result.freedBytes = Math.max(0, before - fileBytes(path));
  return result;
}
