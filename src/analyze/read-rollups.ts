import { globMatcher } from '../keys/glob.js';
import { BUCKET_MS } from '../store/format.js';
import { rollupValuesSql, type RollupValues } from '../store/rollup.js';
import type { Statement } from 'better-sqlite3';
import { openForReading, schemaVersionOf, type Db } from '../store/schema.js';

/** One rollup row as the analyzer reads it: the hour bucket, then the values. */
export type HourRow = [bucketStartMs: number, ...values: RollupValues];

/** Which rows to read: a time window (snapped to whole buckets) and pattern globs. */
export interface RollupFilter {
  sinceMs: number | undefined;
  untilMs: number | undefined;
  /** Globs over pattern names; none means every pattern. */
  patterns: readonly string[];
}

/**
 * The rollups of one or more samples databases, one pattern at a time, so
 * memory holds one pattern's rows however long the window. Every database is
 * opened up front, so a bad one fails before any work. Close when done.
 */
export class RollupReader {
  private readonly dbs: Db[] = [];
  private readonly sources: { ids: Map<string, number>; rows: Statement<[number, number, number]> }[] = [];
  private readonly fromBucket: number;
  private readonly toBucket: number;
  private readonly matchers: ((text: string) => boolean)[];

  constructor(paths: readonly string[], filter: RollupFilter) {
    this.matchers = filter.patterns.map(globMatcher);
    this.fromBucket = filter.sinceMs === undefined ? Number.MIN_SAFE_INTEGER : Math.floor(filter.sinceMs / BUCKET_MS) * BUCKET_MS;
    this.toBucket = filter.untilMs === undefined ? Number.MAX_SAFE_INTEGER : Math.ceil(filter.untilMs / BUCKET_MS) * BUCKET_MS;
    try {
      for (const path of paths) this.dbs.push(openForReading(path));
      for (const db of this.dbs) {
        const ids = new Map((db.prepare('SELECT id, pattern FROM patterns').all() as { id: number; pattern: string }[]).map((r) => [r.pattern, r.id]));
        // Since schema 4, one row per (pattern, hour) summed over instances: a fleet reads as fast as one process.
        const table = schemaVersionOf(db) >= 4 ? 'fleet_rollups' : 'rollups';
        const rows = db
          .prepare(
            `SELECT bucket_start_ms, ${rollupValuesSql('', schemaVersionOf(db))} FROM ${table}
              WHERE pattern_id = ? AND bucket_start_ms >= ? AND bucket_start_ms < ? ORDER BY bucket_start_ms`,
          )
          .raw(true);
        this.sources.push({ ids, rows });
      }
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** Pattern names in any database that pass the globs, sorted. */
  patternNames(): string[] {
    return [...new Set(this.sources.flatMap((s) => [...s.ids.keys()]))]
      .filter((name) => this.matchers.length === 0 || this.matchers.some((matches) => matches(name)))
      .sort();
  }

  /** A pattern's rows in the window, from every database, in time order. */
  rowsOf(pattern: string): HourRow[] {
    const rows: HourRow[] = [];
    for (const source of this.sources) {
      const id = source.ids.get(pattern);
      if (id !== undefined) rows.push(...(source.rows.all(id, this.fromBucket, this.toBucket) as HourRow[]));
    }
    // Each database's rows come in time order; several databases need one merge.
    if (this.sources.length > 1) rows.sort((a, b) => a[0] - b[0]);
    return rows;
  }

  close(): void {
    for (const db of this.dbs) db.close();
    this.dbs.length = 0;
  }
}
