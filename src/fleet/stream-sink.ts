import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { withDeadline } from '../deadline.js';
import { ConfigError } from '../errors.js';
import { OVERFLOW_PATTERN, compileTemplates } from '../keys/pattern.js';
import { checkSample } from '../record/check-sample.js';
import { defaultInstanceId, type LockSample, type RecorderStats, type SampleRecorder } from '../record/sample.js';
import { WarnOnce, type RecorderWarning } from '../record/warnings.js';
import { fraction, positiveInteger } from '../validate.js';
import { StreamBatcher, type SealedBatch } from './stream-batches.js';
import { appendCommandOf, type AppendCommand, type StreamClient } from './stream-client.js';

/** Options of {@link RedisStreamSink}. */
export interface RedisStreamSinkOptions {
  /** The stream to append to. @default 'ttl-advisor:samples' */
  stream?: string;
  /** Identifies this process in the data. @default `${hostname}:${pid}` */
  instance?: string;
  /** How often a batch is sent (ms). @default 5000 */
  flushIntervalMs?: number;
  /** Fraction [0–1] of samples also sent as raw rows; rollups count every lock. @default 0.01 */
  rawSampleRate?: number;
  /** Approximate cap on the stream's length (`XADD … MAXLEN ~`), in entries. @default 100000 */
  maxLen?: number;
  /** Samples held in memory at most; beyond this, new samples are dropped and counted. @default 100000 */
  maxBufferedSamples?: number;
  /** Batches kept while Redis is down or slow; beyond this the oldest are dropped and counted. @default 120 */
  maxPendingBatches?: number;
  /** Longest wait for one XADD reply (ms). @default 2000 */
  commandTimeoutMs?: number;
  /** How long `flush()` and `close()` wait for Redis to accept what is pending (ms); they never wait longer. @default 5000 */
  flushTimeoutMs?: number;
  /** Distinct patterns per process; more are sent as `{other}`. @default 1000 */
  maxPatterns?: number;
  /** Pattern templates, tried before the heuristics of `patternOf`. @default [] */
  patterns?: readonly string[];
  /** Called once per kind of failure. */
  onWarning?: (warning: RecorderWarning) => void;
}

export const DEFAULT_STREAM = 'ttl-advisor:samples';

/** Defaults of {@link RedisStreamSinkOptions}, frozen. */
export const STREAM_SINK_DEFAULTS = Object.freeze({
  stream: DEFAULT_STREAM,
  flushIntervalMs: 5000,
  rawSampleRate: 0.01,
  maxLen: 100_000,
  maxBufferedSamples: 100_000,
  maxPendingBatches: 120,
  commandTimeoutMs: 2000,
  flushTimeoutMs: 5000,
  maxPatterns: 1000,
});


/**
 * Sends an instance's samples to a Redis stream, for a fleet: every service
 * instance records into the same stream, and one `ttl-advisor collect` writes
 * them into a central SQLite file.
 *
 * Same contract as `SqliteRecorder`: `record()` is synchronous, O(1) and never
 * throws; memory is bounded. On a timer the queued samples are folded into
 * rollup deltas per (pattern, hour) plus sampled raw rows, and sent as
 * `XADD … MAXLEN ~ maxLen` entries, one send at a time. When Redis is slow or
 * down, batches wait (up to `maxPendingBatches`), then the oldest are dropped
 * and counted; sending resumes by itself when Redis returns. Nothing on its
 * timer can throw, and `flush()`/`close()` never wait past `flushTimeoutMs`.
 *
 * @example
 * const sink = new RedisStreamSink(redis, { instance: `api-${process.env.POD_NAME}` });
 * await withLock(redis, key, work, { ttlMs: 10_000, recorder: sink });
 */
export class RedisStreamSink extends EventEmitter implements SampleRecorder {
  readonly stream: string;
  readonly instance: string;
  private readonly options: { -readonly [K in keyof typeof STREAM_SINK_DEFAULTS]: (typeof STREAM_SINK_DEFAULTS)[K] extends string ? string : number };
  private readonly batcher: StreamBatcher;
  private readonly send: AppendCommand;

  private queue: LockSample[] = [];
  private readonly pending: SealedBatch[] = [];
  private recorded = 0;
  private sent = 0;
  private rawSent = 0;
  private dropped = 0;
  private pendingSamples = 0;
  private closed = false;
  /** The send loop under way, if any: there is never more than one. */
  private sending: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly warnings: WarnOnce;

