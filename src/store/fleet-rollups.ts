import { ROLLUP_VALUE_COLUMNS, RollupSum, rollupValuesSql, type RollupValues } from './rollup.js';
import type { Db } from './db.js';

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
    .prepare(`SELECT bucket_start_ms, ${rollupValuesSql()} FROM rollups WHERE pattern_id = ? ORDER BY bucket_start_ms`)
    .raw(true);
  const write = db.prepare(
    `INSERT OR REPLACE INTO fleet_rollups (pattern_id, bucket_start_ms, ${rollupValuesSql()})
     VALUES (?, ?, ${ROLLUP_VALUE_COLUMNS.map(() => '?').join(', ')})`,
  );
  const sum = new RollupSum();
  let bucket = Number.NaN;
  let written = 0;
  const flush = (patternId: number) => {
    if (sum.rows === 0) return;
    write.run(patternId, bucket, ...sum.values());
    written++;
    sum.clear();
  };
  for (const patternId of patternIds) {
    for (const [rowBucket, ...values] of byPattern.all(patternId) as [number, ...RollupValues][]) {
      if (rowBucket !== bucket) flush(patternId);
      bucket = rowBucket;
      sum.addRow(values);
    }
    flush(patternId);
  }
  return written;
}
