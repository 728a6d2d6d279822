import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { withDeadline } from '../deadline.js';
import { ConfigError } from '../errors.js';
import { OVERFLOW_PATTERN, compileTemplates, resolvePattern, type CompiledTemplate } from '../keys/pattern.js';
import { OUTCOME_CODE, defaultInstanceId, type LockSample, type RecorderStats, type SampleRecorder } from '../record/sample.js';
import { checkSample } from '../record/check-sample.js';
import { WarnOnce, type RecorderWarning } from '../record/warnings.js';
import { addSample, bucketStartOf, newDelta, type RollupDelta } from '../store/rollup.js';
import { toMicros } from '../units.js';
import { fraction, positiveInteger } from '../validate.js';
import { appendCommandOf, type AppendCommand, type StreamClient } from './stream-client.js';
import { encodeStreamBatch, type StreamBatch } from './stream-entry.js';

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
  maxPatterns: 1000,
});

const KEY_CACHE_LIMIT = 10_000;

/**
 * Sends an instance's samples to a Redis stream, for a fleet: every service
 * instance records into the same stream, and one `ttl-advisor collect` writes
 * them into a central SQLite file.
 *
 * Same contract as `SqliteRecorder`: `record()` is synchronous, O(1) and never
 * throws; memory is bounded. On a timer the queued samples are folded into
 * rollup deltas per (pattern, hour) plus sampled raw rows, and sent as one
 * `XADD … MAXLEN ~ maxLen` entry. When Redis is slow or down, batches wait (up
 * to `maxPendingBatches`), then the oldest are dropped and counted; sending
 * resumes by itself when Redis returns.
 *
 * @example
 * const sink = new RedisStreamSink(redis, { instance: `api-${process.env.POD_NAME}` });
 * await withLock(redis, key, work, { ttlMs: 10_000, recorder: sink });
 */
export class RedisStreamSink extends EventEmitter implements SampleRecorder {
  readonly stream: string;
  readonly instance: string;
  private readonly epoch = randomUUID();
  private readonly options: { -readonly [K in keyof typeof STREAM_SINK_DEFAULTS]: (typeof STREAM_SINK_DEFAULTS)[K] extends string ? string : number };
  private readonly templates: CompiledTemplate[];

  private queue: LockSample[] = [];
  private readonly pending: { batch: StreamBatch; fields: string[]; samples: number }[] = [];
  private seq = 0;
  private recorded = 0;
  private sent = 0;
  private rawSent = 0;
  private dropped = 0;
  private pendingSamples = 0;
  private patternOverflow = 0;
  private closed = false;
  private sending: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly warnings: WarnOnce;
  private readonly keyPatterns = new Map<string, string>();
  private readonly knownPatterns = new Set<string>();
  private readonly send: AppendCommand;