  constructor(redis: StreamClient, options: RedisStreamSinkOptions = {}) {
    super();
    this.send = appendCommandOf(redis);
    const d = STREAM_SINK_DEFAULTS;
    this.options = {
      stream: options.stream ?? d.stream,
      flushIntervalMs: positiveInteger('flushIntervalMs', options.flushIntervalMs, d.flushIntervalMs),
      rawSampleRate: fraction('rawSampleRate', options.rawSampleRate, d.rawSampleRate),
      maxLen: positiveInteger('maxLen', options.maxLen, d.maxLen),
      maxBufferedSamples: positiveInteger('maxBufferedSamples', options.maxBufferedSamples, d.maxBufferedSamples),
      maxPendingBatches: positiveInteger('maxPendingBatches', options.maxPendingBatches, d.maxPendingBatches),
      commandTimeoutMs: positiveInteger('commandTimeoutMs', options.commandTimeoutMs, d.commandTimeoutMs),
      flushTimeoutMs: positiveInteger('flushTimeoutMs', options.flushTimeoutMs, d.flushTimeoutMs),
      maxPatterns: positiveInteger('maxPatterns', options.maxPatterns, d.maxPatterns),
    };
    if (typeof this.options.stream !== 'string' || this.options.stream === '') {
      throw new ConfigError(`Expected \`stream\` to be a non-empty string, got \`${String(options.stream)}\``);
    }
    this.stream = this.options.stream;
    this.instance = options.instance ?? defaultInstanceId();
    this.warnings = new WarnOnce(this, options.onWarning);
    const { rawSampleRate, maxPatterns } = this.options;
    this.batcher = new StreamBatcher(this.instance, randomUUID(), { rawSampleRate, maxPatterns, templates: compileTemplates(options.patterns ?? []) }, () =>
      this.warnings.warn('pattern-overflow', `More than ${maxPatterns} key patterns; further ones are sent as ${OVERFLOW_PATTERN}`),
    );
    // A tick while a send is under way does nothing: sends never chain up behind a slow Redis.
    this.timer = setInterval(() => {
      if (!this.sending) void this.flushNow();
    }, this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Queues one sample. Synchronous, O(1), never throws. */
  record(sample: LockSample): void {
    try {
      this.recorded++;
      if (this.closed || this.queue.length >= this.options.maxBufferedSamples) {
        this.dropped++;
        if (!this.closed) this.warnings.warn('buffer-full', `Sample buffer full (${this.queue.length} samples); dropping samples`);
        return;
      }
      const checked = checkSample(sample);
      if (typeof checked === 'string') {
        this.dropped++;
        this.warnings.warn('invalid-sample', `Dropped an invalid sample: ${checked}`);
        return;
      }
      this.queue.push(checked);
    } catch {
      this.dropped++;
    }
  }

  /** Counters; `written` counts samples whose batch Redis accepted. `recorded = written + dropped + pending`. */
  stats(): RecorderStats {
    return {
      recorded: this.recorded,
      written: this.sent,
      rawWritten: this.rawSent,
      dropped: this.dropped,
      pending: this.queue.length + this.pendingSamples,
      patternOverflow: this.batcher.patternOverflow,
    };
  }

  /** Sends everything recorded so far; resolves (never rejects) once Redis took it, refused it for now, or `flushTimeoutMs` passed. */
  async flush(): Promise<RecorderStats> {
    await this.bounded(this.flushNow());
    return this.stats();
  }

  /**
   * Flushes (up to `flushTimeoutMs`), then stops: what Redis did not accept by
   * then is dropped and counted (a send still under way is counted when its reply comes).
   */
  async close(): Promise<RecorderStats> {
    if (!this.closed) {
      clearInterval(this.timer);
      await this.bounded(this.flushNow());
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
    const samples = this.queue.length + abandoned.reduce((sum, b) => sum + b.samples, 0);
    this.dropped += samples;
    this.pendingSamples -= samples - this.queue.length;
    this.queue = [];
  }

  private bounded(work: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.flushTimeoutMs)));
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }

  /** One send loop at a time; a flush during a send waits for it, then sends what is new. Never rejects. */
  private flushNow(): Promise<void> {
    const previous = this.sending;
    const run = async () => {
      if (previous) await previous;
      try {
        if (!this.closed) this.seal();
        await this.sendPending();
      } catch (error) {
        // Nothing may escape: this runs on a timer inside someone's service.
        this.warnings.warn('write-failed', `The stream sink failed: ${(error as Error)?.message ?? String(error)}`, error);
      }
    };
    const next = run().finally(() => {
      if (this.sending === next) this.sending = undefined;
    });
    this.sending = next;
    return next;
  }

  /** Folds the queue into batches of rollup deltas and sampled raw rows. */
  private seal(): void {
    if (this.queue.length === 0) return;
    const samples = this.queue;
    this.queue = [];
    const { batches, lost } = this.batcher.seal(samples);
    if (lost > 0) {
      this.dropped += lost;
      this.warnings.warn('write-failed', `Could not encode a batch of ${lost} samples for the stream; dropped`);
    }
    for (const sealed of batches) {
      this.pending.push(sealed);
      this.pendingSamples += sealed.samples;
    }
    while (this.pending.length > this.options.maxPendingBatches) {
      const oldest = this.pending.shift()!;
      this.pendingSamples -= oldest.samples;
      this.dropped += oldest.samples;
      this.warnings.warn('buffer-full', `Redis has not accepted batches for a while; dropping the oldest (${oldest.samples} samples)`);
    }
  }

  private async sendPending(): Promise<void> {
    while (this.pending.length > 0) {
      const next = this.pending[0]!;
      let accepted = true;
      try {
        await withDeadline(this.send(this.stream, this.options.maxLen, next.fields), this.options.commandTimeoutMs);
      } catch (error) {
        accepted = false;
        this.warnings.warn('write-failed', `Cannot send samples to Redis stream ${this.stream}: ${(error as Error).message}`, error);
      }
      // Closed meanwhile: this batch was left for this reply to decide; everything else is settled.
      if (!accepted && !this.closed) return; // kept for the next tick: Redis may be restarting
      this.pending.shift();
      this.pendingSamples -= next.samples;
      if (accepted) {
        this.sent += next.samples;
        this.rawSent += next.batch.raw.length;
      } else this.dropped += next.samples;
      if (this.closed) return;
    }
  }
}
