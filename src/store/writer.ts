import type { Statement } from 'better-sqlite3';
import { OVERFLOW_PATTERN } from '../keys/pattern.js';
import { SOLE_INSTANCE_META, parseSoleInstance } from './fleet-rollups.js';
import type { AliasRow, DeltaBatch, FoldedRollup, GapRow, RawRow } from './input.js';
import { ROLLUP_VALUE_COLUMNS, RollupSum, rollupValuesSql, type RollupValues } from './rollup.js';
import type { Db } from './db.js';
import { aliasStatements } from './pattern-aliases.js';

export interface SampleWriterOptions {
  /** Whose counters {@link SampleWriter.apply} stores in `recorder_stats`. */
  instance: string;
  /** Distinct patterns kept in the file (counted in the file, so processes sharing it share the cap); further ones go to `{other}`. */
  maxPatterns: number;
  /** Past this many bytes of used pages, raw rows are left out (and counted); rollups go on. 0: no limit. */
  maxDatabaseBytes?: number;
}

// The types of a write's counters and result: beside the writer, in a file of their own.
export type { ApplyOptions, WriteResult, WriterCounters } from './write-result.js';
import type { ApplyOptions, WriteResult, WriterCounters } from './write-result.js';

// Raw rows go in by this many per INSERT: binding one statement per row costs more than SQLite's work.
const ROWS_PER_INSERT = 32;
const RAW_COLUMNS = 9;

/**
 * Writes folded batches into a samples database: rollup deltas added to the
 * per-instance and fleet-wide rows (those only once a second instance writes
 * rollups to the file: see `SOLE_INSTANCE_META`), and the raw rows their
 * producer kept, in one IMMEDIATE transaction; all or nothing. Used by a recorder's writer
 * thread and by `collect`. Throws SQLite errors to its caller, which decides
 * whether to retry or drop.
 */
export class SampleWriter {
  private readonly insertRawMany: Statement;
  private readonly insertRawOne: Statement;
  private readonly insertPattern: Statement;
  private readonly selectPattern: Statement;
  private readonly countPatterns: Statement;
  private readonly insertInstance: Statement;
  private readonly selectInstance: Statement;
  private readonly insertSeries: Statement;
  private readonly selectSeries: Statement;
  private readonly selectRollup: Statement;
  private readonly upsertRollup: Statement;
  private readonly selectFleet: Statement;
  private readonly upsertFleet: Statement;
  private readonly selectSole: Statement;
  private readonly claimSole: Statement;
  private readonly forgetSole: Statement;
  private readonly copyToFleet: Statement;
  /** Read at the start of each transaction (another process may share the file): see `soleInstanceOf`. */
  private sole: number | null | undefined;
  private readonly upsertStats: Statement;
  private readonly insertStreamBatch: Statement;
  private readonly selectStats: Statement;
  private readonly upsertGap: Statement;
  private readonly insertAlias: Statement | undefined;
  // Reused for every row merge: decoding into dense arrays and encoding off them needs no sorting.
  private readonly scratch = new RollupSum();
  private readonly params = new Array<unknown>(ROWS_PER_INSERT * RAW_COLUMNS);
  private result: WriteResult = emptyResult();
  /** Since when raw rows have been left out for the size limit (epoch ms), stored with the counters. */
  private overLimitSince: number | undefined;

