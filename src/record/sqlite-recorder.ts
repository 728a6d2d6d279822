import { EventEmitter } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { aggregatorFor, type Aggregator, FOLD } from './aggregator.js';
import { Conditions } from './conditions.js';
import { bindToProcess, loopEndFlush } from './lifetime.js';
import { resolveRecorderOptions, type ResolvedRecorderOptions, type SqliteRecorderOptions } from './recorder-options.js';
import { FOLD_AS_IS, SampleQueue } from './sample-queue.js';
import type { LockSample, ObservationGap, RecorderStats, SampleRecorder } from '../sample/sample.js';
import { WarnOnce } from '../sample/warn-once.js';
import { bindingProblem } from '../store/binding.js';
import { SHARED, stopCommits, waitUntilClosed, type FromWriter, type RecorderCounters, type SealedWrite, type ToWriter, type WriterInit } from './writer/protocol.js';
import { deliverWarnings, endWriterThread, spawnWriterThread } from './writer/spawn.js';
import { SealBuffers } from './writer/wire.js';

const MAX_WRITES_IN_FLIGHT = 2; // seals handed to the writer and not yet written; while it is busy (the file locked, a slow disk) samples keep folding
// Seals are paced by volume too, not only by the timer: a burst is written while it is recorded (each seal costs the writer a transaction and a merge per pattern-hour). A busy writer is asked again RECHECK_EVERY samples later; a seal resets both.
const SEAL_EVERY_SAMPLES = 262_144;
const RECHECK_EVERY = 4096;