  constructor(
    redis: StreamClient,
    options: RedisStreamSinkOptions = {},
  ) {
    super();
    this.send = appendCommandOf(redis);
    this.options = {
      stream: options.stream ?? STREAM_SINK_DEFAULTS.stream,
      flushIntervalMs: positiveInteger('flushIntervalMs', options.flushIntervalMs, STREAM_SINK_DEFAULTS.flushIntervalMs),
      rawSampleRate: fraction('rawSampleRate', options.rawSampleRate, STREAM_SINK_DEFAULTS.rawSampleRate),
      maxLen: positiveInteger('maxLen', options.maxLen, STREAM_SINK_DEFAULTS.maxLen),
      maxBufferedSamples: positiveInteger('maxBufferedSamples', options.maxBufferedSamples, STREAM_SINK_DEFAULTS.maxBufferedSamples),
      maxPendingBatches: positiveInteger('maxPendingBatches', options.maxPendingBatches, STREAM_SINK_DEFAULTS.maxPendingBatches),
      commandTimeoutMs: positiveInteger('commandTimeoutMs', options.commandTimeoutMs, STREAM_SINK_DEFAULTS.commandTimeoutMs),
      maxPatterns: positiveInteger('maxPatterns', options.maxPatterns, STREAM_SINK_DEFAULTS.maxPatterns),
    };
    if (typeof this.options.stream !== 'string' || this.options.stream === '') {
      throw new ConfigError(`Expected \`stream\` to be a non-empty string, got \`${String(options.stream)}\``);
    }
    this.stream = this.options.stream;
    this.instance = options.instance ?? defaultInstanceId();
    this.warnings = new WarnOnce(this, options.onWarning);
    this.templates = compileTemplates(options.patterns ?? []);
    this.timer = setInterval(() => void this.flushNow(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Queues one sample. Synchronous, O(1), never throws. */
  record(sample: LockSample): void {
    try {
      this.recorded++;
      if (this.closed || this.queue.length >= this.options.maxBufferedSamples) {
        this.dropped++;
        if (!this.closed) this.warnOnce('buffer-full', `Sample buffer full (${this.queue.length} samples); dropping samples`);
        return;
      }
      const checked = checkSample(sample);
      if (typeof checked === 'string') {
        this.dropped++;
        this.warnOnce('invalid-sample', `Dropped an invalid sample: ${checked}`);
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
      patternOverflow: this.patternOverflow,
    };
  }

  /** Sends everything recorded so far; resolves (never rejects) when Redis accepted it or refused it for now. */
  async flush(): Promise<RecorderStats> {
    await this.flushNow();
    return this.stats();
  }

  /** Flushes, then stops. What Redis did not accept by then is dropped and counted. */
  async close(): Promise<RecorderStats> {
    if (!this.closed) {
      clearInterval(this.timer);
      await this.flushNow();
      this.stop();
    }
    return this.stats();
  }

  /** No synchronous path to Redis exists: counts what is left as dropped. For `flushOnShutdown`. */
  closeSync(): RecorderStats {
    if (!this.closed) {
      clearInterval(this.timer);
      this.stop();
    }
    return this.stats();
  }

  /** Closes for good: what was not sent is dropped and counted. */
  private stop(): void {
    this.closed = true;
    this.dropped += this.queue.length + this.pendingSamples;
    this.queue = [];
    this.pending.length = 0;
    this.pendingSamples = 0;
  }

  private flushNow(): Promise<void> {
    // One send loop at a time; a flush during a send waits for it, then sends what is new.
    const run = async () => {
      if (this.sending) await this.sending.catch(() => undefined);
      this.seal();
      await this.sendPending();
    };
    const next = run().finally(() => {
      if (this.sending === next) this.sending = undefined;
    });
    this.sending = next;
    return next;
  }

  /** Folds the queue into one batch of rollup deltas and sampled raw rows. */
  private seal(): void {
    if (this.queue.length === 0) return;
    const samples = this.queue;
    this.queue = [];
    // pattern → bucket → delta: pattern strings come from the key cache, so their hashes are cached too.
    const deltas = new Map<string, Map<number, RollupDelta<string, string>>>();
    const all: RollupDelta<string, string>[] = [];
    const raw: StreamBatch['raw'] = [];
    let count = 0;
    for (const s of samples) {
      const outcome = s && typeof s === 'object' && typeof s.outcome === 'string' && Object.hasOwn(OUTCOME_CODE, s.outcome) ? OUTCOME_CODE[s.outcome] : -1;
      if (outcome < 0 || typeof s.key !== 'string' || typeof s.at !== 'number' || !Number.isFinite(s.at)) {
        this.dropped++;
        this.warnOnce('invalid-sample', 'Dropped sample(s) without a string key, a known outcome or a finite `at`');
        continue;
      }
      const tsMs = Math.round(s.at);
      const holdUs = s.holdMs === undefined || s.holdMs === null ? -1 : toMicros(s.holdMs);
      const waitUs = toMicros(s.waitMs ?? 0);
      const ttlMs = Math.max(0, Math.round(Number(s.ttlMs)) || 0);
      const attempts = Math.min(1 << 20, Math.max(0, Math.round(Number(s.attempts ?? 1)) || 0));
      const threw = s.threw ? 1 : 0;
      const extensions = Math.min(1 << 30, Math.max(0, Math.round(Number(s.extensions ?? 0)) || 0));
      const pattern = this.patternOf(s);
      const bucket = bucketStartOf(tsMs);
      let byBucket = deltas.get(pattern);
      if (!byBucket) deltas.set(pattern, (byBucket = new Map()));
      let delta = byBucket.get(bucket);
      if (!delta) {
        byBucket.set(bucket, (delta = newDelta(pattern, this.instance, bucket, tsMs)));
        all.push(delta);
      }
      addSample(delta, tsMs, holdUs, waitUs, ttlMs, outcome, threw, extensions);
      if (this.options.rawSampleRate >= 1 || Math.random() < this.options.rawSampleRate) {
        raw.push([tsMs, s.key, pattern, holdUs, waitUs, ttlMs, outcome | (threw << 2) | (attempts * 8), extensions]);
      }
      count++;
    }
    if (count === 0) return;
    const batch: StreamBatch = { instance: this.instance, epoch: this.epoch, seq: ++this.seq, rollups: all, raw };
    this.pending.push({ batch, fields: encodeStreamBatch(batch), samples: count });
    this.pendingSamples += count;
    while (this.pending.length > this.options.maxPendingBatches) {
      const oldest = this.pending.shift()!;
      this.pendingSamples -= oldest.samples;
      this.dropped += oldest.samples;
      this.warnOnce('buffer-full', `Redis has not accepted batches for a while; dropping the oldest (${oldest.samples} samples)`);
    }
  }

  private async sendPending(): Promise<void> {
    while (this.pending.length > 0) {
      const next = this.pending[0]!;
      try {
        await withDeadline(
          this.send(this.stream, this.options.maxLen, next.fields),
          this.options.commandTimeoutMs,
        );
      } catch (error) {
        // Kept for the next tick: Redis may be restarting.
        this.warnOnce('write-failed', `Cannot send samples to Redis stream ${this.stream}: ${(error as Error).message}`, error);
        return;
      }
      this.pending.shift();
      this.pendingSamples -= next.samples;
      this.sent += next.samples;
      this.rawSent += next.batch.raw.length;
    }
  }

  private patternOf(sample: LockSample): string {
    const explicit = sample.pattern;
    if (typeof explicit !== 'string' || explicit === '') {
      // The cache holds the final pattern (after the cap), so a known key costs one lookup.
      const cached = this.keyPatterns.get(sample.key);
      if (cached !== undefined) {
        if (cached === OVERFLOW_PATTERN) this.patternOverflow++;
        return cached;
      }
      const pattern = this.capped(resolvePattern(sample.key, this.templates));
      if (this.keyPatterns.size >= KEY_CACHE_LIMIT) this.keyPatterns.clear();
      this.keyPatterns.set(sample.key, pattern);
      return pattern;
    }
    return this.capped(explicit);
  }

  private capped(pattern: string): string {
    if (this.knownPatterns.has(pattern)) return pattern;
    if (this.knownPatterns.size >= this.options.maxPatterns) {
      this.patternOverflow++;
      this.warnOnce('pattern-overflow', `More than ${this.options.maxPatterns} key patterns; further ones are sent as ${OVERFLOW_PATTERN}`);
      return OVERFLOW_PATTERN;
    }
    this.knownPatterns.add(pattern);
    return pattern;
  }

  private warnOnce(kind: RecorderWarning['kind'], message: string, cause?: unknown): void {
    this.warnings.warn(kind, message, cause);
  }
}
