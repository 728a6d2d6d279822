import { ConfigError } from '../errors.js';
import { fraction, nonNegativeInteger, positiveInteger } from '../validate.js';
import { defaultInstanceId } from './sample.js';
import type { RecorderWarning } from './warnings.js';

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

/** The samples file `ttl-advisor report` reads when given no `--db`. */
export const DEFAULT_DB_PATH = 'ttl-samples.db';

/** Defaults of {@link SqliteRecorderOptions}, frozen. */
export const SQLITE_RECORDER_DEFAULTS = Object.freeze({
  flushIntervalMs: 1000,
  flushBatchSize: 5000,
  maxBufferedSamples: 100_000,
  rawSampleRate: 1,
  maxPatterns: 1000,
  busyTimeoutMs: 1000,
  flushTimeoutMs: 5000,
});

/** Options after validation, with defaults filled in. */
export type ResolvedRecorderOptions = Required<Omit<SqliteRecorderOptions, 'onWarning' | 'patterns'>>;

/** Validates recorder options at the boundary; throws {@link ConfigError} naming the option. */
export function resolveRecorderOptions(options: SqliteRecorderOptions): ResolvedRecorderOptions {
  if (options === null || typeof options !== 'object') {
    throw new ConfigError(`Expected SqliteRecorder options to be an object, got \`${String(options)}\``);
  }
  if (typeof options.path !== 'string' || options.path === '') {
    throw new ConfigError(`Expected \`path\` to be a non-empty string, got \`${String(options.path)}\``);
  }
  const instance = options.instance ?? defaultInstanceId();
  if (typeof instance !== 'string' || instance === '') {
    throw new ConfigError(`Expected \`instance\` to be a non-empty string, got \`${String(options.instance)}\``);
  }
  return {
    path: options.path,
    instance,
    flushIntervalMs: positiveInteger('flushIntervalMs', options.flushIntervalMs, SQLITE_RECORDER_DEFAULTS.flushIntervalMs),
    flushBatchSize: positiveInteger('flushBatchSize', options.flushBatchSize, SQLITE_RECORDER_DEFAULTS.flushBatchSize),
    maxBufferedSamples: positiveInteger('maxBufferedSamples', options.maxBufferedSamples, SQLITE_RECORDER_DEFAULTS.maxBufferedSamples),
    maxPatterns: positiveInteger('maxPatterns', options.maxPatterns, SQLITE_RECORDER_DEFAULTS.maxPatterns),
    busyTimeoutMs: nonNegativeInteger('busyTimeoutMs', options.busyTimeoutMs, SQLITE_RECORDER_DEFAULTS.busyTimeoutMs),
    flushTimeoutMs: nonNegativeInteger('flushTimeoutMs', options.flushTimeoutMs, SQLITE_RECORDER_DEFAULTS.flushTimeoutMs),
    rawSampleRate: fraction('rawSampleRate', options.rawSampleRate, SQLITE_RECORDER_DEFAULTS.rawSampleRate),
  };
}
