import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ConfigError } from '../errors.js';
import { compileTemplates } from '../keys/pattern.js';
import { encodeBatch, transferList } from './batch.js';
import type { LockSample, SampleRecorder } from './sample.js';
import { SHARED, type FromWriter, type ToWriter, type WriterInit } from './writer-protocol.js';
import { WarnOnce, type RecorderWarning } from './warnings.js';
import { fraction, nonNegativeInteger, positiveInteger } from '../validate.js';

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
  /** How long one write waits for another process's write lock before retrying (ms); waits happen on the writer thread. @default 1000 */
  busyTimeoutMs?: number;
  /** How long `flush()`, `close()` and `closeSync()` wait for the disk (ms); what is not written by then is dropped on close. @default 5000 */
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

export type { RecorderWarning } from './warnings.js';

/** The samples file `ttl-advisor report` reads when given no `--db`. */
export const DEFAULT_DB_PATH = 'ttl-samples.db';

const DEFAULTS = Object.freeze({
  flushIntervalMs: 1000,
  flushBatchSize: 5000,
  maxBufferedSamples: 100_000,
  rawSampleRate: 1,
  maxPatterns: 1000,
  busyTimeoutMs: 1000,
  flushTimeoutMs: 5000,
});

// Batches handed to the writer thread and not yet written; bounds memory beyond the queue.
const MAX_BATCHES_IN_FLIGHT = 2;

