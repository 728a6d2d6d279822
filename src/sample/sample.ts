/**
 * How one lock acquisition ended.
 * - `released`: the lock was won, the critical section ran, and we released our own token.
 * - `expired`: the lock was won but its TTL ran out before release (it was lost while in use).
 * - `not_acquired`: another holder kept the lock through every retry.
 * - `error`: Redis failed or timed out.
 * - `lost`: the key vanished before its TTL could have run out (by the holder's
 *   monotonic clock): deleted by someone else, or lost by Redis (a restart without
 *   persistence, a failover). Not a TTL that was too short, so not counted as one.
 */
export type Outcome = 'released' | 'expired' | 'not_acquired' | 'error' | 'lost';

/** The outcomes in the order of their integer codes. */
export const OUTCOMES: readonly Outcome[] = Object.freeze(['released', 'expired', 'not_acquired', 'error', 'lost']);

/** A count per outcome, each 0: a fresh object each call, since its counts are then added to (written out, so every one has one shape). */
export function zeroOutcomeCounts(): Record<Outcome, number> {
  return { released: 0, expired: 0, not_acquired: 0, error: 0, lost: 0 };
}

/** Integer code of each outcome (in a raw row: `flags & 3`, with `lost` stored as 1 plus `raw_samples.lost`). */
export const OUTCOME_CODE: Readonly<Record<Outcome, number>> = Object.freeze({
  released: 0,
  expired: 1,
  not_acquired: 2,
  error: 3,
  lost: 4,
});

/**
 * One lock acquisition, as handed to a recorder. Durations are milliseconds and
 * may be fractional (they are stored as integer microseconds).
 */
export interface LockSample {
  /** The concrete lock key, e.g. `order:lock:product:123`. */
  key: string;
  /** The key pattern; derived from `key` by the recorder when absent. */
  pattern?: string | undefined;
  /** Wall-clock time the acquisition started, epoch ms. */
  at: number;
  /** Time the lock was held, from won to released (ms). Absent when it was never won. */
  holdMs?: number | undefined;
  /**
   * Time spent waiting for the lock, first attempt to won (or to giving up) (ms);
   * `null` when it could not be measured (`watch` sees no attempts): then the
   * report says the wait is unknown rather than zero. @default 0
   */
  waitMs?: number | null | undefined;
  /** Number of SET NX attempts made. @default 1 */
  attempts?: number | undefined;
  /** The TTL the lock was taken with (ms). */
  ttlMs: number;
  outcome: Outcome;
  /** Whether the critical section threw. @default false */
  threw?: boolean | undefined;
  /** Which process recorded it; the recorder's own instance id when absent. */
  instance?: string | undefined;
  /** How many times the lock was extended while held (then its TTL was not its hold budget). @default 0 */
  extensions?: number | undefined;
  /**
   * The hold's end was not seen (`watch`: the key expired; `instrument`: the holder never
   * released it): `holdMs` is how long it was seen held (its TTL) and the true hold is at
   * least that. Percentiles that reach such holds are lower bounds. Only with `holdMs`. @default false
   */
  censored?: boolean | undefined;
  /**
   * The key's pattern was never seen released (`watch`): a lock whose every hold outlives
   * its TTL, or a cache the lock glob also matches. Counted apart (reports name such
   * patterns in a section of their own) until a release on the pattern confirms it a lock;
   * then these join its statistics. @default false
   */
  unconfirmed?: boolean | undefined;
  /**
   * The hold was a lease — renewed while held (BullMQ's job lock, node-redlock's `using()`,
   * redis-semaphore's refresh, Redisson's watchdog, `withLock`'s `autoExtend`) — and how its
   * renewals came. Present on every hold the door knows was meant to be renewed, even one that
   * ended before its first renewal (then `gapsMs` is empty).
   */
  renewal?: RenewalTimings | undefined;
}

/** Libraries whose renewals a door can recognize; a renewed lock's advice is given in its words. */
export const LEASE_LIBRARIES = Object.freeze(['unknown', 'ttl-advisor', 'bullmq', 'redlock', 'redis-semaphore', 'redisson', 'redis-py'] as const);
export type LeaseLibrary = (typeof LEASE_LIBRARIES)[number];

