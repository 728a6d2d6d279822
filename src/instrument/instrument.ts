import { ConfigError } from '../errors.js';
import { WarnOnce } from '../sample/warn-once.js';
import { bullmqWarning } from './bullmq.js';
import { hookClient, trackerOf } from './hooks.js';
import { resolveInstrumentOptions, type InstrumentOptions, type InstrumentWarningKind } from './options.js';
import type { InstrumentStats } from './stats.js';
import { LockTracker } from './tracker.js';

export type { InstrumentStats } from './stats.js';
export type { InstrumentOptions, InstrumentWarningKind } from './options.js';
export { INSTRUMENT_DEFAULTS } from './options.js';

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
  const resolved = resolveInstrumentOptions(options);
  // Clients given the same recorder share one view of the locks: node-redlock taking one lock on
  // several Redis servers (its quorum), each through its own client, is one lock.
  const group = groups.get(options.recorder as object);
  if (group) {
    group.restores.push(hookClient(client, group.tracker));
    return client;
  }
  const tracker = newTracker(resolved);
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

function newTracker(options: ReturnType<typeof resolveInstrumentOptions>): LockTracker {
  const warnings = new WarnOnce<InstrumentWarningKind>(undefined, options.onWarning);
  // A literal, not a spread of `options`: one hidden class for every tracker's options, read on each lock.
  return new LockTracker({
    recorder: options.recorder,
    templates: options.templates,
    instance: options.instance,
    retryWindowMs: options.retryWindowMs,
    expiredGraceMs: options.expiredGraceMs,
    maxOpenLocks: options.maxOpenLocks,
    onFull: () => warnings.warn('tracking-full', `instrument: ${options.maxOpenLocks} locks open at once; further locks are not recorded (see stats().untracked)`),
    // Once per instrumentation (a client, its duplicates and the clients sharing its recorder): a worker runs these scripts all day.
    onBullmq: (stalledKey) => {
      if (!warnings.has('bullmq-scripts')) warnings.warn('bullmq-scripts', bullmqWarning(stalledKey));
    },
  });
}

/** The handle of an instrumented client (or of a duplicate it made); `undefined` when it is not instrumented. */
export function instrumentationOf(client: object): Instrumentation | undefined {
  const tracker = trackerOf(client);
  return tracker && handles.get(tracker);
}
