import type Database from 'better-sqlite3';
import { DenseHistogram, addEncodedRollup, encodeRollup } from './histogram.js';

type Db = Database.Database;

type RollupRow = [
  patternId: number, bucketStartMs: number, count: number, released: number, expired: number, notAcquired: number, error: number,
  threw: number, holdSumUs: number, waitSumUs: number, firstTsMs: number, lastTsMs: number, hists: Buffer,
];

/**
 * Recomputes `fleet_rollups` (rollups summed over instances) from `rollups`.
 * Used when a file is migrated to schema 4 and after `merge` replaces
 * instances' rows. Reads one pattern at a time, so memory stays bounded.
 * Runs inside the caller's transaction when there is one. Returns rows written.
 */
export function rebuildFleetRollups(db: Db): number {
  db.exec('DELETE FROM fleet_rollups');
  const patternIds = (db.prepare('SELECT DISTINCT pattern_id FROM rollups').raw(true).all() as [number][]).map(([p]) => p);
  const byPattern = db
    .prepare(
      `SELECT pattern_id, bucket_start_ms, count, released, expired, not_acquired, error, threw, hold_sum_us, wait_sum_us,
              first_ts_ms, last_ts_ms, hists
         FROM rollups WHERE pattern_id = ? ORDER BY bucket_start_ms`,
    )
    .raw(true);
  const write = db.prepare(
    `INSERT OR REPLACE INTO fleet_rollups (pattern_id, bucket_start_ms, count, released, expired, not_acquired, error, threw,
       hold_sum_us, wait_sum_us, first_ts_ms, last_ts_ms, hists) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const hold = new DenseHistogram();
  const wait = new DenseHistogram();
  let ttls = new Map<number, number>();
  let sum: number[] | undefined;
  let written = 0;
  const flush = () => {
    if (!sum) return;
    write.run(...sum, encodeRollup(hold, wait, ttls));
    written++;
    hold.clear();
    wait.clear();
    ttls = new Map();
    sum = undefined;
  };
  for (const patternId of patternIds) {
    for (const row of byPattern.all(patternId) as RollupRow[]) {
      const [, bucket, count, released, expired, notAcquired, error, threw, holdSum, waitSum, first, last, hists] = row;
      if (sum && sum[1] !== bucket) flush();
      sum ??= [patternId, bucket, 0, 0, 0, 0, 0, 0, 0, 0, first, last];
      sum[2]! += count;
      sum[3]! += released;
      sum[4]! += expired;
      sum[5]! += notAcquired;
      sum[6]! += error;
      sum[7]! += threw;
      sum[8]! += holdSum;
      sum[9]! += waitSum;
      sum[10] = Math.min(sum[10]!, first);
      sum[11] = Math.max(sum[11]!, last);
      addEncodedRollup(hists, hold, wait, ttls);
    }
    flush();
  }
  return written;
}
