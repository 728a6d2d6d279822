import { globMatcher } from '../keys/glob.js';
import { learnNames, type LearnedPattern } from '../keys/learned-names.js';
import type { Db } from '../store/db.js';
import { BUCKET_MS } from '../store/format.js';
import { rollupValuesSql, type RollupValues } from '../store/rollup.js';
import type { Statement } from 'better-sqlite3';
import { statSync } from 'node:fs';
import { soleInstanceOf } from '../store/fleet-rollups.js';
import { readAliases } from '../store/pattern-aliases.js';
import { openForReading, schemaVersionOf } from '../store/schema.js';
import { readGaps } from './gaps.js';
import type { AnalysisWarning, GapWithPatterns, HeldData } from './hints.js';

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
  /** What the inputs made the reader do (a file read once, instances counted once), for the analysis' warnings. */
  readonly notes: AnalysisWarning[] = [];
  private readonly dbs: Db[] = [];
  /** Per database: the pattern ids recorded under each pattern as read (see `learnNames`). */
  private readonly sources: { ids: Map<string, number[]>; rows: Statement<[number, number, number]> }[] = [];
  /** How each pattern as read was learned (names merged, positions learned). */
  private learned = new Map<string, LearnedPattern>();
  /** Each recorded pattern name → the pattern it is read as. */
  private nameOf = new Map<string, string>();
  private readonly fromBucket: number;
  private readonly toBucket: number;
  private readonly matchers: ((text: string) => boolean)[];

  constructor(paths: readonly string[], filter: RollupFilter) {
    this.matchers = filter.patterns.map(globMatcher);
    this.fromBucket = filter.sinceMs === undefined ? Number.MIN_SAFE_INTEGER : Math.floor(filter.sinceMs / BUCKET_MS) * BUCKET_MS;
    this.toBucket = filter.untilMs === undefined ? Number.MAX_SAFE_INTEGER : Math.ceil(filter.untilMs / BUCKET_MS) * BUCKET_MS;
    try {
      const files = new Map<string, string>();
      for (const path of paths) {
        // The same file named twice (or through a link, or a glob and a name) is read once.
        const db = openForReading(path); // a missing or foreign file fails here, with its own message
        const { dev, ino } = statSync(path);
        const first = files.get(`${dev}:${ino}`);
        if (first !== undefined) {
          this.notes.push({ kind: 'same-file', path, firstPath: first });
          db.close();
          continue;
        }
        files.set(`${dev}:${ino}`, path);
        this.dbs.push(db);
      }
      const owned = this.instancesOwned([...files.values()]);
      const recorded = this.dbs.map((db) => db.prepare('SELECT id, pattern FROM patterns').all() as { id: number; pattern: string }[]);
      // Read as one learner would name them: each file's renames followed, and learned from all the names.
      const { nameOf, learned } = learnNames(
        recorded.flatMap((rows) => rows.map((r) => r.pattern)),
        this.dbs.flatMap(readAliases),
      );
      this.learned = learned;
      this.nameOf = nameOf;
      this.dbs.forEach((db, i) => {
        const ids = new Map<string, number[]>();
        for (const { id, pattern } of recorded[i]!) {
          const name = nameOf.get(pattern)!;
          const list = ids.get(name);
          if (list) list.push(id);
          else ids.set(name, [id]);
        }
        const values = rollupValuesSql('', schemaVersionOf(db));
        const range = 'pattern_id = ? AND bucket_start_ms >= ? AND bucket_start_ms < ?';
        // Since schema 4, one row per (pattern, hour) summed over instances: a fleet reads as fast as one process
        // (since schema 10, a file of one instance keeps none: its own rows are the sums).
        // Where instances are shared with another file, per-instance rows, each instance from one file only.
        const sql = owned
          ? `SELECT bucket_start_ms, ${values} FROM rollups WHERE ${range} AND instance_id IN (${owned[i]!.join(', ') || 'NULL'}) ORDER BY bucket_start_ms`
          : `SELECT bucket_start_ms, ${values} FROM ${sumsTableOf(db)} WHERE ${range} ORDER BY bucket_start_ms`;
        this.sources.push({ ids, rows: db.prepare(sql).raw(true) as Statement<[number, number, number]> });
      });
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /**
   * When an instance's rows are in more than one file (a merged file and its inputs, say), the
   * instance ids each file is to be read for, so that every instance counts once (from the first
   * file that has it); `undefined` when no instance is shared.
   */
  private instancesOwned(paths: readonly string[]): number[][] | undefined {
    if (this.dbs.length < 2) return undefined;
    const perFile = this.dbs.map(
      (db) => db.prepare('SELECT id, instance FROM instances WHERE id IN (SELECT DISTINCT instance_id FROM rollups)').all() as { id: number; instance: string }[],
    );
    const owner = new Map<string, number>();
    let shared = 0;
    perFile.forEach((instances, file) => {
      for (const { instance } of instances) {
        if (owner.has(instance)) shared++;
        else owner.set(instance, file);
      }
    });
    if (shared === 0) return undefined;
    this.notes.push({ kind: 'shared-instances', instances: shared, firstPath: paths[0]! });
    return perFile.map((instances, file) => instances.filter(({ instance }) => owner.get(instance) === file).map(({ id }) => id));
  }

  /** Pattern names in any database that pass the globs, sorted. */
  patternNames(): string[] {
    return [...new Set(this.sources.flatMap((s) => [...s.ids.keys()]))]
      .filter((name) => this.matchers.length === 0 || this.matchers.some((matches) => matches(name)))
      .sort();
  }

  /** How a pattern as read was learned: the recorded names merged into it, the positions learned. */
  learnedOf(pattern: string): LearnedPattern | undefined {
    return this.learned.get(pattern);
  }

  /** A pattern's rows in the window, from every database and every name it was recorded under, in time order. */
  rowsOf(pattern: string): HourRow[] {
    const rows: HourRow[] = [];
    let parts = 0;
    for (const source of this.sources) {
      for (const id of source.ids.get(pattern) ?? []) {
        rows.push(...(source.rows.all(id, this.fromBucket, this.toBucket) as HourRow[]));
        parts++;
      }
    }
    // Each name's rows come in time order; several need one merge (rows of one hour are summed by the summary).
    if (parts > 1) rows.sort((a, b) => a[0] - b[0]);
    return rows;
  }

  /**
   * The hold times (ms) of a pattern's expired locks in the window, from the raw
   * rows (a recorder keeps a row for every failed lock, up to its budget): what
   * `check` judges against a policy's TTL. At most `limit`.
   */
  expiredHolds(pattern: string, limit = 10_000): number[] {
    const holds: number[] = [];
    this.dbs.forEach((db, i) => {
      if (holds.length >= limit) return;
      // Holds whose end was seen: a censored one (schema 8 on) is counted by the rollups, its length unknown.
      const version = schemaVersionOf(db);
      const lost = `${version >= 5 ? 'AND r.lost = 0' : ''} ${version >= 8 ? 'AND r.censored = 0' : ''}`;
      const statement = db
        .prepare(
          `SELECT r.hold_us FROM raw_samples r JOIN series s ON s.id = r.series_id
            WHERE s.pattern_id = ? AND (r.flags & 3) = 1 ${lost} AND r.hold_us IS NOT NULL AND r.ts_ms >= ? AND r.ts_ms < ? LIMIT ?`,
        )
        .raw(true);
      for (const id of this.sources[i]!.ids.get(pattern) ?? []) {
        const rows = statement.all(id, this.fromBucket, this.toBucket, limit - holds.length) as [number][];
        for (const [us] of rows) holds.push(us / 1000);
        if (holds.length >= limit) return;
      }
    });
    return holds;
  }

  /** The gaps in what producers saw (`watch`'s lost notifications) that touch the window, from every database. */
  gaps(): GapWithPatterns[] {
    return this.dbs
      .flatMap((db) => readGaps(db, this.fromBucket, this.toBucket))
      .map((gap) => ({ ...gap, patterns: new Set([...gap.patterns].map((name) => this.nameOf.get(name) ?? name)) }))
      .sort((a, b) => a.fromMs - b.fromMs);
  }

  /** What the databases hold in all, whatever the window and patterns asked for. */
  held(): HeldData {
    let samples = 0;
    let firstMs: number | undefined;
    let lastMs: number | undefined;
    for (const db of this.dbs) {
      const row = db.prepare('SELECT sum(count) AS n, min(first_ts_ms) AS first, max(last_ts_ms) AS last FROM rollups').get() as {
        n: number | null;
        first: number | null;
        last: number | null;
      };
      samples += row.n ?? 0;
      if (row.first !== null && (firstMs === undefined || row.first < firstMs)) firstMs = row.first;
      if (row.last !== null && (lastMs === undefined || row.last > lastMs)) lastMs = row.last;
    }
    return { samples, firstMs, lastMs };
  }

  close(): void {
    for (const db of this.dbs) db.close();
    this.dbs.length = 0;
  }
}

/**
 * Where a file's rollups summed over instances are: `fleet_rollups`, or `rollups` itself (before schema 4, and
 * since 10 in a file of one instance). A file marked as having no rollups yet reads `fleet_rollups`: empty too,
 * unless the file was filled by hand (SQL), as fleet-sized test files are.
 */
function sumsTableOf(db: Db): 'rollups' | 'fleet_rollups' {
  const version = schemaVersionOf(db);
  return version < 4 || (version >= 10 && typeof soleInstanceOf(db) === 'number') ? 'rollups' : 'fleet_rollups';
}