/** Renewal gaps a sample carries at most; a door keeps the first ones, and `minMarginMs` covers them all. */
export const MAX_RENEWAL_GAPS = 256;

/** How a lease's renewals came. All durations in ms, by the door's monotonic clock. */
export interface RenewalTimings {
  /**
   * Each renewal's gap from the one before (the first: from when the lock was won), in order;
   * at most {@link MAX_RENEWAL_GAPS} (the first ones).
   */
  gapsMs: readonly number[];
  /**
   * The renewal period the holder meant, where the library's is known (BullMQ: `lockDuration / 2`,
   * `autoExtend`'s interval): a renewal's lateness is its gap − this. Absent, reports infer it per
   * pattern from the median gap.
   */
  periodMs?: number | undefined;
  /**
   * The least time left at a renewal: the TTL in force − the time since the acquire or renewal that
   * set it. 0 or less: a renewal came too late (the lock had run out); a renewed hold that expired
   * unrenewed has 0 or less too.
   */
  minMarginMs: number;
  /** The slowest renewal, sent → answered; absent where it is not seen (`watch`). */
  maxRoundTripMs?: number | undefined;
  /** The longest the holder's event loop was blocked while it held the lock (`withLock` with `autoExtend`). */
  maxLoopDelayMs?: number | undefined;
  /** The library whose renewals these are, where the door recognized it. @default 'unknown' */
  library?: LeaseLibrary | undefined;
}

/** Counters of a recorder. At any moment `recorded = written + dropped + pending`. */
export interface RecorderStats {
  /** Samples handed to `record()`. */
  recorded: number;
  /** Samples counted in committed rollups (in a stream sink: in entries Redis accepted). */
  written: number;
  /** Samples lost to the statistics: invalid, recorded after `close()`, no room for a new pattern-hour, or the file unwritable. */
  dropped: number;
  /** Samples folded in memory, not written yet. */
  pending: number;
  /** Raw rows written: the ones the raw-row budget (and `rawSampleRate`) chose. */
  rawWritten: number;
  /** Raw rows chosen but not written: no room while waiting, the file at `maxDatabaseBytes`, or unwritable. Statistics are unaffected. */
  rawDropped: number;
  /** Samples whose pattern went to `{other}` because `maxPatterns` was reached. */
  patternOverflow: number;
}

/**
 * A stretch of time in which a door could not see every lock: `watch`'s
 * subscriber was disconnected (by Redis's pubsub output-buffer limit, a
 * restart, the network), so the notifications of that time are lost. Counts
 * of the hours it touches are lower bounds, and reports say so.
 */
export interface ObservationGap {
  /** What was not seen: a watched node, `host:port`; for `open-limit`, the limit (`--max-open 100000`). */
  source: string;
  /** Epoch ms from which notifications may have been lost (up to then, every notification published had been read). */
  fromMs: number;
  /** Epoch ms at which the door saw again (resubscribed), or stopped. */
  toMs: number;
  /** Why, as far as the door could tell. */
  reason: GapReason;
  /** Locks held at the loss whose end will not be seen (not recorded); for `open-limit`, the locks not recorded while it lasted. */
  openHolds: number;
  /** Which process saw the gap; the recorder's own instance id when absent. */
  instance?: string | undefined;
}

/**
 * - `output-buffer-limit`: Redis closed the subscriber while it stayed up: most likely the pubsub
 *   output-buffer limit (notifications came faster than they were read);
 * - `connection-lost`: the connection dropped and Redis did not answer (down, restarted, network);
 * - `stopped-while-down`: the watcher stopped before it could subscribe again;
 * - `open-limit`: the watcher followed its most open locks (`maxOpen`) and recorded no new one until
 *   one ended (`openHolds`: the locks it did not record meanwhile).
 */
export type GapReason = 'output-buffer-limit' | 'connection-lost' | 'stopped-while-down' | 'open-limit';

/**
 * Anything a door (the lock, `instrument`, `watch`) reports its samples to.
 * `record` must be synchronous and should not throw; the doors call it through
 * {@link safeRecorder}, which catches what it throws (or a promise it rejects).
 * A recorder that can keep gaps (`SqliteRecorder`, `RedisStreamSink`) has
 * `recordGap`, with the same contract.
 */
export interface SampleRecorder {
  record(sample: LockSample): void;
  recordGap?(gap: ObservationGap): void;
}
