import { ROLLUP_VALUE_COLUMNS, RollupSum, rollupValuesSql, type RollupValues } from './rollup.js';
import type { Db } from './db.js';

/**
 * `fleet_rollups` holds the rollups summed over instances, so that a report over
 * a fleet reads one row per pattern and hour. A file whose rollups are all one
 * instance's (schema 10 on) keeps no such rows — they would copy `rollups` byte
 * for byte — and says so with this `meta` row: its value is that instance's id
 * ('' while the file has no rollups). Without it, `fleet_rollups` holds the sums
 * (every file of schema 4 to 9, and files of several instances).
 */
export const SOLE_INSTANCE_META = 'sole_instance_id';

/**
 * The instance whose `rollups` rows are the file's sums (`fleet_rollups` is then
 * empty): its id, `null` while the file has no rollups; `undefined` when
 * `fleet_rollups` holds the sums. For a file of schema 10 or later.
 */
export function soleInstanceOf(db: Db): number | null | undefined {
  const row = db.prepare('SELECT value FROM meta WHERE name = ?').raw(true).get(SOLE_INSTANCE_META) as [string | number] | undefined;
  return row === undefined ? undefined : parseSoleInstance(row[0]);
}

export function parseSoleInstance(value: string | number): number | null {
  return value === '' ? null : Number(value);
}

/**
 * Recomputes `fleet_rollups` from `rollups`: empty, with the {@link SOLE_INSTANCE_META}
 * mark, when the rollups are one instance's (or none); otherwise the sums over instances.
 * Used when a file is migrated (to schema 4, to 10) and after `merge` replaces
 * instances' rows. Reads one pattern at a time, so memory stays bounded.
 * Runs inside the caller's transaction when there is one. Returns rows written.
 */
export function rebuildFleetRollups(db: Db): number {
  db.exec('DELETE FROM fleet_rollups');
  const instances = db.prepare('SELECT DISTINCT instance_id FROM rollups LIMIT 2').raw(true).all() as [number][];
  if (instances.length < 2) {
    db.prepare('INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)').run(SOLE_INSTANCE_META, String(instances[0]?.[0] ?? ''));
    return 0;
  }
  db.prepare('DELETE FROM meta WHERE name = ?').run(SOLE_INSTANCE_META);
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
