import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { Statement } from 'better-sqlite3';
import { ConfigError } from '../errors.js';
import { compileTemplates, resolvePattern, type CompiledTemplate } from '../keys/pattern.js';
import { Histogram, addEncodedCounts, encodeCounts } from './histogram.js';
import { OUTCOME_CODE, type LockSample, type Outcome, type SampleRecorder } from './sample.js';
import { BUCKET_MS, openForWriting, type Db } from './schema.js';

/** Options of {@link SqliteRecorder}. */
export interface SqliteRecorderOptions {
  /** The SQLite file to write; created if absent. Several processes may share one file. */
  path: string;
  /** Identifies this process in the data. @default `${hostname}:${pid}` */
  instance?: string;
  /** How often buffered samples are written (ms). @default 1000 */
  flushIntervalMs?: number;
  /** A write is scheduled as soon as this many samples are buffered; also the size of one transaction. @default 5000 */
  flushBatchSize?: number;
  /** Samples held in memory at most; beyond this, new samples are dropped and counted. @default 100000 */
  maxBufferedSamples?: number;
  /** Fraction (0–1] of samples also kept as raw rows; rollups always count every sample. @default 1 */
  rawSampleRate?: number;
  /** Distinct patterns kept per database; further patterns are recorded as `{other}`. @default 1000 */
  maxPatterns?: number;
  /** Pattern templates such as `order:lock:product:{productId}`, tried before the heuristics of `patternOf`. @default [] */
  patterns?: readonly string[];
  /** How long one write waits for another process's write lock (ms). Kept short: it blocks the event loop. @default 100 */
  busyTimeoutMs?: number;
  /** How long `flush()` keeps retrying while another process holds the write lock (ms). @default 5000 */
  flushTimeoutMs?: number;
  /** Called once per kind of failure (the database cannot be opened, a write failed, …). */
  onWarning?: (warning: RecorderWarning) => void;
}

/** Counters of a recorder. At any moment `recorded = written + dropped + pending`. */
export interface RecorderStats {
  /** Samples handed to `record()`. */
  recorded: number;
  /** Samples committed to the database (counted in rollups). */
  written: number;
  /** Of those, samples also stored as raw rows. */
  rawWritten: number;
  /** Samples lost: buffer full, database unwritable, invalid sample, or recorded after `close()`. */
  dropped: number;
  /** Samples waiting in memory. */
  pending: number;
  /** Samples whose pattern went to `{other}` because `maxPatterns` was reached. */
  patternOverflow: number;
}

/** A problem the recorder hit and survived. Reported once per `kind`. */
export interface RecorderWarning {
  kind: 'open-failed' | 'write-failed' | 'buffer-full' | 'invalid-sample' | 'pattern-overflow';
  message: string;
  cause?: unknown;
}

/** The pattern that collects keys once `maxPatterns` is reached. */
export const OVERFLOW_PATTERN = '{other}';

const DEFAULTS = Object.freeze({
  flushIntervalMs: 1000,
  flushBatchSize: 5000,
  maxBufferedSamples: 100_000,
  rawSampleRate: 1,
  maxPatterns: 1000,
  busyTimeoutMs: 100,
  flushTimeoutMs: 5000,
});

// Failures that another try may cure on its own: another process holds the write lock.
const TRANSIENT_CODES = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY']);
const KEY_CACHE_LIMIT = 10_000;
const RETRY_DELAY_MS = 25;

interface RollupDelta {
  patternId: number;
  bucketStartMs: number;
  instanceId: number;
  count: number;
  outcomes: [number, number, number, number];
  threw: number;
  holdSumUs: number;
  waitSumUs: number;
  firstTsMs: number;
  lastTsMs: number;
  hold: Histogram;
  wait: Histogram;
  ttls: Map<number, number>;
}

interface ExistingRollup {
  count: number;
  released: number;
  expired: number;
  not_acquired: number;
  error: number;
  threw: number;
  hold_sum_us: number;
  wait_sum_us: number;
  first_ts_ms: number;
  last_ts_ms: number;
  hold_hist: Buffer;
  wait_hist: Buffer;
  ttl_counts: Buffer;
}

interface Statements {
  insertRaw: Statement;
  insertPattern: Statement;
  selectPattern: Statement;
  countPatterns: Statement;
  insertInstance: Statement;
  selectInstance: Statement;
  selectRollup: Statement;
  upsertRollup: Statement;
}

