import { fraction, integerOption, nonEmptyString, nonNegativeInteger, optionalStrings, optionsObject, positiveInteger } from '../validate.js';
import { DEFAULT_MAX_PATTERNS } from '../keys/pattern.js';
import type { RawBudget } from './raw-budget.js';
import type { RecorderWarning } from '../sample/warn-once.js';
import { defaultInstanceId } from '../token.js';

/**
 * Which raw rows a recorder keeps, per (pattern, hour), on top of the rollups
 * that count every lock. Shared by `SqliteRecorder` and `RedisStreamSink`.
 */
export interface RawRowOptions {
  /** Failed locks (expired, lost, not acquired, error, or the section threw) kept as raw rows per pattern-hour. @default 1000 */
  rawFailedPerHour?: number;
  /** The slowest holds kept per pattern-hour, written when the hour ends (and at close). @default 10 */
  rawSlowestPerHour?: number;
  /** A uniform random sample kept per pattern-hour, written when the hour ends (and at close). @default 40 */
  rawUniformPerHour?: number;
  /** Fraction [0–1] of all locks also kept as raw rows, beyond the budget above. @default 0 */
  rawSampleRate?: number;
}

/** Defaults of {@link RawRowOptions}, frozen. */
export const RAW_ROW_DEFAULTS = Object.freeze({ rawFailedPerHour: 1000, rawSlowestPerHour: 10, rawUniformPerHour: 40, rawSampleRate: 0 });

/** Validates the raw-row options; throws {@link ConfigError} naming the option. */
export function resolveRawRows(options: RawRowOptions): { budget: RawBudget; rawSampleRate: number } {
  const d = RAW_ROW_DEFAULTS;
  return {
    budget: {
      failed: nonNegativeInteger('rawFailedPerHour', options.rawFailedPerHour, d.rawFailedPerHour),
      // Both are held in memory per active pattern-hour: bounded.
      slowest: integerOption('rawSlowestPerHour', options.rawSlowestPerHour, d.rawSlowestPerHour, 0, 10_000),
      uniform: integerOption('rawUniformPerHour', options.rawUniformPerHour, d.rawUniformPerHour, 0, 100_000),
    },
    rawSampleRate: fraction('rawSampleRate', options.rawSampleRate, d.rawSampleRate),
  };
}


/** Options of {@link SqliteRecorder}. */
export interface SqliteRecorderOptions extends RawRowOptions {
  /** The SQLite file to write; created if absent. Several processes may share one file. */
  path: string;
  /** Identifies this process in the data. @default `${hostname}:${pid}` */
  instance?: string;
  /** How often what was folded is written (ms). @default 1000 */
  flushIntervalMs?: number;
  /** A write is scheduled as soon as this many raw rows wait. @default 5000 */
  flushBatchSize?: number;
  /** Raw rows held in memory waiting for the writer; beyond, raw rows are dropped and counted (`rawDropped`), never statistics. @default 50000 */
  maxPendingRawRows?: number;
  /** Distinct patterns kept per process and per database; further patterns are recorded as `{other}`. @default 1000 */
  maxPatterns?: number;
  /** Pattern templates such as `order:lock:product:{productId}`, tried before the patterns learned from the keys (`KeyPatternMiner`). @default [] */
  patterns?: readonly string[];
  /** Past this file size (used pages, bytes) raw rows stop and are counted as dropped; rollups go on. 0: no limit. @default 268435456 (256 MiB) */
  maxDatabaseBytes?: number;
  /** Data older than this (ms) is pruned when the file is opened and every hour after; 0 keeps everything. @default 0 */
  retainMs?: number;
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
  maxPendingRawRows: 50_000,
  maxPatterns: DEFAULT_MAX_PATTERNS,
  maxDatabaseBytes: 256 * 1024 * 1024,
  retainMs: 0,
  busyTimeoutMs: 1000,
  flushTimeoutMs: 5000,
  ...RAW_ROW_DEFAULTS,
});

/** Options after validation, with defaults filled in. */
export interface ResolvedRecorderOptions {
  path: string;
  instance: string;
  flushIntervalMs: number;
  flushBatchSize: number;
  maxPendingRawRows: number;
  maxPatterns: number;
  maxDatabaseBytes: number;
  retainMs: number;
  busyTimeoutMs: number;
  flushTimeoutMs: number;
  budget: RawBudget;
  rawSampleRate: number;
  /** Pattern templates, checked to be strings. */
  patterns: readonly string[];
}

/** Validates recorder options at the boundary; throws {@link ConfigError} naming the option. */
export function resolveRecorderOptions(options: SqliteRecorderOptions): ResolvedRecorderOptions {
  optionsObject('SqliteRecorder', options);
  const d = SQLITE_RECORDER_DEFAULTS;
  return {
    path: nonEmptyString('path', options.path),
    instance: options.instance === undefined ? defaultInstanceId() : nonEmptyString('instance', options.instance),
    flushIntervalMs: positiveInteger('flushIntervalMs', options.flushIntervalMs, d.flushIntervalMs),
    flushBatchSize: positiveInteger('flushBatchSize', options.flushBatchSize, d.flushBatchSize),
    maxPendingRawRows: positiveInteger('maxPendingRawRows', options.maxPendingRawRows, d.maxPendingRawRows),
    maxPatterns: positiveInteger('maxPatterns', options.maxPatterns, d.maxPatterns),
    maxDatabaseBytes: nonNegativeInteger('maxDatabaseBytes', options.maxDatabaseBytes, d.maxDatabaseBytes),
    retainMs: nonNegativeInteger('retainMs', options.retainMs, d.retainMs),
    busyTimeoutMs: nonNegativeInteger('busyTimeoutMs', options.busyTimeoutMs, d.busyTimeoutMs),
    flushTimeoutMs: nonNegativeInteger('flushTimeoutMs', options.flushTimeoutMs, d.flushTimeoutMs),
    ...resolveRawRows(options),
    patterns: optionalStrings('patterns', options.patterns) ?? [],
  };
}