  private readonly patternIds = new Map<string, number>();
  private readonly instanceIds = new Map<string, number>();
  private readonly seriesIds = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly options: SampleWriterOptions,
  ) {
    const row = `(${new Array(RAW_COLUMNS).fill('?').join(', ')})`;
    const insert = 'INSERT INTO raw_samples (ts_ms, key, series_id, hold_us, wait_us, flags, extensions, lost, censored) VALUES ';
    this.insertRawMany = db.prepare(insert + new Array(ROWS_PER_INSERT).fill(row).join(', '));
    this.insertRawOne = db.prepare(insert + row);
    this.insertPattern = db.prepare('INSERT OR IGNORE INTO patterns (pattern) VALUES (?)');
    this.selectPattern = db.prepare('SELECT id FROM patterns WHERE pattern = ?');
    ({ countPatterns: this.countPatterns, insertAlias: this.insertAlias } = aliasStatements(db));
    this.insertInstance = db.prepare('INSERT OR IGNORE INTO instances (instance) VALUES (?)');
    this.selectInstance = db.prepare('SELECT id FROM instances WHERE instance = ?');
    this.insertSeries = db.prepare('INSERT OR IGNORE INTO series (pattern_id, instance_id, ttl_ms) VALUES (?, ?, ?)');
    this.selectSeries = db.prepare('SELECT id FROM series WHERE pattern_id = ? AND instance_id = ? AND ttl_ms = ?');
    const values = rollupValuesSql();
    const placeholders = ROLLUP_VALUE_COLUMNS.map(() => '?').join(', ');
    this.selectRollup = db
      .prepare(`SELECT ${values} FROM rollups WHERE pattern_id = ? AND bucket_start_ms = ? AND instance_id = ?`)
      .raw(true);
    this.upsertRollup = db.prepare(
      `INSERT OR REPLACE INTO rollups (pattern_id, bucket_start_ms, instance_id, ${values}) VALUES (?, ?, ?, ${placeholders})`,
    );
    this.selectFleet = db.prepare(`SELECT ${values} FROM fleet_rollups WHERE pattern_id = ? AND bucket_start_ms = ?`).raw(true);
    this.upsertFleet = db.prepare(
      `INSERT OR REPLACE INTO fleet_rollups (pattern_id, bucket_start_ms, ${values}) VALUES (?, ?, ${placeholders})`,
    );
    this.selectSole = db.prepare('SELECT value FROM meta WHERE name = ?').raw(true);
    this.claimSole = db.prepare('INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)');
    this.forgetSole = db.prepare('DELETE FROM meta WHERE name = ?');
    this.copyToFleet = db.prepare(`INSERT OR REPLACE INTO fleet_rollups (pattern_id, bucket_start_ms, ${values}) SELECT pattern_id, bucket_start_ms, ${values} FROM rollups`);
    this.upsertStats = db.prepare(
      `INSERT OR REPLACE INTO recorder_stats (instance_id, updated_ms, recorded, written, dropped, raw_written, raw_dropped, raw_full_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.selectStats = db.prepare('SELECT written, raw_written FROM recorder_stats WHERE instance_id = ?');
    // A gap recorded again (a redelivered batch, a later, longer view of the same gap) keeps its longest extent.
    this.upsertGap = db.prepare(
      `INSERT INTO gaps (instance_id, source, from_ms, to_ms, reason, open_holds) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (instance_id, source, from_ms) DO UPDATE SET to_ms = max(to_ms, excluded.to_ms), open_holds = max(open_holds, excluded.open_holds)`,
    );
    this.insertStreamBatch = db.prepare(
      'INSERT OR IGNORE INTO stream_batches (instance_id, epoch, seq, applied_ms) VALUES (?, ?, ?, ?)',
    );
  }

  /**
   * Applies batches in one IMMEDIATE transaction. A batch with an `epoch` and
   * `seq` is applied exactly once: one already recorded is skipped.
   */
  apply(batches: readonly DeltaBatch[], options: ApplyOptions = {}): WriteResult {
    this.result = emptyResult();
    try {
      return this.db
        .transaction(() => {
          const sole = this.selectSole.get(SOLE_INSTANCE_META) as [string | number] | undefined;
          this.sole = sole === undefined ? undefined : parseSoleInstance(sole[0]);
          for (const batch of batches) this.applyOne(batch);
          if (options.counters) this.writeCounters(options.counters(this.result));
          options.beforeCommit?.();
          return this.result;
        })
        .immediate();
    } catch (error) {
      this.forgetIds();
      throw error;
    }
  }

  /** Stores a recorder's counters (alone, its final ones at close; or inside {@link apply}). */
  writeCounters(c: WriterCounters): void {
    const id = this.instanceIdOf(this.options.instance);
    this.upsertStats.run(id, Date.now(), c.recorded, c.written, c.dropped, c.rawWritten, c.rawDropped, this.overLimitSince ?? null);
  }

  private applyOne(batch: DeltaBatch): void {
    const instanceId = this.instanceIdOf(batch.instance);
    if (batch.epoch !== undefined && batch.seq !== undefined) {
      if (this.insertStreamBatch.run(instanceId, batch.epoch, batch.seq, Date.now()).changes === 0) {
        this.result.duplicates++;
        return;
      }
    }
    this.result.applied++;
    const samples = this.result.samples;
    const raw = this.result.raw;
    // Renames first: a provisional pattern renamed frees its place in the file's budget for the learned one.
    if (batch.aliases) this.insertAliases(batch.aliases);
    for (const rollup of batch.rollups) this.upsert(rollup, instanceId);
    if (batch.raw.length > 0) this.insertRaw(batch.raw, instanceId);
    if (batch.gaps) this.insertGaps(batch.gaps, instanceId);
    if (batch.counters) this.storeProducerCounters(instanceId, batch.counters, this.result.samples - samples, this.result.raw - raw);
  }

  /**
   * A stream sink's counters, per instance: what it recorded and dropped as of
   * its latest batch, and what this file received from it (summed as batches
   * are applied, each once), so `stats` on a fleet file shows every instance's losses.
   */
  private storeProducerCounters(instanceId: number, c: NonNullable<DeltaBatch['counters']>, samples: number, raw: number): void {
    const before = this.selectStats.get(instanceId) as { written: number; raw_written: number } | undefined;
    this.upsertStats.run(instanceId, Date.now(), c.recorded, (before?.written ?? 0) + samples, c.dropped, (before?.raw_written ?? 0) + raw, c.rawDropped, null);
  }

  private insertGaps(gaps: readonly GapRow[], instanceId: number): void {
    for (const [source, fromMs, toMs, reason, openHolds] of gaps) this.upsertGap.run(instanceId, source, fromMs, toMs, reason, openHolds);
    this.result.gaps += gaps.length;
  }

  private insertAliases(aliases: readonly AliasRow[]): void {
    for (const [from, to, distinct] of aliases) {
      if (from === to || this.insertAlias === undefined) continue;
      this.insertAlias.run(this.patternIdOf(from, true), this.patternIdOf(to, true), distinct);
    }
    this.result.aliases += aliases.length;
  }

  private insertRaw(rows: readonly RawRow[], instanceId: number): void {
    if (this.overLimit()) {
      this.overLimitSince ??= Date.now();
      this.result.rawOverLimit += rows.length;
      return;
    }
    this.overLimitSince = undefined;
    const params = this.params;
    let pending = 0;
    for (const [tsMs, key, pattern, holdUs, waitUs, ttlMs, flags, extensions, lost, censored] of rows) {
      const p = pending * RAW_COLUMNS;
      params[p] = tsMs;
      params[p + 1] = key;
      let patternId = this.patternIdOf(pattern);
      if (patternId < 0) patternId = this.patternIdOf(OVERFLOW_PATTERN, true);
      params[p + 2] = this.seriesIdOf(patternId, instanceId, ttlMs);
      params[p + 3] = holdUs < 0 ? null : holdUs;
      params[p + 4] = waitUs;
      params[p + 5] = flags;
      params[p + 6] = extensions;
      params[p + 7] = lost;
      params[p + 8] = censored ?? 0;
      if (++pending === ROWS_PER_INSERT) {
        this.insertRawMany.run(params);
        pending = 0;
      }
    }
    for (let r = 0; r < pending; r++) this.insertRawOne.run(params.slice(r * RAW_COLUMNS, (r + 1) * RAW_COLUMNS));
    this.result.raw += rows.length;
  }

  /** Whether the file's used pages (free pages are reused first) have reached `maxDatabaseBytes`. */
  private overLimit(): boolean {
    const max = this.options.maxDatabaseBytes ?? 0;
    if (max <= 0) return false;
    const pages = (this.db.pragma('page_count', { simple: true }) as number) - (this.db.pragma('freelist_count', { simple: true }) as number);
    return pages * (this.db.pragma('page_size', { simple: true }) as number) >= max;
  }

  /** Adds a delta to its instance's row and, once the file has rollups of several instances, to the row summed over them. */
  private upsert(rollup: FoldedRollup, instanceId: number): void {
    let patternId = this.patternIdOf(rollup.pattern);
    if (patternId < 0) {
      this.result.patternOverflow += rollup.values[0];
      patternId = this.patternIdOf(OVERFLOW_PATTERN, true);
    }
    this.result.samples += rollup.values[0];
    if (this.sole === null) {
      this.claimSole.run(SOLE_INSTANCE_META, String(instanceId));
      this.sole = instanceId;
    } else if (this.sole !== undefined && this.sole !== instanceId) {
      // A second instance: the sums so far are the first one's rows, copied as they are.
      this.forgetSole.run(SOLE_INSTANCE_META);
      this.copyToFleet.run();
      this.sole = undefined;
    }
    if (this.sole === undefined) this.mergeRow(this.selectFleet, this.upsertFleet, [patternId, rollup.bucketStartMs], rollup.values);
    this.mergeRow(this.selectRollup, this.upsertRollup, [patternId, rollup.bucketStartMs, instanceId], rollup.values);
  }

  /** Read, add, write one rollup row; both statements take the row's key first. A new row is the delta as it is. */
  private mergeRow(select: Statement, write: Statement, key: number[], delta: RollupValues): void {
    const existing = select.get(...key) as RollupValues | undefined;
    // Producers encode their deltas with the codec (a collector checks a stream's before they get here).
    if (!existing) return void write.run(...key, ...delta);
    const sum = this.scratch;
    sum.clear();
    sum.addRow(delta);
    try {
      sum.addRow(existing);
    } catch {
      // A damaged row would otherwise fail this and every later batch for its pattern-hour:
      // it is replaced by the new data alone, and the loss is reported.
      sum.clear();
      sum.addRow(delta);
      this.result.replacedUnreadable++;
    }
    write.run(...key, ...sum.values());
  }

  /** After a rollback: ids learned inside the transaction may not exist. */
  private forgetIds(): void {
    this.patternIds.clear();
    this.instanceIds.clear();
    this.seriesIds.clear();
  }

  /** The pattern's id, or -1 when it is new and the file holds `maxPatterns` patterns. */
  private patternIdOf(pattern: string, force = pattern === OVERFLOW_PATTERN): number {
    const known = this.patternIds.get(pattern);
    if (known !== undefined) return known;
    let row = this.selectPattern.get(pattern) as { id: number } | undefined;
    if (!row) {
      if (!force && (this.countPatterns.get() as { n: number }).n >= this.options.maxPatterns) return -1;
      this.insertPattern.run(pattern);
      row = this.selectPattern.get(pattern) as { id: number };
    }
    this.patternIds.set(pattern, row.id);
    return row.id;
  }

  private instanceIdOf(instance: string): number {
    const known = this.instanceIds.get(instance);
    if (known !== undefined) return known;
    this.insertInstance.run(instance);
    const row = this.selectInstance.get(instance) as { id: number };
    this.instanceIds.set(instance, row.id);
    return row.id;
  }

  private seriesIdOf(patternId: number, instanceId: number, ttlMs: number): number {
    const id = `${patternId}:${instanceId}:${ttlMs}`;
    const known = this.seriesIds.get(id);
    if (known !== undefined) return known;
    this.insertSeries.run(patternId, instanceId, ttlMs);
    const row = this.selectSeries.get(patternId, instanceId, ttlMs) as { id: number };
    this.seriesIds.set(id, row.id);
    return row.id;
  }
}

function emptyResult(): WriteResult {
  return { applied: 0, duplicates: 0, samples: 0, raw: 0, rawOverLimit: 0, patternOverflow: 0, replacedUnreadable: 0, gaps: 0, aliases: 0 };
}
