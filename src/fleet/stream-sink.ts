import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { withDeadline } from '../deadline.js';
import { aggregatorFor, type Aggregator, FOLD } from '../record/aggregator.js';
import type { LockSample, ObservationGap, RecorderStats, SampleRecorder } from '../sample/sample.js';
import { WarnOnce } from '../sample/warn-once.js';
import { resolveSinkOptions, type RedisStreamSinkOptions, type ResolvedSinkOptions } from './sink-options.js';
import { StreamBatcher, carriesStatistics, encodeSealed, type SealedBatch } from './stream-batches.js';
import { appendCommandOf, type AppendCommand, type StreamClient } from './stream-client.js';

/**
 * Sends an instance's samples to a Redis stream, for a fleet: every service
 * instance records into the same stream, and one `ttl-advisor collect` writes
 * them into a central SQLite file.
 *
 * Same contract as `SqliteRecorder`, and the same in-process aggregation:
 * `record()` folds the sample into its (pattern, hour) aggregate and keeps raw
 * rows by the same budget; synchronous, O(1), never throws. On a timer the
 * aggregates' deltas are sent as `XADD … MAXLEN ~ maxLen` entries, one send at
 * a time. When Redis is slow or down, the unsent entry is retried and new
 * samples keep folding into the aggregates, so statistics are not lost while
 * memory allows; sending resumes by itself when Redis returns. Nothing on its
 * timer can throw, and `flush()`/`close()` never wait past `flushTimeoutMs`.
 *
 * @example
 * const sink = new RedisStreamSink(redis, { instance: `api-${process.env.POD_NAME}` });
 * await withLock(redis, key, work, { ttlMs: 10_000, recorder: sink });
 */
export { DEFAULT_STREAM, STREAM_SINK_DEFAULTS } from './sink-options.js';
export type { RedisStreamSinkOptions } from './sink-options.js';

export class RedisStreamSink extends EventEmitter implements SampleRecorder {
  readonly stream: string;
  readonly instance: string;
  private readonly options: ResolvedSinkOptions;
  private readonly aggregator: Aggregator;
  private readonly batcher: StreamBatcher;
  private readonly send: AppendCommand;

  private readonly pending: SealedBatch[] = [];
  private recorded = 0;
  private sent = 0;
  private rawSent = 0;
  private dropped = 0;
  private rawDropped = 0;
  private pendingSamples = 0;
  private closed = false;
  /** The counters last sealed into an entry: an entry with nothing else goes only when they changed. */
  private countersSent = '';
  /** The send loop under way, if any: there is never more than one. */
  private sending: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly warnings: WarnOnce;

