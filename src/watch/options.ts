import { compileTemplates, type CompiledTemplate } from '../keys/pattern.js';
import { safeRecorder } from '../sample/safe-recorder.js';
import type { SampleRecorder } from '../sample/sample.js';
import { expected, integerOption, nonEmptyString, optionalFunction, optionalStrings, optionsObject, positiveInteger } from '../validate.js';

/** Options of {@link KeyspaceWatcher.start}. */
export interface WatchOptions {
  /** Any node of the Redis (or Cluster: every master is watched). */
  url: string;
  recorder: SampleRecorder | readonly SampleRecorder[];
  /** Glob of the keys to watch (Redis PSUBSCRIBE syntax). @default '*lock*' */
  match?: string;
  /** Watch one database only. @default every database */
  dbIndex?: number;
  /** Pattern templates tried before the patterns learned from the keys (`KeyPatternMiner`). */
  patterns?: readonly string[];
  /** Which process recorded the samples. @default the recorder's */
  instance?: string;
  /**
   * Set the missing notification classes, and restore the previous setting at `stop()` — or, for a watcher
   * killed before it could, at the next configuring watcher's (see configure-marks.ts). @default false
   */
  configure?: boolean;
  /** How long (ms) a configuring watcher that stopped renewing its lease (killed) still counts as running. @default 30000 */
  configureLeaseMs?: number;
  /** Holds followed at once; beyond, dropped and counted. @default 100000 */
  maxOpen?: number;
  /** How long connecting to a node may take (ms). @default 5000 */
  connectTimeoutMs?: number;
  /** Something happened the operator should know: a node lost or back, the topology changed. */
  onNotice?: (message: string) => void;
}

/** Defaults of {@link WatchOptions}, frozen. */
export const WATCH_DEFAULTS = Object.freeze({ match: '*lock*', maxOpen: 100_000, connectTimeoutMs: 5000, configureLeaseMs: 30_000 });

/** The database indexes Redis accepts (`databases` is at most 2^31 in practice; 16 by default). */
export const MAX_DB_INDEX = 2 ** 31 - 1;

/** {@link WatchOptions} checked, with their defaults filled in. */
export interface ResolvedWatchOptions {
  url: string;
  recorder: SampleRecorder;
  /** The recorders as given: gaps go to those that keep them. */
  recorders: readonly SampleRecorder[];
  match: string;
  dbIndex: number | undefined;
  templates: readonly CompiledTemplate[];
  instance: string | undefined;
  configure: boolean;
  configureLeaseMs: number;
  maxOpen: number;
  connectTimeoutMs: number;
  onNotice: ((message: string) => void) | undefined;
}

/** Validates {@link WatchOptions} at the boundary; a {@link ConfigError} names the option. */
export function resolveWatchOptions(options: WatchOptions): ResolvedWatchOptions {
  optionsObject('watch', options);
  const d = WATCH_DEFAULTS;
  if (options.configure !== undefined && typeof options.configure !== 'boolean') throw expected('configure', 'true or false', options.configure);
  return {
    url: nonEmptyString('url', options.url),
    recorder: safeRecorder(options.recorder),
    recorders: Array.isArray(options.recorder) ? [...(options.recorder as readonly SampleRecorder[])] : [options.recorder as SampleRecorder],
    match: nonEmptyString('match', options.match, d.match),
    dbIndex: options.dbIndex === undefined ? undefined : integerOption('dbIndex', options.dbIndex, undefined, 0, MAX_DB_INDEX),
    templates: compileTemplates(optionalStrings('patterns', options.patterns) ?? []),
    instance: options.instance === undefined ? undefined : nonEmptyString('instance', options.instance),
    configure: options.configure ?? false,
    configureLeaseMs: positiveInteger('configureLeaseMs', options.configureLeaseMs, d.configureLeaseMs),
    maxOpen: positiveInteger('maxOpen', options.maxOpen, d.maxOpen),
    connectTimeoutMs: positiveInteger('connectTimeoutMs', options.connectTimeoutMs, d.connectTimeoutMs),
    onNotice: noticeThatNeverThrows(optionalFunction('onNotice', options.onNotice)),
  };
}

/** The operator's callback, wrapped once: a throwing one must not reach a socket handler, a timer or a reconnect. */
function noticeThatNeverThrows(onNotice: ((message: string) => void) | undefined): ((message: string) => void) | undefined {
  return (
    onNotice &&
    ((message) => {
      try {
        onNotice(message);
      } catch {
        // ignored on purpose
      }
    })
  );
}
