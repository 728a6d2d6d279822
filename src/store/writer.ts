import type { Statement } from 'better-sqlite3';
import { OVERFLOW_PATTERN } from '../keys/pattern.js';
import { BUCKET_MS } from './format.js';
import {
  ROLLUP_VALUE_COLUMNS,
  RollupSum,
  addSample,
  bucketStartOf,
  newDelta,
  rollupValuesSql,
  type RollupDelta,
  type RollupValues,
} from './rollup.js';
import type { Db } from './schema.js';
import { NUMBERS_PER_SAMPLE, type DeltaBatch, type EncodedBatch } from './input.js';

export interface SampleWriterOptions {
  instance: string;
  rawSampleRate: number;
  maxPatterns: number;
  /** The pattern of a key that came without one (the recorder's templates, then the heuristics). */
  patternOf: (key: string) => string;
}

/** A recorder's running totals, stored per instance in `recorder_stats`. */
export interface WriterCounters {
  recorded: number;
  written: number;
  dropped: number;
}

export interface WriteResult {
  written: number;
  raw: number;
  patternOverflow: number;
  /** Stored rollup rows that could not be decoded and were replaced by the new data alone. */
  replacedUnreadable: number;
}

// Raw rows go in by this many per INSERT: binding one statement per row costs more than SQLite's work.
const ROWS_PER_INSERT = 32;
const RAW_COLUMNS = 8;
const KEY_CACHE_LIMIT = 10_000;