/**
 * Records lock samples into a SQLite file, cheaply enough to run inside a
 * production service.
 *
 * `record()` only appends to a bounded in-memory queue: it is synchronous, O(1)
 * and never throws. The queue is written in batched transactions on a timer or
 * once `flushBatchSize` samples wait — never on the lock's path. Each batch adds
 * raw rows (optionally sampled) and upserts histogram rollups per
 * (pattern, 10-minute bucket, instance), so analyses never need the raw rows.
 *
 * When the database cannot be written the service is not disturbed: samples are
 * dropped and counted in {@link stats}, and a `warning` event (and
 * `onWarning`) reports each kind of failure once.
 *
 * @example
 * const recorder = new SqliteRecorder({ path: 'ttl-samples.db' });
 * flushOnShutdown(recorder);
 * await withLock(redis, 'order:lock:product:123', work, { ttlMs: 10_000, recorder });
 */
export class SqliteRecorder extends EventEmitter implements SampleRecorder {
  readonly path: string;
  readonly instance: string;

  private readonly options: Required<Omit<SqliteRecorderOptions, 'onWarning' | 'patterns' | 'instance' | 'path'>>;
  private readonly onWarning: ((warning: RecorderWarning) => void) | undefined;
  private readonly templates: CompiledTemplate[];

  private queue: LockSample[] = [];
  private head = 0;
  private recorded = 0;
  private written = 0;
  private rawWritten = 0;
  private dropped = 0;
  private patternOverflow = 0;
  private closed = false;
  private flushScheduled = false;
  private readonly warned = new Set<RecorderWarning['kind']>();
  private readonly timer: NodeJS.Timeout;
  private draining: Promise<void> | undefined;

  private db: Db | undefined;
  private statements: Statements | undefined;
  private readonly patternIds = new Map<string, number>();
  private readonly instanceIds = new Map<string, number>();
  private readonly keyPatterns = new Map<string, string>();

