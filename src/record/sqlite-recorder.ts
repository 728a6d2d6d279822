import { EventEmitter } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { compileTemplates } from '../keys/pattern.js';
import { checkSample } from './check-sample.js';
import { Conditions } from './conditions.js';
import { resolveRecorderOptions, type ResolvedRecorderOptions, type SqliteRecorderOptions } from './recorder-options.js';
import { type LockSample, type RecorderStats, type SampleRecorder } from './sample.js';
import { WarnOnce, type RecorderWarning } from './warnings.js';
import { encodeBatch, transferList } from './writer/batch.js';
import { COMMIT, SHARED, type FromWriter, type RecorderCounters, type ToWriter, type WriterInit } from './writer/protocol.js';
import { spawnWriterThread } from './writer/spawn.js';

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

  private readonly options: ResolvedRecorderOptions;
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
  private readonly conditions = new Conditions();

  private readonly shared = new SharedArrayBuffer(SHARED.bytes);
  private readonly flags = new Int32Array(this.shared, 0, SHARED.flagSlots);
  private readonly totals = new Float64Array(this.shared, SHARED.totalsOffset, SHARED.totalSlots);
  private worker: Worker | undefined;

  constructor(options: SqliteRecorderOptions) {
    super();
    const resolved = resolveRecorderOptions(options);
    this.path = resolved.path;
    this.instance = resolved.instance;
    this.options = resolved;
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
   * Queues one sample. Synchronous, O(1), never throws: when the queue is full,
   * the recorder is closed or the sample is invalid (see `SAMPLE_LIMITS`), the
   * sample is dropped and counted, alone.
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
      const checked = checkSample(sample);
      if (typeof checked === 'string') {
        this.droppedHere++;
        this.warnOnce('invalid-sample', `Dropped an invalid sample: ${checked}`);
        return;
      }
      this.queue.push(checked);
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
      await this.conditions.waitFor(settled, this.options.flushTimeoutMs);
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
    await this.conditions.waitFor(() => this.queue.length === this.head && this.inFlightBatches === 0, this.options.flushTimeoutMs);
    this.dispatchAll();
    const worker = this.worker;
    if (worker) {
      this.post({ type: 'close', timeoutMs: Math.max(0, deadline - Date.now()), counters: this.counters() });
      await this.conditions.waitFor(() => Atomics.load(this.flags, SHARED.closed) === 1, Math.max(0, deadline - Date.now()) + 100);
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
      this.post({ type: 'close', timeoutMs: this.options.flushTimeoutMs, counters: this.counters() });
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
    this.stopCommits();
    const unconfirmed = Math.max(0, this.dispatched - this.totals[SHARED.written]! - this.totals[SHARED.dropped]!);
    const lost = this.queue.length - this.head + unconfirmed;
    this.droppedHere += lost;
    this.dispatched -= unconfirmed;
    this.queue = [];
    this.head = 0;
    if (lost > 0) this.warnOnce('write-failed', `Closing gave up after flushTimeoutMs with ${lost} sample(s) not written (file locked or slow); dropped`);
    const worker = this.worker;
    this.worker = undefined;
    if (worker) void worker.terminate().catch(() => undefined);
    this.conditions.recheck();
  }

  /** From now on the writer commits nothing (see COMMIT): what it did not confirm stays off the disk. */
  private stopCommits(): void {
    const deadline = Date.now() + this.options.busyTimeoutMs + 1000;
    while (Atomics.compareExchange(this.flags, SHARED.commit, COMMIT.idle, COMMIT.abandoned) === COMMIT.committing) {
      if (Date.now() >= deadline) break;
      Atomics.wait(this.flags, SHARED.commit, COMMIT.committing, 20);
    }
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
      { type: 'batch', batch: encoded.batch, counters: this.counters() },
      transferList(encoded.batch),
    );
    return true;
  }

  private counters(): RecorderCounters {
    return { recorded: this.recorded, droppedBeforeWriter: this.droppedHere };
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
      const worker = spawnWriterThread(init);
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
        this.conditions.recheck();
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
    this.conditions.recheck();
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