  constructor(redis: StreamClient, options: RedisStreamSinkOptions = {}) {
    super();
    this.send = appendCommandOf(redis);
    this.options = resolveSinkOptions(options);
    this.stream = this.options.stream;
    this.instance = this.options.instance;
    this.warnings = new WarnOnce(this, options.onWarning);
    this.aggregator = aggregatorFor(this.instance, this.options.patterns, this.options);
    this.batcher = new StreamBatcher(randomUUID());
    this.timer = setInterval(() => {
      if (!this.sending) void this.flushNow();
    }, this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Folds one sample. Synchronous, O(1), never throws. */
  record(sample: LockSample): void {
    this.recorded++;
    const code = this.aggregator.foldSafely(sample, this.closed);
    if (code === FOLD.counted) return;
    this.dropped++;
    if (this.closed) return;
    if (code === FOLD.invalid) this.warnings.warn('invalid-sample', `Dropped an invalid sample: ${this.aggregator.lastRefusal}`);
    else this.warnings.warn('buffer-full', `Dropping samples: ${this.aggregator.lastRefusal}`);
  }

  /** Keeps a gap in what a door saw (`watch`'s lost notifications) for the next entry. Never throws. */
  recordGap(gap: ObservationGap): void {
    if (this.closed) return;
    let kept = false;
    try {
      kept = this.aggregator.addGap(gap);
    } catch {
      // a hostile object's getter: refused like any malformed gap
    }
    if (!kept) this.warnings.warn('invalid-sample', 'Dropped an invalid (or the 1,001st pending) observation gap');
  }

  /** Counters; `written` counts samples whose entries Redis accepted. `recorded = written + dropped + pending`. */
  stats(): RecorderStats {
    return {
      recorded: this.recorded,
      written: this.sent,
      dropped: this.dropped,
      pending: this.aggregator.unsealed + this.pendingSamples,
      rawWritten: this.rawSent,
      rawDropped: this.rawDropped + this.aggregator.rawDropped,
      patternOverflow: this.aggregator.patternOverflow,
    };
  }

  /** Sends everything recorded so far; resolves (never rejects) once Redis took it, refused it for now, or `flushTimeoutMs` passed. */
  async flush(): Promise<RecorderStats> {
    await this.bounded(this.flushNow());
    return this.stats();
  }

  /**
   * Seals every hour (their uniform samples included), flushes (up to
   * `flushTimeoutMs`), then stops: what Redis did not accept by then is dropped
   * and counted (a send still under way is counted when its reply comes).
   */
  async close(): Promise<RecorderStats> {
    if (!this.closed) {
      clearInterval(this.timer);
      await this.bounded(this.flushNow(true));
      this.stop();
    }
    return this.stats();
  }

  /** No synchronous path to Redis exists: counts what is left as dropped. `flushOnShutdown` calls `close()` first. */
  closeSync(): RecorderStats {
    if (!this.closed) {
      clearInterval(this.timer);
      this.stop();
    }
    return this.stats();
  }

  /** Closes for good: what was not sent is dropped and counted, except the batch a send has under way. */
  private stop(): void {
    this.closed = true;
    const inFlight = this.sending && this.pending.length > 0 ? 1 : 0;
    const abandoned = this.pending.splice(inFlight);
    const samples = abandoned.reduce((sum, b) => sum + b.samples, 0);
    this.pendingSamples -= samples;
    this.dropped += samples + this.aggregator.unsealed;
    this.rawDropped += abandoned.reduce((sum, b) => sum + b.batch.raw.length, 0) + this.aggregator.pendingRawRows;
    this.aggregator.seal(Date.now(), true); // releases the aggregates; what they held is counted above
  }

  private bounded(work: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.flushTimeoutMs)));
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }

  /** One send loop at a time; a flush during a send waits for it, then sends what is new. Never rejects. */
  private flushNow(final = false): Promise<void> {
    const previous = this.sending;
    const run = async () => {
      if (previous) await previous;
      try {
        if (!this.closed) this.seal(final);
        await this.sendPending();
      } catch (error) {
        this.warnings.warn('write-failed', `The stream sink failed: ${(error as Error)?.message ?? String(error)}`, error);
      }
    };
    const next = run().finally(() => {
      if (this.sending === next) this.sending = undefined;
    });
    this.sending = next;
    return next;
  }

  /**
   * Seals the aggregates into entries, unless earlier entries still wait for
   * Redis: then samples keep folding into the aggregates instead of piling up
   * as entries (except at close, when everything is sealed).
   */
  private seal(final: boolean): void {
    if (this.pending.length > 0 && !final) return;
    const { batches: sealed } = this.aggregator.seal(Date.now(), final);
    this.aggregator.reportLimits(this.warnings);
    // The sink's counters travel with its entries, so the collector's file shows what this instance lost.
    const counters = { recorded: this.recorded, dropped: this.dropped, rawDropped: this.rawDropped + this.aggregator.rawDropped };
    const said = `${counters.recorded}:${counters.dropped}:${counters.rawDropped}`;
    if (sealed.length === 0 && said !== this.countersSent && this.recorded > 0) sealed.push({ instance: this.instance, rollups: [], raw: [] });
    this.countersSent = said;
    for (const entry of this.batcher.entries(sealed, counters, this.instance)) {
      this.pending.push(entry);
      this.pendingSamples += entry.samples;
    }
    this.trimPending();
  }

  /**
   * Keeps at most `maxPendingBatches` entries. Raw rows go before statistics,
   * the newest raw-only entries first: one seal of many large keys splits into
   * more entries than the cap even while Redis is healthy, and dropping the
   * oldest entry dropped the one that carries the rollups. An entry with
   * statistics goes only when nothing else is left to drop.
   */
  private trimPending(): void {
    let excess = this.pending.length - this.options.maxPendingBatches;
    if (excess <= 0) return;
    let rows = 0;
    for (let i = this.pending.length - 1; i >= 0 && excess > 0; i--) {
      const entry = this.pending[i]!;
      if (carriesStatistics(entry)) continue;
      this.pending.splice(i, 1);
      rows += entry.batch.raw.length;
      excess--;
    }
    if (rows > 0) {
      this.rawDropped += rows;
      this.warnings.warn('buffer-full', `More stream entries wait than maxPendingBatches (${this.options.maxPendingBatches}); dropped ${rows} raw rows — the rollups still count every lock`);
    }
    for (; excess > 0; excess--) {
      const oldest = this.pending.shift()!;
      this.aggregator.restoreAliases([oldest.batch]);
      this.pendingSamples -= oldest.samples;
      this.dropped += oldest.samples;
      this.rawDropped += oldest.batch.raw.length;
      this.warnings.warn('buffer-full', `Redis has not accepted entries for a while; dropping the oldest (${oldest.samples} samples)`);
    }
  }

  private async sendPending(): Promise<void> {
    while (this.pending.length > 0) {
      const next = this.pending[0]!;
      let fields: string[];
      try {
        fields = encodeSealed(next);
      } catch {
        // Never expected (raw rows are split to stay far below V8's string limit); counted, never thrown.
        this.pending.shift();
        this.pendingSamples -= next.samples;
        this.dropped += next.samples;
        this.rawDropped += next.batch.raw.length;
        this.warnings.warn('write-failed', `Could not encode a batch of ${next.samples} samples for the stream; dropped`);
        continue;
      }
      let accepted = true;
      try {
        await withDeadline(this.send(this.stream, this.options.maxLen, fields), this.options.commandTimeoutMs);
      } catch (error) {
        accepted = false;
        this.warnings.warn('write-failed', `Cannot send samples to Redis stream ${this.stream}: ${(error as Error).message}`, error);
      }
      if (!accepted && !this.closed) return; // kept for the next tick: Redis may be restarting
      this.pending.shift();
      this.pendingSamples -= next.samples;
      if (accepted) {
        this.sent += next.samples;
        this.rawSent += next.batch.raw.length;
      } else {
        this.dropped += next.samples;
        this.rawDropped += next.batch.raw.length;
      }
      if (this.closed) return;
    }
  }
}