  constructor(options: SqliteRecorderOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw new ConfigError(`Expected SqliteRecorder options to be an object, got \`${String(options)}\``);
    }
    if (typeof options.path !== 'string' || options.path === '') {
      throw new ConfigError(`Expected \`path\` to be a non-empty string, got \`${String(options.path)}\``);
    }
    this.path = options.path;
    this.instance = options.instance ?? `${hostname()}:${process.pid}`;
    if (typeof this.instance !== 'string' || this.instance === '') {
      throw new ConfigError(`Expected \`instance\` to be a non-empty string, got \`${String(options.instance)}\``);
    }
    this.options = {
      flushIntervalMs: positiveInteger('flushIntervalMs', options.flushIntervalMs, DEFAULTS.flushIntervalMs),
      flushBatchSize: positiveInteger('flushBatchSize', options.flushBatchSize, DEFAULTS.flushBatchSize),
      maxBufferedSamples: positiveInteger('maxBufferedSamples', options.maxBufferedSamples, DEFAULTS.maxBufferedSamples),
      maxPatterns: positiveInteger('maxPatterns', options.maxPatterns, DEFAULTS.maxPatterns),
      busyTimeoutMs: nonNegativeInteger('busyTimeoutMs', options.busyTimeoutMs, DEFAULTS.busyTimeoutMs),
      flushTimeoutMs: nonNegativeInteger('flushTimeoutMs', options.flushTimeoutMs, DEFAULTS.flushTimeoutMs),
      rawSampleRate: options.rawSampleRate ?? DEFAULTS.rawSampleRate,
    };
    const rate = this.options.rawSampleRate;
    if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) {
      throw new ConfigError(`Expected \`rawSampleRate\` to be a number from 0 to 1, got \`${String(rate)}\``);
    }
    this.onWarning = options.onWarning;
    this.templates = compileTemplates(options.patterns ?? []);
    this.timer = setInterval(() => this.scheduledFlush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /**
   * Queues one sample. Synchronous, O(1), never throws: when the queue is full
   * or the recorder is closed, the sample is dropped and counted.
   */
  record(sample: LockSample): void {
    try {
      this.recorded++;
      const pending = this.queue.length - this.head;
      if (this.closed || pending >= this.options.maxBufferedSamples) {
        this.dropped++;
        if (!this.closed) this.warnOnce('buffer-full', `Sample buffer full (${pending} samples); dropping samples`);
        return;
      }
      this.queue.push(sample);
      if (pending + 1 >= this.options.flushBatchSize && !this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.scheduledFlush());
      }
    } catch {
      this.dropped++;
    }
  }

  /** Current counters; see {@link RecorderStats}. */
  stats(): RecorderStats {
    return {
      recorded: this.recorded,
      written: this.written,
      rawWritten: this.rawWritten,
      dropped: this.dropped,
      pending: this.queue.length - this.head,
      patternOverflow: this.patternOverflow,
    };
  }

  /**
   * Writes everything recorded so far. Resolves (never rejects) once it is on
   * disk, or once the database has refused it (then it is counted as dropped).
   * Waits for another process's write lock up to `flushTimeoutMs` (what is still
   * pending then stays queued), yielding to the event loop between batches.
   */
  async flush(): Promise<RecorderStats> {
    while (this.draining) await this.draining;
    const target = this.recorded;
    this.draining = this.drainUntil(target).finally(() => {
      this.draining = undefined;
    });
    await this.draining;
    return this.stats();
  }

  /** Flushes, then closes the database. Samples recorded afterwards are dropped and counted. */
  async close(): Promise<RecorderStats> {
    if (!this.closed) {
      clearInterval(this.timer);
      await this.flush();
      this.closed = true;
      this.dropPending();
      this.closeDb();
    }
    return this.stats();
  }

  /**
   * Writes everything and closes, synchronously: for `process.on('exit')` and
   * signal handlers, where no promise will be awaited.
   */
  closeSync(): RecorderStats {
    if (!this.closed) {
      clearInterval(this.timer);
      while (this.queue.length > this.head && this.writeBatch() === 'written');
      this.closed = true;
      this.dropPending();
      this.closeDb();
    }
    return this.stats();
  }

  private scheduledFlush(): void {
    this.flushScheduled = false;
    if (this.draining || this.closed || this.queue.length === this.head) return;
    // Write at most one batch per turn of the event loop, so a burst never blocks it for long.
    const outcome = this.writeBatch();
    if (outcome === 'written' && this.queue.length - this.head >= this.options.flushBatchSize) {
      this.flushScheduled = true;
      setImmediate(() => this.scheduledFlush());
    }
  }

  private async drainUntil(target: number): Promise<void> {
    const deadline = Date.now() + this.options.flushTimeoutMs;
    // Everything recorded before `target` is written or dropped once pending ones are all newer.
    while (this.queue.length > this.head && this.recorded - (this.queue.length - this.head) < target) {
      const outcome = this.writeBatch();
      if (outcome === 'busy') {
        if (Date.now() >= deadline) return;
        await delay(RETRY_DELAY_MS);
      } else {
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  }

  /** Writes one batch from the head of the queue in one transaction. */
  private writeBatch(): 'written' | 'busy' | 'dropped' {
    const end = Math.min(this.queue.length, this.head + this.options.flushBatchSize);
    if (end === this.head) return 'written';
    let opening = !this.db;
    try {
      const db = this.db ?? this.openDb();
      opening = false;
      const { raw, invalid } = this.writeTransaction(db, end);
      this.written += end - this.head - invalid;
      this.rawWritten += raw;
      if (invalid > 0) {
        this.dropped += invalid;
        this.warnOnce('invalid-sample', `Dropped ${invalid} sample(s) without a string key, a known outcome or a finite \`at\``);
      }
      this.advance(end);
      return 'written';
    } catch (error) {
      // The transaction rolled back: ids learned inside it may not exist.
      this.patternIds.clear();
      this.instanceIds.clear();
      if (TRANSIENT_CODES.has((error as { code?: string }).code ?? '')) return 'busy';
      const message = (error as Error).message;
      if (opening) this.warnOnce('open-failed', `Cannot open samples database ${this.path}: ${message}`, error);
      else this.warnOnce('write-failed', `Cannot write samples to ${this.path}: ${message}`, error);
      this.dropBatch(end);
      // The connection may be unusable (file replaced, disk gone); reopen on the next batch.
      this.closeDb();
      return 'dropped';
    }
  }

  private writeTransaction(db: Db, end: number): { raw: number; invalid: number } {
    const s = this.statements!;
    const deltas = new Map<string, RollupDelta>();
    let raw = 0;
    let invalid = 0;
    db.transaction(() => {
      for (let i = this.head; i < end; i++) {
        const sample = this.queue[i];
        if (sample === null || typeof sample !== 'object') {
          invalid++;
          continue;
        }
        const at = sample.at;
        const outcomeCode = Object.hasOwn(OUTCOME_CODE, sample.outcome) ? OUTCOME_CODE[sample.outcome as Outcome] : undefined;
        if (typeof sample.key !== 'string' || outcomeCode === undefined || !Number.isFinite(at)) {
          invalid++;
          continue;
        }
        const patternId = this.patternIdOf(sample);
        const instanceId = this.instanceIdOf(sample.instance ?? this.instance);
        const holdUs = sample.holdMs === undefined ? null : toMicros(sample.holdMs);
        const waitUs = toMicros(sample.waitMs ?? 0);
        const ttlMs = Math.max(0, Math.round(Number(sample.ttlMs) || 0));
        const attempts = Math.max(0, Math.round(Number(sample.attempts ?? 1) || 0));
        const threw = sample.threw ? 1 : 0;
        const tsMs = Math.round(at);

        const rate = this.options.rawSampleRate;
        if (rate >= 1 || Math.random() < rate) {
          s.insertRaw.run(tsMs, sample.key, patternId, instanceId, holdUs, waitUs, attempts, ttlMs, outcomeCode, threw);
          raw++;
        }

        const bucketStartMs = tsMs - (((tsMs % BUCKET_MS) + BUCKET_MS) % BUCKET_MS);
        const id = `${patternId}:${bucketStartMs}:${instanceId}`;
        let delta = deltas.get(id);
        if (!delta) {
          delta = newDelta(patternId, bucketStartMs, instanceId, tsMs);
          deltas.set(id, delta);
        }
        delta.count++;
        delta.outcomes[outcomeCode as 0 | 1 | 2 | 3]++;
        delta.threw += threw;
        delta.waitSumUs += waitUs;
        delta.wait.record(waitUs);
        if (holdUs !== null) {
          delta.holdSumUs += holdUs;
          delta.hold.record(holdUs);
        }
        delta.ttls.set(ttlMs, (delta.ttls.get(ttlMs) ?? 0) + 1);
        if (tsMs < delta.firstTsMs) delta.firstTsMs = tsMs;
        if (tsMs > delta.lastTsMs) delta.lastTsMs = tsMs;
      }
      for (const delta of deltas.values()) this.upsertRollup(delta);
    }).immediate();
    return { raw, invalid };
  }

  private upsertRollup(d: RollupDelta): void {
    const s = this.statements!;
    const existing = s.selectRollup.get(d.patternId, d.bucketStartMs, d.instanceId) as ExistingRollup | undefined;
    if (existing) {
      d.count += existing.count;
      d.outcomes[0] += existing.released;
      d.outcomes[1] += existing.expired;
      d.outcomes[2] += existing.not_acquired;
      d.outcomes[3] += existing.error;
      d.threw += existing.threw;
      d.holdSumUs += existing.hold_sum_us;
      d.waitSumUs += existing.wait_sum_us;
      d.firstTsMs = Math.min(d.firstTsMs, existing.first_ts_ms);
      d.lastTsMs = Math.max(d.lastTsMs, existing.last_ts_ms);
      d.hold.addEncoded(existing.hold_hist);
      d.wait.addEncoded(existing.wait_hist);
      addEncodedCounts(existing.ttl_counts, d.ttls);
    }
    s.upsertRollup.run(
      d.patternId,
      d.bucketStartMs,
      d.instanceId,
      d.count,
      d.outcomes[0],
      d.outcomes[1],
      d.outcomes[2],
      d.outcomes[3],
      d.threw,
      d.holdSumUs,
      d.waitSumUs,
      d.firstTsMs,
      d.lastTsMs,
      d.hold.encode(),
      d.wait.encode(),
      encodeCounts(d.ttls),
    );
  }

  private patternIdOf(sample: LockSample): number {
    let pattern = sample.pattern;
    if (pattern === undefined || pattern === '') {
      pattern = this.keyPatterns.get(sample.key);
      if (pattern === undefined) {
        pattern = resolvePattern(sample.key, this.templates);
        if (this.keyPatterns.size >= KEY_CACHE_LIMIT) this.keyPatterns.clear();
        this.keyPatterns.set(sample.key, pattern);
      }
    }
    const known = this.patternIds.get(pattern);
    if (known !== undefined) return known;
    const s = this.statements!;
    let row = s.selectPattern.get(pattern) as { id: number } | undefined;
    if (!row) {
      const count = (s.countPatterns.get() as { n: number }).n;
      if (count >= this.options.maxPatterns && pattern !== OVERFLOW_PATTERN) {
        this.patternOverflow++;
        this.warnOnce(
          'pattern-overflow',
          `More than ${this.options.maxPatterns} key patterns; further ones are recorded as ${OVERFLOW_PATTERN}`,
        );
        return this.patternIdOf({ ...sample, pattern: OVERFLOW_PATTERN });
      }
      s.insertPattern.run(pattern);
      row = s.selectPattern.get(pattern) as { id: number };
    }
    this.patternIds.set(pattern, row.id);
    return row.id;
  }

  private instanceIdOf(instance: string): number {
    const known = this.instanceIds.get(instance);
    if (known !== undefined) return known;
    const s = this.statements!;
    s.insertInstance.run(instance);
    const row = s.selectInstance.get(instance) as { id: number };
    this.instanceIds.set(instance, row.id);
    return row.id;
  }

  private openDb(): Db {
    const db = openForWriting(this.path, this.options.busyTimeoutMs);
    this.statements = prepareStatements(db);
    this.db = db;
    return db;
  }

  private closeDb(): void {
    const db = this.db;
    this.db = undefined;
    this.statements = undefined;
    this.patternIds.clear();
    this.instanceIds.clear();
    try {
      db?.close();
    } catch {
      // Closing a broken connection can fail; there is nothing left to save.
    }
  }

  private advance(end: number): void {
    this.head = end;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private dropBatch(end: number): void {
    this.dropped += end - this.head;
    this.advance(end);
  }

  private dropPending(): void {
    this.dropBatch(this.queue.length);
  }

  private warnOnce(kind: RecorderWarning['kind'], message: string, cause?: unknown): void {
    if (this.warned.has(kind)) return;
    this.warned.add(kind);
    const warning: RecorderWarning = cause === undefined ? { kind, message } : { kind, message, cause };
    // A throwing listener must not reach the caller of record() or the flush timer.
    try {
      this.onWarning?.(warning);
    } catch {
      /* ignored on purpose */
    }
    try {
      this.emit('warning', warning);
    } catch {
      /* ignored on purpose */
    }
  }
}

function prepareStatements(db: Db): Statements {
  return {
    insertRaw: db.prepare(
      `INSERT INTO raw_samples (ts_ms, key, pattern_id, instance_id, hold_us, wait_us, attempts, ttl_ms, outcome, threw)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertPattern: db.prepare('INSERT OR IGNORE INTO patterns (pattern) VALUES (?)'),
    selectPattern: db.prepare('SELECT id FROM patterns WHERE pattern = ?'),
    countPatterns: db.prepare('SELECT count(*) AS n FROM patterns'),
    insertInstance: db.prepare('INSERT OR IGNORE INTO instances (instance) VALUES (?)'),
    selectInstance: db.prepare('SELECT id FROM instances WHERE instance = ?'),
    selectRollup: db.prepare(
      'SELECT * FROM rollups WHERE pattern_id = ? AND bucket_start_ms = ? AND instance_id = ?',
    ),
    upsertRollup: db.prepare(
      `INSERT OR REPLACE INTO rollups (pattern_id, bucket_start_ms, instance_id, count, released, expired, not_acquired,
         error, threw, hold_sum_us, wait_sum_us, first_ts_ms, last_ts_ms, hold_hist, wait_hist, ttl_counts)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
  };
}

function newDelta(patternId: number, bucketStartMs: number, instanceId: number, tsMs: number): RollupDelta {
  return {
    patternId,
    bucketStartMs,
    instanceId,
    count: 0,
    outcomes: [0, 0, 0, 0],
    threw: 0,
    holdSumUs: 0,
    waitSumUs: 0,
    firstTsMs: tsMs,
    lastTsMs: tsMs,
    hold: new Histogram(),
    wait: new Histogram(),
    ttls: new Map(),
  };
}

function toMicros(ms: number): number {
  const us = Math.round(Number(ms) * 1000);
  return Number.isFinite(us) && us > 0 ? us : 0;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigError(`Expected \`${name}\` to be a positive integer, got \`${String(value)}\``);
  }
  return value;
}

function nonNegativeInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ConfigError(`Expected \`${name}\` to be an integer ≥ 0, got \`${String(value)}\``);
  }
  return value;
}