/**
 * Writes encoded batches into a samples database: raw rows (sampled) and
 * rollup upserts, one transaction per batch. Runs on the writer thread; throws
 * SQLite errors to its caller, which decides whether to retry or drop.
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
  private readonly upsertStats: Statement;
  private readonly selectFleet: Statement;
  private readonly upsertFleet: Statement;
  // Reused for every row merge: decoding into dense arrays and encoding off them needs no sorting.
  private readonly scratch = new RollupSum();
  private replacedUnreadable = 0;
  private readonly insertStreamBatch: Statement;
  private readonly params = new Array<unknown>(ROWS_PER_INSERT * RAW_COLUMNS);

  private readonly patternIds = new Map<string, number>();
  private readonly instanceIds = new Map<string, number>();
  private readonly seriesIds = new Map<string, number>();
  private readonly keyPatterns = new Map<string, string>();

  constructor(
    private readonly db: Db,
    private readonly options: SampleWriterOptions,
  ) {
    const row = `(${new Array(RAW_COLUMNS).fill('?').join(', ')})`;
    const insert = 'INSERT INTO raw_samples (ts_ms, key, series_id, hold_us, wait_us, flags, extensions, lost) VALUES ';
    this.insertRawMany = db.prepare(insert + new Array(ROWS_PER_INSERT).fill(row).join(', '));
    this.insertRawOne = db.prepare(insert + row);
    this.insertPattern = db.prepare('INSERT OR IGNORE INTO patterns (pattern) VALUES (?)');
    this.selectPattern = db.prepare('SELECT id FROM patterns WHERE pattern = ?');
    this.countPatterns = db.prepare('SELECT count(*) AS n FROM patterns');
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
    this.upsertStats = db.prepare(
      'INSERT OR REPLACE INTO recorder_stats (instance_id, updated_ms, recorded, written, dropped) VALUES (?, ?, ?, ?, ?)',
    );
    this.insertStreamBatch = db.prepare(
      'INSERT OR IGNORE INTO stream_batches (instance_id, epoch, seq, applied_ms) VALUES (?, ?, ?, ?)',
    );
  }

  /**
   * Writes one batch (and the recorder's counters, if given) in one IMMEDIATE
   * transaction; all or nothing. `beforeCommit` runs last inside it: throwing
   * there rolls the batch back.
   */
  write(batch: EncodedBatch, counters?: WriterCounters, beforeCommit?: () => void): WriteResult {
    this.replacedUnreadable = 0;
    try {
      return this.db
        .transaction(() => {
          const result = this.writeRows(batch);
          if (counters) {
            this.upsertStats.run(this.instanceIdOf(this.options.instance), Date.now(), counters.recorded, counters.written, counters.dropped);
          }
          beforeCommit?.();
          return result;
        })
        .immediate();
    } catch (error) {
      this.forgetIds();
      throw error;
    }
  }

  /** Stores a recorder's counters alone (its final ones, at close). */
  writeCounters(counters: WriterCounters): void {
    this.upsertStats.run(this.instanceIdOf(this.options.instance), Date.now(), counters.recorded, counters.written, counters.dropped);
  }

  /**
   * Applies delta batches in one transaction: each one exactly once (a batch
   * whose (instance, epoch, seq) is already recorded is skipped). Returns how
   * many were new.
   */
  applyDeltaBatches(batches: readonly DeltaBatch[]): { applied: number; duplicates: number; samples: number } {
    try {
      return this.db
        .transaction(() => {
          let applied = 0;
          let samples = 0;
          for (const batch of batches) {
            const instanceId = this.instanceIdOf(batch.instance);
            if (this.insertStreamBatch.run(instanceId, batch.epoch, batch.seq, Date.now()).changes === 0) continue;
            applied++;
            for (const [tsMs, key, pattern, holdUs, waitUs, ttlMs, flags, extensions, lost] of batch.raw) {
              const patternId = this.patternIdOf(pattern, true);
              const seriesId = this.seriesIdOf(patternId, instanceId, ttlMs);
              this.insertRawOne.run([tsMs, key, seriesId, holdUs < 0 ? null : holdUs, waitUs, flags, extensions, lost]);
            }
            for (const d of batch.rollups) {
              samples += d.count;
              this.upsert({ ...d, pattern: this.patternIdOf(d.pattern, true), instance: instanceId });
            }
          }
          return { applied, duplicates: batches.length - applied, samples };
        })
        .immediate();
    } catch (error) {
      this.forgetIds();
      throw error;
    }
  }

  /** After a rollback: ids learned inside the transaction may not exist. */
  private forgetIds(): void {
    this.patternIds.clear();
    this.instanceIds.clear();
    this.seriesIds.clear();
  }

  private writeRows(batch: EncodedBatch): WriteResult {
    const { numbers, flags, keys, keyLengths } = batch;
    const explicitPatterns = new Map(batch.patterns);
    const explicitInstances = new Map(batch.instances);
    let defaultInstanceId = -1; // looked up on first use: a batch of explicit instances needs no row for it
    const rate = this.options.rawSampleRate;
    const deltas = new Map<number | string, RollupDelta>();
    const params = this.params;
    let pendingRows = 0;
    let raw = 0;
    let overflow = 0;
    let keyOffset = 0;

    for (let i = 0; i < batch.count; i++) {
      const key = keys.slice(keyOffset, keyOffset + keyLengths[i]!);
      keyOffset += keyLengths[i]!;
      const o = i * NUMBERS_PER_SAMPLE;
      const tsMs = numbers[o]!;
      const holdUs = numbers[o + 1]!;
      const waitUs = numbers[o + 2]!;
      const ttlMs = numbers[o + 3]!;
      const attempts = numbers[o + 4]!;
      const extensions = numbers[o + 5]!;
      const flag = flags[i]!;
      const outcome = flag & 7;
      const threw = (flag >> 3) & 1;

      const pattern = explicitPatterns.get(i) ?? this.patternOf(key);
      let patternId = this.patternIdOf(pattern);
      if (patternId < 0) {
        overflow++;
        patternId = this.patternIdOf(OVERFLOW_PATTERN, true);
      }
      const instance = explicitInstances.get(i);
      let instanceId: number;
      if (instance !== undefined) instanceId = this.instanceIdOf(instance);
      else {
        if (defaultInstanceId < 0) defaultInstanceId = this.instanceIdOf(this.options.instance);
        instanceId = defaultInstanceId;
      }

      if (rate >= 1 || Math.random() < rate) {
        const p = pendingRows * RAW_COLUMNS;
        params[p] = tsMs;
        params[p + 1] = key;
        params[p + 2] = this.seriesIdOf(patternId, instanceId, ttlMs);
        params[p + 3] = holdUs < 0 ? null : holdUs;
        params[p + 4] = waitUs;
        // In the file, `lost` is outcome 1 with its own column, so readers of 2 bits still see a failed lock.
        params[p + 5] = (outcome === 4 ? 1 : outcome) | (threw << 2) | (attempts * 8);
        params[p + 6] = extensions;
        params[p + 7] = outcome === 4 ? 1 : 0;
        raw++;
        if (++pendingRows === ROWS_PER_INSERT) {
          this.insertRawMany.run(params);
          pendingRows = 0;
        }
      }

      const bucketStartMs = bucketStartOf(tsMs);
      // A numeric key while ids are small (the usual case); a string beyond.
      const id =
        patternId < 65_536 && instanceId < 4096
          ? (bucketStartMs / BUCKET_MS) * 268_435_456 + instanceId * 65_536 + patternId
          : `${patternId}:${bucketStartMs}:${instanceId}`;
      let delta = deltas.get(id);
      if (!delta) {
        delta = newDelta(patternId, instanceId, bucketStartMs, tsMs);
        deltas.set(id, delta);
      }
      addSample(delta, tsMs, holdUs, waitUs, ttlMs, outcome, threw, extensions);
    }
    for (let r = 0; r < pendingRows; r++) this.insertRawOne.run(params.slice(r * RAW_COLUMNS, (r + 1) * RAW_COLUMNS));
    for (const delta of deltas.values()) this.upsert(delta);
    const replacedUnreadable = this.replacedUnreadable;
    this.replacedUnreadable = 0;
    return { written: batch.count, raw, patternOverflow: overflow, replacedUnreadable };
  }

  /** Adds a delta to its instance's row and to the row summed over instances. */
  private upsert(d: RollupDelta): void {
    this.mergeRow(this.selectFleet, this.upsertFleet, [d.pattern, d.bucketStartMs], d);
    this.mergeRow(this.selectRollup, this.upsertRollup, [d.pattern, d.bucketStartMs, d.instance], d);
  }

  /** Read, add, write one rollup row; both statements take the row's key first. */
  private mergeRow(select: Statement, write: Statement, key: number[], d: RollupDelta): void {
    const sum = this.scratch;
    sum.clear();
    sum.addDelta(d);
    const existing = select.get(...key) as RollupValues | undefined;
    if (existing) {
      try {
        sum.addRow(existing);
      } catch {
        // A damaged row would otherwise fail this and every later batch for its pattern-hour:
        // it is replaced by the new data alone, and the loss is reported.
        sum.clear();
        sum.addDelta(d);
        this.replacedUnreadable++;
      }
    }
    write.run(...key, ...sum.values());
  }

  private patternOf(key: string): string {
    let pattern = this.keyPatterns.get(key);
    if (pattern === undefined) {
      pattern = this.options.patternOf(key);
      if (this.keyPatterns.size >= KEY_CACHE_LIMIT) this.keyPatterns.clear();
      this.keyPatterns.set(key, pattern);
    }
    return pattern;
  }

  /** The pattern's id, or -1 when it is new and `maxPatterns` is reached. */
  private patternIdOf(pattern: string, force = false): number {
    const known = this.patternIds.get(pattern);
    if (known !== undefined) return known;
    let row = this.selectPattern.get(pattern) as { id: number } | undefined;
    if (!row) {
      // Counted in the database, so several processes sharing a file share the cap.
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
