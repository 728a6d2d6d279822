import { statSync } from 'node:fs';
import { learnNames, type LearnedPattern } from '../keys/learned-names.js';
import { BUCKET_MS } from './format.js';
import { readAliases } from './pattern-aliases.js';
import { openForReading, schemaVersionOf } from './schema.js';

/** What a samples database holds: the way to confirm sampling works minutes after deploying. */
export interface DatabaseStats {
  path: string;
  schemaVersion: number;
  /** File size, including the WAL file next to it (bytes). */
  bytes: number;
  rawRows: number;
  rollupRows: number;
  /** Samples counted by the rollups (every lock, even when raw rows are sampled). */
  samples: number;
  /** Patterns as a report reads them: the names recorded, renames followed and learned from (see `learnNames`). */
  patterns: number;
  /** Pattern names recorded in the file (provisional ones included, before their positions were learned). */
  recordedPatterns: number;
  /** The patterns learned from the keys, most names merged first: the positions learned, the names read as each. */
  learned: ({ pattern: string } & LearnedPattern)[];
  instances: number;
  firstMs: number | undefined;
  lastMs: number | undefined;
  /** Samples per hour for the most recent hours with data, newest first. */
  recentHours: { hourStartMs: number; samples: number }[];
  /**
   * Per recorder instance: its own counters, when the file records them (schema ≥ 2; raw rows since 6).
   * `rawFullMs`: since when its raw rows stop because the file reached its `maxDatabaseBytes`.
   */
  recorders: RecorderRow[];
  /** Sum of the recorders' dropped samples. */
  dropped: number;
  /** Sum of the recorders' dropped raw rows (statistics unaffected). */
  rawDropped: number;
  /** The earliest time a recorder still finds the file at its size limit: raw rows stop, rollups go on. */
  rawFullSinceMs: number | undefined;
  /**
   * Stretches in which a watcher could not see every lock (schema ≥ 7), by reason, and the locks they cost: held
   * then and not followed to their end, or (`open-limit`) taken meanwhile and not recorded.
   */
  gaps: { count: number; byReason: Record<string, number>; locksNotRecorded: number };
}

export interface RecorderRow {
  instance: string;
  updatedMs: number;
  recorded: number;
  written: number;
  dropped: number;
  rawWritten: number;
  rawDropped: number;
  rawFullMs: number | undefined;
}

/** Reads the counts of one samples database. Throws `DatabaseError` as `analyze` does. */
export function databaseStats(path: string, recentHourCount = 6): DatabaseStats {
  const db = openForReading(path);
  try {
    const schemaVersion = schemaVersionOf(db);
    const one = <T>(sql: string, ...params: unknown[]) => db.prepare(sql).get(...params) as T;
    const totals = one<{ rows: number; samples: number | null; first: number | null; last: number | null }>(
      'SELECT count(*) AS rows, sum(count) AS samples, min(first_ts_ms) AS first, max(last_ts_ms) AS last FROM rollups',
    );
    const recentHours = (
      db
        .prepare('SELECT bucket_start_ms AS b, sum(count) AS n FROM rollups GROUP BY bucket_start_ms ORDER BY bucket_start_ms DESC LIMIT ?')
        .all(recentHourCount) as { b: number; n: number }[]
    ).map((r) => ({ hourStartMs: Math.floor(r.b / BUCKET_MS) * BUCKET_MS, samples: r.n }));
    const raw = schemaVersion >= 6 ? 's.raw_written, s.raw_dropped, s.raw_full_ms' : '0 AS raw_written, 0 AS raw_dropped, NULL AS raw_full_ms';
    type Row = { instance: string; updated_ms: number; recorded: number; written: number; dropped: number; raw_written: number; raw_dropped: number; raw_full_ms: number | null };
    const recorders: RecorderRow[] =
      schemaVersion >= 2
        ? (
            db
              .prepare(
                `SELECT i.instance, s.updated_ms, s.recorded, s.written, s.dropped, ${raw}
                   FROM recorder_stats s JOIN instances i ON i.id = s.instance_id ORDER BY s.updated_ms DESC`,
              )
              .all() as Row[]
          ).map((r) => ({
            instance: r.instance,
            updatedMs: r.updated_ms,
            recorded: r.recorded,
            written: r.written,
            dropped: r.dropped,
            rawWritten: r.raw_written,
            rawDropped: r.raw_dropped,
            rawFullMs: r.raw_full_ms ?? undefined,
          }))
        : [];
    const names = db.prepare('SELECT pattern FROM patterns').pluck().all() as string[];
    const { learned } = learnNames(names, readAliases(db));
    const full = recorders.map((r) => r.rawFullMs).filter((ms): ms is number => ms !== undefined);
    const gapRows = schemaVersion >= 7 ? (db.prepare('SELECT reason, count(*) AS n, sum(open_holds) AS holds FROM gaps GROUP BY reason ORDER BY reason').all() as { reason: string; n: number; holds: number }[]) : [];
    return {
      path,
      schemaVersion,
      bytes: fileBytes(path),
      rawRows: one<{ n: number }>('SELECT count(*) AS n FROM raw_samples').n,
      rollupRows: totals.rows,
      samples: totals.samples ?? 0,
      patterns: learned.size,
      recordedPatterns: names.length,
      learned: [...learned]
        .filter(([, l]) => l.names > 1 || l.positions.length > 0)
        .map(([pattern, l]) => ({ pattern, ...l }))
        .sort((a, b) => b.names - a.names || a.pattern.localeCompare(b.pattern)),
      instances: one<{ n: number }>('SELECT count(*) AS n FROM instances').n,
      firstMs: totals.first ?? undefined,
      lastMs: totals.last ?? undefined,
      recentHours,
      recorders,
      dropped: recorders.reduce((sum, r) => sum + r.dropped, 0),
      rawDropped: recorders.reduce((sum, r) => sum + r.rawDropped, 0),
      rawFullSinceMs: full.length > 0 ? Math.min(...full) : undefined,
      gaps: {
        count: gapRows.reduce((n, r) => n + r.n, 0),
        byReason: Object.fromEntries(gapRows.map((r) => [r.reason, r.n])),
        locksNotRecorded: gapRows.reduce((n, r) => n + r.holds, 0),
      },
    };
  } finally {
    db.close();
  }
}

/** A database file's size with its WAL (bytes). */
export function fileBytes(path: string): number {
  let bytes = 0;
  for (const file of [path, `${path}-wal`]) {
    try {
      bytes += statSync(file).size;
    } catch {
      // no WAL file: nothing is being written right now
    }
  }
  return bytes;
}