/**
 * Records lock samples into a SQLite file, cheaply enough to run inside a
 * production service.
 *
 * `record()` folds the sample, on the calling thread, into its (pattern, hour)
 * aggregate — hold and wait histograms, outcome, TTL and extension counts —
 * and keeps a raw row only when the raw-row budget chooses it: every failed
 * lock (up to `rawFailedPerHour`), each hold entering the hour's slowest, a
 * uniform sample. Synchronous, O(1), allocation-free in the steady state,
 * never throws. On a timer the aggregates' deltas and the raw rows go to a
 * writer thread that owns the database, so disk I/O, fsyncs and waits for
 * other writers never run on the service's event loop, and the writer's work
 * grows with patterns, not with locks. Statistics never depend on the writer
 * keeping up: while it is busy, samples keep folding into the same aggregates.
 *
 * The file is bounded: past `maxDatabaseBytes` raw rows stop (and are counted),
 * rollups go on; `retainMs` prunes old data. When the database cannot be
 * written the service is not disturbed: what is lost is counted in
 * {@link stats}, and a `warning` event (and `onWarning`) reports each kind of
 * failure once.
 *
 * It never keeps the process alive. What it holds is written when the event loop
 * runs dry and when the process exits (the `exit` event); for signals, see `flushOnShutdown`.
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
  private readonly aggregator: Aggregator;
  private readonly queue = new SampleQueue();
  private recorded = 0;
  /** Samples lost to the statistics on this side: invalid, closed, no room, or never confirmed by the writer. */
  private droppedHere = 0;
  /** Raw rows lost on this side (besides the aggregator's own count). */
  private rawDroppedHere = 0;
  /** Samples and raw rows handed to the writer thread. */
  private dispatched = 0;
  private rawDispatched = 0;
  /** Seals posted to the writer (it counts those it is done with in SHARED.batchesDone). */
  private batchesSent = 0;
  /** {@link onVolume} runs when this many samples, or {@link rawAt} raw rows, wait for a seal: the first sample starts the writer. */
  private sealAt = 1;
  private rawAt: number;
  private drainRequested = false;
  private closed = false;
  private readonly warnings: WarnOnce;
  private readonly timer: NodeJS.Timeout;
  private readonly conditions = new Conditions();
  private unbind: () => void = () => undefined;

  private readonly shared = new SharedArrayBuffer(SHARED.bytes);
  private readonly flags = new Int32Array(this.shared, 0, SHARED.flagSlots);
  private readonly totals = new Float64Array(this.shared, SHARED.totalsOffset, SHARED.totalSlots);
  private worker: Worker | undefined;
  private readonly seals = new SealBuffers();

  constructor(options: SqliteRecorderOptions) {
    super();
    const resolved = resolveRecorderOptions(options);
    this.path = resolved.path;
    this.instance = resolved.instance;
    this.options = resolved;
    this.warnings = new WarnOnce(this, options.onWarning);
    this.aggregator = aggregatorFor(resolved.instance, resolved.patterns, resolved);
    this.rawAt = resolved.flushBatchSize;
    this.timer = setInterval(() => {
      this.drainRequested = true;
      this.dispatch();
    }, this.options.flushIntervalMs);
    this.timer.unref();
    this.unbind = bindToProcess({ atLoopEnd: loopEndFlush(this), atExit: () => this.closeSync() }, this);
    if (bindingProblem() !== undefined) process.nextTick(() => this.warnings.warn('open-failed', `Cannot record into ${this.path}: ${bindingProblem()}; samples are counted as dropped until then`));
  }

  /**
   * Folds one sample into its pattern-hour (queued first: see `SampleQueue`). Synchronous, O(1), never
   * throws: an invalid sample (see `SAMPLE_LIMITS`) or one recorded after close is dropped and counted, alone.
   */
  record(sample: LockSample): void {
    this.recorded++;
    let code = this.closed ? FOLD.noRoom : this.queue.take(sample);
    if (code === FOLD_AS_IS) {
      this.foldQueued();
      code = this.aggregator.foldSafely(sample, false);
    } else if (code === FOLD.invalid) this.aggregator.lastRefusal = this.queue.refusal;
    else if (this.queue.full) this.foldQueued();
    if (code !== FOLD.counted) this.refused(code);
    else if (this.aggregator.unsealed + this.queue.length >= this.sealAt || this.aggregator.pendingRawRows >= this.rawAt) this.onVolume();
  }

  /** Folds the queued samples (see `SampleQueue`): before a seal, and before anything reads what they add up to. */
  private foldQueued(): void {
    for (let refused = this.queue.length > 0 ? this.queue.foldInto(this.aggregator) : 0; refused > 0; refused--) this.refused(FOLD.noRoom);
  }

  /** A sample dropped: counted, and reported once per kind (not after close, where dropping is the rule). */
  private refused(code: number): void {
    this.droppedHere++;
    const invalid = code === FOLD.invalid;
    if (!this.closed) this.warnings.warn(invalid ? 'invalid-sample' : 'buffer-full', `${invalid ? 'Dropped an invalid sample' : 'Dropping samples'}: ${this.aggregator.lastRefusal}`);
  }

  /**
   * The first sample starts the writer thread, which opens the file while samples fold; past SEAL_EVERY_SAMPLES samples or
   * `flushBatchSize` raw rows, a seal goes to it at once (a burst on one event-loop turn would wait for the timer or close).
   */
  private onVolume(): void {
    this.foldQueued();
    try {
      if (!this.worker) this.ensureWorker();
      if (this.aggregator.unsealed >= SEAL_EVERY_SAMPLES || this.aggregator.pendingRawRows >= this.options.flushBatchSize) {
        this.drainRequested = true;
        this.dispatch();
      }
    } catch (error) {
      this.warnings.warn('write-failed', `Could not hand samples to the writer: ${(error as Error).message}`, error);
    }
    const { unsealed, pendingRawRows } = this.aggregator;
    this.sealAt = unsealed >= SEAL_EVERY_SAMPLES ? unsealed + RECHECK_EVERY : SEAL_EVERY_SAMPLES;
    this.rawAt = pendingRawRows >= this.options.flushBatchSize ? pendingRawRows + RECHECK_EVERY : this.options.flushBatchSize;
  }

  /** Keeps a gap in what a door saw (`watch`'s lost notifications) for the next write. Never throws. */
  recordGap(gap: ObservationGap): void {
    let kept = false;
    try {
      kept = !this.closed && this.aggregator.addGap(gap);
    } catch {} // a hostile object's getter: refused like any malformed gap
    if (kept) this.drainRequested = true;
    else if (!this.closed) this.warnings.warn('invalid-sample', 'Dropped an invalid (or the 1,001st pending) observation gap');
  }

  /** Current counters; see {@link RecorderStats}. */
  stats(): RecorderStats {
    this.foldQueued(); // what they add up to: the pattern overflow, the samples without room
    Atomics.load(this.flags, SHARED.progress); // orders the reads below after the writer's last update
    const written = this.totals[SHARED.written]!;
    const dropped = this.droppedHere + this.totals[SHARED.dropped]!;
    return {
      recorded: this.recorded,
      written,
      dropped,
      pending: this.recorded - written - dropped,
      rawWritten: this.totals[SHARED.rawWritten]!,
      rawDropped: this.aggregator.rawDropped + this.rawDroppedHere + this.totals[SHARED.rawDropped]!,
      patternOverflow: this.aggregator.patternOverflow + this.totals[SHARED.patternOverflow]!,
    };
  }

  /**
   * Writes everything recorded so far (the hours' uniform samples are written
   * when their hour ends). Resolves (never rejects) once it is on disk, once
   * the database has refused it (then it is counted as dropped), or after
   * `flushTimeoutMs` (what is not written yet stays pending).
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
    this.sendSeal(true);
    const worker = this.worker;
    if (worker) {
      worker.postMessage({ type: 'close', timeoutMs: Math.max(0, deadline - Date.now()), counters: this.counters() } satisfies ToWriter);
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
    this.sendSeal(true);
    if (this.worker) {
      const deadline = Date.now() + this.options.flushTimeoutMs;
      this.worker.postMessage({ type: 'close', timeoutMs: this.options.flushTimeoutMs, counters: this.counters() } satisfies ToWriter);
      // The writer runs on its own thread: it keeps writing while this one waits.
      waitUntilClosed(this.flags, deadline);
    }
    this.settle();
    return this.stats();
  }

  /** After closing: whatever the writer did not confirm is dropped, and the thread is ended. */
  private settle(): void {
    // Only now: an exit during close() still runs closeSync(), which ends the thread safely.
    this.unbind();
    stopCommits(this.flags, Date.now() + this.options.busyTimeoutMs + 1000);
    this.forgetUnconfirmed();
    // Nothing folds after the final seal; anything left unsealed (a seal that failed) is dropped.
    this.droppedHere += this.aggregator.unsealed;
    this.aggregator.unsealed = 0;
    const worker = this.worker;
    this.worker = undefined;
    if (worker) endWriterThread(worker);
    this.conditions.recheck();
  }

  /** What the writer did not confirm is dropped: the thread died, or a close gave up on it. */
  private forgetUnconfirmed(): void {
    const unconfirmed = Math.max(0, this.dispatched - this.totals[SHARED.written]! - this.totals[SHARED.dropped]!);
    const rawUnconfirmed = Math.max(0, this.rawDispatched - this.totals[SHARED.rawWritten]! - this.totals[SHARED.rawDropped]!);
    this.droppedHere += unconfirmed;
    this.dispatched -= unconfirmed;
    this.rawDroppedHere += rawUnconfirmed;
    this.rawDispatched -= rawUnconfirmed;
    if (unconfirmed > 0) {
      this.warnings.warn('write-failed', `${unconfirmed} sample(s) not confirmed by the writer (file locked or slow past flushTimeoutMs, or the writer stopped); dropped`);
    }
  }

  /** On the timer, on `flush()`, or when raw rows pile up: seals and sends, unless the writer already has enough to do. */
  private dispatch(): void {
    // Seals the writer has not finished with, read from shared memory: right even while this thread's event loop is busy.
    if (!this.drainRequested || this.closed || this.batchesSent - Atomics.load(this.flags, SHARED.batchesDone) >= MAX_WRITES_IN_FLIGHT) return;
    this.drainRequested = false;
    this.sendSeal(false);
  }

  /** Seals the aggregates (all hours when `final`) and hands the result to the writer thread. */
  private sendSeal(final: boolean): void {
    let write: SealedWrite;
    this.foldQueued();
    try {
      const { batches, samples } = this.aggregator.seal(Date.now(), final);
      write = { batches, samples, rawRows: batches.reduce((sum, b) => sum + b.raw.length, 0) };
      this.sealAt = SEAL_EVERY_SAMPLES;
      this.rawAt = this.options.flushBatchSize;
    } catch (error) {
      // Not expected: encoding plain numbers. Counted rather than thrown into a timer.
      this.warnings.warn('write-failed', `Could not seal the recorded samples: ${(error as Error).message}`, error);
      return;
    }
    this.aggregator.reportLimits(this.warnings);
    if (write.batches.length === 0) return;
    const worker = this.ensureWorker();
    if (!worker) {
      this.droppedHere += write.samples;
      this.rawDroppedHere += write.rawRows;
      this.aggregator.restoreAliases(write.batches);
      return;
    }
    const wire = this.seals.encode(write, worker);
    this.dispatched += write.samples;
    this.rawDispatched += write.rawRows;
    this.batchesSent++;
    worker.postMessage({ type: 'batch', wire, counters: this.counters() } satisfies ToWriter, wire instanceof ArrayBuffer ? [wire] : []);
  }

  private counters(): RecorderCounters {
    return { recorded: this.recorded, droppedBeforeWriter: this.droppedHere, rawDroppedBeforeWriter: this.aggregator.rawDropped + this.rawDroppedHere };
  }

  private ensureWorker(): Worker | undefined {
    if (this.worker) return this.worker;
    try {
      const { path, instance, maxPatterns, busyTimeoutMs, maxDatabaseBytes, retainMs } = this.options;
      const init: WriterInit = { path, instance, maxPatterns, busyTimeoutMs, maxDatabaseBytes, retainMs, shared: this.shared };
      const worker = spawnWriterThread(init, {
        onMessage: (message) => this.onWriterMessage(message),
        onError: (error) => this.warnings.warn('write-failed', `The recorder's writer thread failed: ${error.message}`, error),
        onExit: () => {
          if (this.worker !== worker) return;
          // Died unexpectedly: what it had not confirmed is lost; a new thread starts with the next seal.
          this.worker = undefined;
          deliverWarnings(worker);
          this.forgetUnconfirmed();
          this.batchesSent = Atomics.load(this.flags, SHARED.batchesDone);
          this.conditions.recheck();
        },
      });
      this.worker = worker;
      return worker;
    } catch (error) {
      this.warnings.warn('write-failed', `Cannot start the recorder's writer thread: ${(error as Error).message}`, error);
      return undefined;
    }
  }

  private onWriterMessage(message: FromWriter): void {
    if (message.type === 'progress') this.dispatch();
    else if (message.type === 'warning') this.warnings.warn(message.warning.kind, message.warning.message);
    this.conditions.recheck();
  }
}
