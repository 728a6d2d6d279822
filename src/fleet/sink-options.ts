import { DEFAULT_MAX_PATTERNS } from '../keys/pattern.js';
import type { RawBudget } from '../record/raw-budget.js';
import { RAW_ROW_DEFAULTS, resolveRawRows, type RawRowOptions } from '../record/recorder-options.js';
import type { RecorderWarning } from '../sample/warn-once.js';
import { defaultInstanceId } from '../token.js';
import { nonEmptyString, optionalStrings, optionsObject, positiveInteger } from '../validate.js';

/** Options of {@link RedisStreamSink}. */
export interface RedisStreamSinkOptions extends RawRowOptions {
  /** The stream to append to. @default 'ttl-advisor:samples' */
  stream?: string;
  /** Identifies this process in the data. @default `${hostname}:${pid}` */
  instance?: string;
  /** How often a batch is sent (ms). @default 5000 */
  flushIntervalMs?: number;
  /** Approximate cap on the stream's length (`XADD … MAXLEN ~`), in entries. @default 100000 */
  maxLen?: number;
  /** Raw rows held in memory waiting for a send; beyond, raw rows are dropped and counted (`rawDropped`), never statistics. @default 50000 */
  maxPendingRawRows?: number;
  /** Stream entries waiting for Redis (while it is down or slow, or after one large seal); beyond this, entries of raw rows only are dropped first (`rawDropped`), an entry with statistics only when nothing else is left (`dropped`). @default 120 */
  maxPendingBatches?: number;
  /** Longest wait for one XADD reply (ms). @default 2000 */
  commandTimeoutMs?: number;
  /** How long `flush()` and `close()` wait for Redis to accept what is pending (ms); they never wait longer. @default 5000 */
  flushTimeoutMs?: number;
  /** Distinct patterns per process; more are sent as `{other}`. @default 1000 */
  maxPatterns?: number;
  /** Pattern templates, tried before the patterns learned from the keys (`KeyPatternMiner`). @default [] */
  patterns?: readonly string[];
  /** Called once per kind of failure. */
  onWarning?: (warning: RecorderWarning) => void;
}

export const DEFAULT_STREAM = 'ttl-advisor:samples';

/** Defaults of {@link RedisStreamSinkOptions}, frozen. */
export const STREAM_SINK_DEFAULTS = Object.freeze({
  stream: DEFAULT_STREAM,
  flushIntervalMs: 5000,
  maxLen: 100_000,
  maxPendingRawRows: 50_000,
  maxPendingBatches: 120,
  commandTimeoutMs: 2000,
  flushTimeoutMs: 5000,
  maxPatterns: DEFAULT_MAX_PATTERNS,
  ...RAW_ROW_DEFAULTS,
});


/** {@link RedisStreamSinkOptions} checked, with their defaults filled in. */
export interface ResolvedSinkOptions {
  stream: string;
  instance: string;
  flushIntervalMs: number;
  maxLen: number;
  maxPendingRawRows: number;
  maxPendingBatches: number;
  commandTimeoutMs: number;
  flushTimeoutMs: number;
  maxPatterns: number;
  budget: RawBudget;
  rawSampleRate: number;
  /** Pattern templates, checked to be strings. */
  patterns: readonly string[];
}

/** Validates {@link RedisStreamSinkOptions} at the boundary; a {@link ConfigError} names the option. */
export function resolveSinkOptions(options: RedisStreamSinkOptions | undefined): ResolvedSinkOptions {
  const o = optionsObject('RedisStreamSink', options, true);
  const d = STREAM_SINK_DEFAULTS;
  const raw = resolveRawRows(o);
  return {
    stream: nonEmptyString('stream', o.stream, d.stream),
    instance: o.instance === undefined ? defaultInstanceId() : nonEmptyString('instance', o.instance),
    flushIntervalMs: positiveInteger('flushIntervalMs', o.flushIntervalMs, d.flushIntervalMs),
    maxLen: positiveInteger('maxLen', o.maxLen, d.maxLen),
    maxPendingRawRows: positiveInteger('maxPendingRawRows', o.maxPendingRawRows, d.maxPendingRawRows),
    maxPendingBatches: positiveInteger('maxPendingBatches', o.maxPendingBatches, d.maxPendingBatches),
    commandTimeoutMs: positiveInteger('commandTimeoutMs', o.commandTimeoutMs, d.commandTimeoutMs),
    flushTimeoutMs: positiveInteger('flushTimeoutMs', o.flushTimeoutMs, d.flushTimeoutMs),
    maxPatterns: positiveInteger('maxPatterns', o.maxPatterns, d.maxPatterns),
    budget: raw.budget,
    rawSampleRate: raw.rawSampleRate,
    patterns: optionalStrings('patterns', o.patterns) ?? [],
  };
}