/**
 * Records lock samples into a SQLite file, cheaply enough to run inside a
 * production service.
 *
 * `record()` only appends to a bounded in-memory queue: synchronous, O(1),
 * never throws. The queue goes in batches (on a timer, or once
 * `flushBatchSize` samples wait) to a writer thread that owns the database, so
 * disk I/O, fsyncs and waits for other writers never run on the service's event
 * loop. Each batch adds raw rows (optionally sampled) and upserts histogram
 * rollups per (pattern, hour, instance) in one transaction.
 *
 * When the database cannot be written the service is not disturbed: samples
 * are dropped and counted in {@link stats}, and a `warning` event (and
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
  private readonly templates: string[];

  private queue: LockSample[] = [];
  private head = 0;
  private recorded = 0;
  /** Dropped on this side: buffer full, invalid, closed, or never acknowledged by the writer. */
  private droppedHere = 0;
  /** Samples handed to the writer thread. */
  private dispatched = 0;
  private inFlightBatches = 0;
  private drainRequested = false;
  private dispatchScheduled = false;
  private closed = false;
  private readonly warnings: WarnOnce;
  private readonly timer: NodeJS.Timeout;
  private readonly waiters = new Set<() => void>();

  private readonly shared = new SharedArrayBuffer(SHARED.bytes);
  private readonly flags = new Int32Array(this.shared, 0, SHARED.flagSlots);
  private readonly totals = new Float64Array(this.shared, SHARED.totalsOffset, SHARED.totalSlots);
  private worker: Worker | undefined;

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
      rawSampleRate: fraction('rawSampleRate', options.rawSampleRate, DEFAULTS.rawSampleRate),
    };
    this.warnings = new WarnOnce(this, options.onWarning);
    this.templates = [...(options.patterns ?? [])];
    compileTemplates(this.templates); // validates now; the writer thread compiles its own
    this.timer = setInterval(() => {
      this.drainRequested = true;
      this.dispatch();
    }, this.options.flushIntervalMs);
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
        this.droppedHere++;
        if (!this.closed) this.warnOnce('buffer-full', `Sample buffer full (${pending} samples); dropping samples`);
        return;
      }
      this.queue.push(sample);
      if (pending + 1 >= this.options.flushBatchSize && !this.dispatchScheduled) {
        this.dispatchScheduled = true;
        setImmediate(() => {
          this.dispatchScheduled = false;
          this.dispatch();
        });
      }
    } catch {
      this.droppedHere++;
    }
  }

  /** Current counters; see {@link RecorderStats}. */
  stats(): RecorderStats {
    Atomics.load(this.flags, SHARED.progress); // orders the reads below after the writer's last update
    const written = this.totals[SHARED.written]!;
    const dropped = this.droppedHere + this.totals[SHARED.dropped]!;
    return {
      recorded: this.recorded,
      written,
      rawWritten: this.totals[SHARED.rawWritten]!,
      dropped,
      pending: this.recorded - written - dropped,
      patternOverflow: this.totals[SHARED.patternOverflow]!,
    };
  }

  /**
   * Writes everything recorded so far. Resolves (never rejects) once it is on
   * disk, once the database has refused it (then it is counted as dropped), or
   * after `flushTimeoutMs` (what is not written yet stays pending).
   */
  async flush(): Promise<RecorderStats> {
    const target = this.recorded;
    const settled = () => this.recorded - this.stats().pending >= target;
    if (!settled()) {
      this.drainRequested = true;
      this.dispatch();
      await this.waitFor(settled, this.options.flushTimeoutMs);
    }
    return this.stats();
  }

  /** Flushes, then closes the database. Samples recorded afterwards are dropped and counted. */
  async close(): Promise<RecorderStats> {
    if (this.closed) return this.stats();
    clearInterval(this.timer);
    const deadline = Date.now() + this.options.flushTimeoutMs;
    this.closed = true;
    this.drainRequested = true;
    this.dispatch();
    await this.waitFor(() => this.queue.length === this.head && this.inFlightBatches === 0, this.options.flushTimeoutMs);
    this.dispatchAll();
    const worker = this.worker;
    if (worker) {
      this.post({ type: 'close', timeoutMs: Math.max(0, deadline - Date.now()) });
      await this.waitFor(() => Atomics.load(this.flags, SHARED.closed) === 1, Math.max(0, deadline - Date.now()) + 100);
    }
    this.settle();
    return this.stats();
  }

  /**
   * Writes everything and closes, blocking the calling thread up to
   * `flushTimeoutMs`: for `process.on('exit')` and signal handlers, where no
   * promise will be awaited.
   */
  closeSync(): RecorderStats {
    if (this.closed && !this.worker) return this.stats();
    clearInterval(this.timer);
    this.closed = true;
    this.dispatchAll();
    if (this.worker) {
      const deadline = Date.now() + this.options.flushTimeoutMs;
      this.post({ type: 'close', timeoutMs: this.options.flushTimeoutMs });
      // The writer runs on its own thread: it keeps writing while this one waits.
      while (Atomics.load(this.flags, SHARED.closed) === 0) {
        const left = deadline - Date.now();
        if (left <= 0) break;
        const seen = Atomics.load(this.flags, SHARED.progress);
        if (Atomics.load(this.flags, SHARED.closed) === 1) break;
        Atomics.wait(this.flags, SHARED.progress, seen, left);
      }
    }
    this.settle();
    return this.stats();
  }

  /** After closing: whatever the writer did not confirm is dropped, and the thread is ended. */
  private settle(): void {
    this.droppedHere += this.queue.length - this.head;
    this.queue = [];
    this.head = 0;
    const unconfirmed = this.dispatched - this.totals[SHARED.written]! - this.totals[SHARED.dropped]!;
    if (unconfirmed > 0) {
      this.droppedHere += unconfirmed;
      this.dispatched -= unconfirmed;
    }
    const worker = this.worker;
    this.worker = undefined;
    if (worker) void worker.terminate().catch(() => undefined);
    this.wakeWaiters();
  }

  /** Hands batches to the writer thread, at most {@link MAX_BATCHES_IN_FLIGHT} at a time. */
  private dispatch(): void {
    while (this.inFlightBatches < MAX_BATCHES_IN_FLIGHT && this.sendBatch(this.drainRequested));
    if (this.queue.length === this.head) this.drainRequested = false;
  }

  /** Hands everything queued to the writer at once (closing: memory no longer matters). */
  private dispatchAll(): void {
    while (this.sendBatch(true));
  }

  private sendBatch(partial: boolean): boolean {
    const pending = this.queue.length - this.head;
    if (pending === 0 || (!partial && pending < this.options.flushBatchSize)) return false;
    const start = this.head;
    const end = start + Math.min(pending, this.options.flushBatchSize);
    let encoded;
    try {
      encoded = encodeBatch(this.queue, start, end);
    } catch {
      encoded = undefined;
    }
    this.advance(end);
    if (!encoded) {
      this.droppedHere += end - start;
      return true;
    }
    if (encoded.invalid > 0) {
      this.droppedHere += encoded.invalid;
      this.warnOnce('invalid-sample', `Dropped ${encoded.invalid} sample(s) without a string key, a known outcome or a finite \`at\``);
    }
    if (encoded.batch.count === 0) return true;
    if (!this.ensureWorker()) {
      this.droppedHere += encoded.batch.count;
      return true;
    }
    this.dispatched += encoded.batch.count;
    this.inFlightBatches++;
    this.post(
      { type: 'batch', batch: encoded.batch, counters: { recorded: this.recorded, droppedBeforeWriter: this.droppedHere } },
      transferList(encoded.batch),
    );
    return true;
  }

  private post(message: ToWriter, transfer: ArrayBuffer[] = []): void {
    this.worker?.postMessage(message, transfer);
  }

  private ensureWorker(): Worker | undefined {
    if (this.worker) return this.worker;
    try {
      const init: WriterInit = {
        path: this.path,
        instance: this.instance,
        rawSampleRate: this.options.rawSampleRate,
        maxPatterns: this.options.maxPatterns,
        busyTimeoutMs: this.options.busyTimeoutMs,
        templates: this.templates,
        shared: this.shared,
      };
      const worker = RUNNING_FROM_SOURCE
        ? new Worker(SOURCE_BOOTSTRAP, { eval: true, workerData: init })
        : new Worker(BUILT_WRITER, { workerData: init });
      worker.unref();
      worker.on('message', (message: FromWriter) => this.onWriterMessage(message));
      worker.on('error', (error) => {
        this.warnOnce('write-failed', `The recorder's writer thread failed: ${error.message}`, error);
      });
      worker.on('exit', () => {
        if (this.worker !== worker) return;
        // Died unexpectedly: what it had not confirmed is lost; a new thread starts with the next batch.
        this.worker = undefined;
        const unconfirmed = this.dispatched - this.totals[SHARED.written]! - this.totals[SHARED.dropped]!;
        this.droppedHere += unconfirmed;
        this.dispatched -= unconfirmed;
        this.inFlightBatches = 0;
        this.wakeWaiters();
      });
      this.worker = worker;
      return worker;
    } catch (error) {
      this.warnOnce('write-failed', `Cannot start the recorder's writer thread: ${(error as Error).message}`, error);
      return undefined;
    }
  }

  private onWriterMessage(message: FromWriter): void {
    if (message.type === 'progress') {
      this.inFlightBatches = Math.max(0, this.inFlightBatches - 1);
      this.dispatch();
    } else if (message.type === 'warning') {
      this.warnOnce(message.warning.kind, message.warning.message);
    }
    this.wakeWaiters();
  }

  private waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        resolve();
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  private wakeWaiters(): void {
    for (const check of [...this.waiters]) check();
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

  private warnOnce(kind: RecorderWarning['kind'], message: string, cause?: unknown): void {
    this.warnings.warn(kind, message, cause);
  }
}

// Built: the compiled writer-thread.js beside this file. Run from TypeScript sources (the tests),
// the .ts is loaded through tsx, registered inside the thread (a worker does not inherit loader hooks).
const BUILT_WRITER = new URL('./writer-thread.js', import.meta.url);
const SOURCE_WRITER = new URL('./writer-thread.ts', import.meta.url);
const RUNNING_FROM_SOURCE = !existsSync(fileURLToPath(BUILT_WRITER)) && existsSync(fileURLToPath(SOURCE_WRITER));
const SOURCE_BOOTSTRAP = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(SOURCE_WRITER.href)}); });`;
