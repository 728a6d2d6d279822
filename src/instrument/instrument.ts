import { ConfigError } from '../errors.js';
import { compileTemplates } from '../keys/pattern.js';
import { safeRecorder } from '../sample/safe-recorder.js';
import type { SampleRecorder } from '../sample/sample.js';
import { WarnOnce } from '../sample/warn-once.js';
import { positiveInteger } from '../validate.js';
import { hookClient, trackerOf } from './hooks.js';
import { LockTracker, type InstrumentStats } from './tracker.js';

export type { InstrumentStats } from './tracker.js';

/** Options of {@link instrument}. */
export interface InstrumentOptions {
  /** Where to record one sample per lock; several as an array. */
  recorder: SampleRecorder | readonly SampleRecorder[];
  /** Pattern templates such as `order:lock:product:{productId}`, tried before the heuristics of `patternOf`. @default [] */
  patterns?: readonly string[];
  /** Which process recorded the samples. @default the recorder's own instance id */
  instance?: string;
  /**
   * A lock whose attempts all failed is given up (`not_acquired`) when no new
   * attempt with the same key and token follows within this window (ms). Make
   * it longer than your lock library's longest pause between retries. @default 5000
   */
  retryWindowMs?: number;
  /**
   * After a held lock's TTL has certainly run out, how long to wait for its
   * holder's release (whose reply gives the true hold time) before recording it
   * `expired` with the TTL as its hold (ms). @default 10000
   */
  expiredGraceMs?: number;
  /** Locks followed at once (held, or being retried); more are counted in `untracked`, with a warning. @default 100000 */
  maxOpenLocks?: number;
  /** Called once when `maxOpenLocks` is reached; without it, a process warning says so. */
  onWarning?: (warning: { kind: 'tracking-full'; message: string }) => void;
}

/** The defaults of {@link InstrumentOptions}. */
export const INSTRUMENT_DEFAULTS = Object.freeze({ retryWindowMs: 5000, expiredGraceMs: 10_000, maxOpenLocks: 100_000 });

/** A handle on an instrumented client: what it saw, and how to stop. */
export interface Instrumentation {
  /** Counters since `instrument()`. */
  stats(): InstrumentStats;
  /**
   * Records what is already certain, takes the wrapper off every client
   * instrumented with the same recorder (their duplicates stop recording), and
   * counts the locks still open as `abandoned`.
   */
  close(): void;
}

const handles = new WeakMap<LockTracker, Instrumentation>();
/** The instrumentation of each recorder (or array of recorders) given: its tracker and how to unhook its clients. */
const groups = new WeakMap<object, { tracker: LockTracker; restores: (() => void)[] }>();

/**
 * Records the locks a Redis client takes, whichever library takes them:
 * node-redlock 4 and 5, redis-semaphore's Mutex, or a hand-written
 * `SET key token NX PX ttl` with a token-checked release. The client is
 * instrumented in place and returned, so one line where it is created is all:
 *
 * ```ts
 * const redis = instrument(new Redis(url), { recorder });
 * const redlock = new Redlock([redis]); // unchanged
 * ```
 *
 * ioredis `Redis`/`Cluster` (5, 6) and node-redis 5 clients and clusters; its
 * `duplicate()`s are instrumented too. Clients instrumented with the same
 * `recorder` share one view of the locks (the first call's options apply), so a
 * node-redlock lock taken on several Redis servers is recorded once. Locks taken
 * by ttl-advisor's own `RedisLock` are left to it (it records them itself).
 */
export function instrument<C extends object>(client: C, options: InstrumentOptions): C {
  if (client === null || typeof client !== 'object') {
    throw new ConfigError(`Expected a Redis client to instrument, got \`${String(client)}\``);
  }
  if (trackerOf(client)) throw new ConfigError('This client is instrumented already: instrument it once, where it is created');
  if (options === null || typeof options !== 'object') throw new ConfigError('Expected options with a `recorder`');
  const recorder = recorderOf(options.recorder);
  if (options.patterns !== undefined && !Array.isArray(options.patterns)) throw new ConfigError('Expected `patterns` to be an array of templates');
  if (options.instance !== undefined && (typeof options.instance !== 'string' || options.instance === '')) {
    throw new ConfigError('Expected `instance` to be a non-empty string');
  }
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function') throw new ConfigError('Expected `onWarning` to be a function');
  // Clients given the same recorder share one view of the locks: node-redlock taking one lock on
  // several Redis servers (its quorum), each through its own client, is one lock.
  const group = groups.get(options.recorder as object);
  if (group) {
    group.restores.push(hookClient(client, group.tracker));
    return client;
  }
  const tracker = newTracker(options, recorder);
  const restores = [hookClient(client, tracker)];
  groups.set(options.recorder as object, { tracker, restores });
  handles.set(tracker, {
    stats: () => tracker.stats(),
    close: () => {
      tracker.close();
      for (const restore of restores.splice(0)) restore();
      groups.delete(options.recorder as object);
    },
  });
  return client;
}

function newTracker(options: InstrumentOptions, recorder: SampleRecorder): LockTracker {
  const warnings = new WarnOnce<'tracking-full'>(undefined, options.onWarning);
  return new LockTracker({
    recorder,
    templates: compileTemplates(options.patterns ?? []),
    instance: options.instance,
    retryWindowMs: positiveInteger('retryWindowMs', options.retryWindowMs, INSTRUMENT_DEFAULTS.retryWindowMs),
    expiredGraceMs: positiveInteger('expiredGraceMs', options.expiredGraceMs, INSTRUMENT_DEFAULTS.expiredGraceMs),
    maxOpenLocks: positiveInteger('maxOpenLocks', options.maxOpenLocks, INSTRUMENT_DEFAULTS.maxOpenLocks),
    onFull: () => {
      if (warnings.has('tracking-full')) return;
      const max = options.maxOpenLocks ?? INSTRUMENT_DEFAULTS.maxOpenLocks;
      warnings.warn('tracking-full', `instrument: ${max} locks open at once; further locks are not recorded (see stats().untracked)`);
    },
  });
}

/** The handle of an instrumented client (or of a duplicate it made); `undefined` when it is not instrumented. */
export function instrumentationOf(client: object): Instrumentation | undefined {
  const tracker = trackerOf(client);
  return tracker && handles.get(tracker);
}

function recorderOf(recorder: InstrumentOptions['recorder'] | undefined): SampleRecorder {
  if (recorder === undefined || (Array.isArray(recorder) && recorder.length === 0)) {
    throw new ConfigError('Expected `recorder`: where to record the locks the client takes');
  }
  return safeRecorder(recorder);
}
