import { expected, integerOption, nonEmptyString, optionalFunction, optionalString, optionsObject } from '../validate.js';
import { MAX_PATTERN_LENGTH } from '../keys/pattern.js';
import { safeRecorder } from '../sample/safe-recorder.js';
import { truncate } from '../text.js';
import { defaultInstanceId, encodeHolder } from '../token.js';
import { MAX_TTL_MS } from '../units.js';
import type { SampleRecorder } from '../sample/sample.js';

/**
 * Where a lock can take its TTL from instead of `ttlMs`: given a key, the TTL
 * and the pattern to record under. A `TtlPolicy` (see `loadTtlPolicy`) is one.
 */
export interface TtlSource {
  /**
   * The TTL, the pattern, and for a lease when to renew it and the hold cap (taken where the lock's options leave them).
   * `matched: false` (an entry's default TTL): the pattern is a guess, and the recorder learns the key's own.
   */
  match(key: string): { ttlMs: number; pattern: string; matched?: boolean; renewEveryMs?: number | undefined; maxHoldMs?: number | undefined };
}

/** How often and how patiently to retry a lock that another holder has. */
export interface RetryOptions {
  /** Retries after the first attempt (so `count + 1` attempts in all). @default 10 */
  count?: number;
  /** Pause between attempts (ms). @default 100 */
  delayMs?: number;
  /** Random extra pause added to each delay, 0 to `jitterMs` (ms); spreads out competing instances. @default 100 */
  jitterMs?: number;
}

/** What `onLockLost` receives when a lock turned out to have expired while held. */
export interface LockLostEvent {
  key: string;
  ttlMs: number;
  /** How long the critical section held (or believed it held) the lock (ms). */
  heldMs: number;
}

/** Options of {@link RedisLock} and {@link withLock}. */
export interface LockOptions {
  /** Time to live of the lock (ms): the longest a crashed holder can block others. Required unless `policy` is given. */
  ttlMs?: number;
  /**
   * Take the TTL from a policy file instead (see `loadTtlPolicy`): the key's
   * entry, or the policy's default. The sample is recorded under the entry's pattern.
   */
  policy?: TtlSource;
  /** Retry policy while another holder has the lock. @default { count: 10, delayMs: 100, jitterMs: 100 } */
  retry?: RetryOptions;
  /** Stop retrying after this long in all (ms); the attempt under way when it passes still gets its reply. @default 10000 */
  acquireTimeoutMs?: number;
  /**
   * Longest wait for any one Redis reply (ms); a slower or dead server becomes a
   * `LockRedisError`. `0` leaves timeouts to the client (ioredis's own
   * `commandTimeout`, or none): the lock then watches no deadline, which saves
   * `withLock` about 30 ns of CPU and 16 B per lock (not worth it), but a hung
   * command waits as long as the client lets it. @default 2000
   */
  commandTimeoutMs?: number;
  /** Where to record one sample per acquisition; several (say a local file and a fleet stream) as an array. @default none */
  recorder?: SampleRecorder | readonly SampleRecorder[];
  /** The key pattern to record under, overriding the recorder's templates and the patterns it learns. */
  pattern?: string;
  /**
   * Names this process in the lock's token (with the acquire time), so that
   * `ttl-advisor locks` shows who holds a lock and since when. @default `${hostname}:${pid}`
   */
  holder?: string;
  /** Draw a fencing token (a counter per key, +1 per acquisition) atomically with the lock. @default false */
  fencing?: boolean;
  /** Called when release finds the lock expired or taken over: the TTL was too short. */
  onLockLost?: (event: LockLostEvent) => void;
  /**
   * Throw `LockLostError` from `withLock` when the lock was lost, even though the
   * critical section completed, or when it ended by the abort of `lock.signal`.
   * Off by default: the work has already happened, and an error could make the
   * caller repeat it. @default false
   */
  throwOnLockLost?: boolean;
  /**
   * Stops waiting for the lock when it aborts: `acquire` rejects with the
   * signal's reason, and a lock won by the attempt in flight is released. It
   * does not end a critical section already running (that is `lock.signal`).
   */
  signal?: AbortSignal;
  /**
   * Keeps extending the lock while it is held: `true` extends by `ttlMs` every
   * `ttlMs / 3`; a number is the interval (ms, below `ttlMs`). Stops on
   * release; when an extension fails, stops and aborts `lock.signal`. Off by
   * default: an extended lock's TTL is no longer its hold budget. @default false
   */
  autoExtend?: boolean | number;
  /**
   * With `autoExtend`, the longest the lock is kept alive by extensions (ms from
   * when it was won): past it no extension is sent, so a hung holder cannot keep
   * the lock for ever. @default 10 × ttlMs
   */
  maxHoldMs?: number;
}

/** Defaults of {@link LockOptions}, frozen. */
export const LOCK_DEFAULTS = Object.freeze({
  retry: Object.freeze({ count: 10, delayMs: 100, jitterMs: 100 }),
  acquireTimeoutMs: 10_000,
  commandTimeoutMs: 2_000,
  fencing: false,
  throwOnLockLost: false,
  autoExtend: false,
  /** `maxHoldMs` defaults to this many TTLs. */
  maxHoldTtls: 10,
});

/** Options after validation, with defaults filled in. */
export interface ResolvedLockOptions {
  ttlMs: number;
  retryCount: number;
  retryDelayMs: number;
  retryJitterMs: number;
  acquireTimeoutMs: number;
  commandTimeoutMs: number;
  recorder: SampleRecorder | undefined;
  pattern: string | undefined;
  /** The holder, encoded for the token. */
  holder: string;
  fencing: boolean;
  onLockLost: ((event: LockLostEvent) => void) | undefined;
  throwOnLockLost: boolean;
  signal: AbortSignal | undefined;
  /** Auto-extension interval (ms), 0 when off. */
  autoExtendMs: number;
  maxHoldMs: number;
}

/**
 * What an options object was resolved from, kept beside the result: options built once and passed to
 * every lock (as they should be) are validated once, and a field changed since is noticed and read again.
 */
class ResolvedFrom {
  // Every option but `policy` (options with one resolve per key), each read by name: a loop over names
  // would make every read a keyed lookup, slower than resolving afresh.
  private readonly ttlMs: unknown;
  private readonly retry: RetryOptions | undefined;
  private readonly retryCount: unknown;
  private readonly retryDelayMs: unknown;
  private readonly retryJitterMs: unknown;
  private readonly acquireTimeoutMs: unknown;
  private readonly commandTimeoutMs: unknown;
  private readonly recorder: unknown;
  private readonly pattern: unknown;
  private readonly holder: unknown;
  private readonly fencing: unknown;
  private readonly onLockLost: unknown;
  private readonly throwOnLockLost: unknown;
  private readonly signal: unknown;
  private readonly autoExtend: unknown;
  private readonly maxHoldMs: unknown;

  constructor(
    readonly options: LockOptions,
    readonly resolved: ResolvedLockOptions,
  ) {
    const o = options;
    this.ttlMs = o.ttlMs;
    this.retry = o.retry;
    this.retryCount = o.retry?.count;
    this.retryDelayMs = o.retry?.delayMs;
    this.retryJitterMs = o.retry?.jitterMs;
    this.acquireTimeoutMs = o.acquireTimeoutMs;
    this.commandTimeoutMs = o.commandTimeoutMs;
    this.recorder = o.recorder;
    this.pattern = o.pattern;
    this.holder = o.holder;
    this.fencing = o.fencing;
    this.onLockLost = o.onLockLost;
    this.throwOnLockLost = o.throwOnLockLost;
    this.signal = o.signal;
    this.autoExtend = o.autoExtend;
    this.maxHoldMs = o.maxHoldMs;
  }

  matches(o: LockOptions): boolean {
    const retry = o.retry;
    return (
      o.ttlMs === this.ttlMs &&
      retry === this.retry &&
      retry?.count === this.retryCount &&
      retry?.delayMs === this.retryDelayMs &&
      retry?.jitterMs === this.retryJitterMs &&
      o.acquireTimeoutMs === this.acquireTimeoutMs &&
      o.commandTimeoutMs === this.commandTimeoutMs &&
      o.recorder === this.recorder &&
      o.pattern === this.pattern &&
      o.holder === this.holder &&
      o.fencing === this.fencing &&
      o.onLockLost === this.onLockLost &&
      o.throwOnLockLost === this.throwOnLockLost &&
      o.signal === this.signal &&
      o.autoExtend === this.autoExtend &&
      o.maxHoldMs === this.maxHoldMs
    );
  }
}

// Every option is compared by ResolvedFrom, or is `policy` (resolved per key): an option added to LockOptions
// and not to ResolvedFrom fails to compile here, rather than going unnoticed on a reused options object.
type ComparedOption = 'ttlMs' | 'retry' | 'acquireTimeoutMs' | 'commandTimeoutMs' | 'recorder' | 'pattern' | 'holder' | 'fencing' | 'onLockLost' | 'throwOnLockLost' | 'signal' | 'autoExtend' | 'maxHoldMs' | 'policy';
const everyOptionCompared: [Exclude<keyof LockOptions, ComparedOption>] extends [never] ? true : never = true;
void everyOptionCompared;

const resolvedOptions = new WeakMap<LockOptions, ResolvedFrom>();
/**
 * The last options object resolved afresh. One is remembered only when it comes back: options spread
 * per call (`{ ...options, recorder }`) are new every time, and remembering each would cost more than
 * it saves. One object is held, whatever the number of locks.
 */
let lastResolvedAfresh: LockOptions | undefined;
/** The options reused last: the next lock mostly comes with the same object, found without a WeakMap lookup. */
let lastReused: ResolvedFrom | undefined;

/** Validates lock options at the boundary; throws {@link ConfigError} naming the option. */
export function resolveLockOptions(options: LockOptions, key: string): ResolvedLockOptions {
  optionsObject('lock', options);
  // A policy resolves per key; anything else per options object, while its fields stay as they were.
  if (options.policy !== undefined && options.ttlMs === undefined) return resolveFresh(options, key);
  const cached = options === lastReused?.options ? lastReused : resolvedOptions.get(options);
  if (cached?.matches(options)) {
    lastReused = cached;
    return cached.resolved;
  }
  const resolved = resolveFresh(options, key);
  if (options === lastResolvedAfresh) resolvedOptions.set(options, new ResolvedFrom(options, resolved));
  else lastResolvedAfresh = options;
  return resolved;
}

function resolveFresh(options: LockOptions, key: string): ResolvedLockOptions {
  let ttlMs: unknown = options.ttlMs;
  let pattern = options.pattern;
  let autoExtend = options.autoExtend;
  let maxHoldMs = options.maxHoldMs;
  if (ttlMs === undefined && options.policy !== undefined) {
    if (typeof options.policy?.match !== 'function') throw expected('policy', 'a TtlPolicy (see loadTtlPolicy)', options.policy);
    const match = options.policy.match(key);
    ttlMs = match.ttlMs;
    // An entry's pattern names the samples; without one, the recorder learns the key's pattern (and renames it as it learns).
    if (match.matched !== false) pattern ??= match.pattern;
    // A lease entry renews the lock and caps the hold, unless the call says otherwise.
    autoExtend ??= match.renewEveryMs;
    maxHoldMs ??= match.maxHoldMs;
  }
  const retry = options.retry ?? LOCK_DEFAULTS.retry;
  if (retry === null || typeof retry !== 'object') throw expected('retry', 'an object', retry);
  const recorder = options.recorder === undefined ? undefined : safeRecorder(options.recorder);
  const onLockLost = optionalFunction('onLockLost', options.onLockLost);
  optionalString('pattern', pattern);
  const validTtlMs = checkTtl(ttlMs);
  const signal = options.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw expected('signal', 'an AbortSignal', signal);
  const autoExtendMs = autoExtendInterval(autoExtend, validTtlMs);
  return {
    ttlMs: validTtlMs,
    retryCount: integerOption('retry.count', retry.count, LOCK_DEFAULTS.retry.count, 0),
    retryDelayMs: integerOption('retry.delayMs', retry.delayMs, LOCK_DEFAULTS.retry.delayMs, 0),
    retryJitterMs: integerOption('retry.jitterMs', retry.jitterMs, LOCK_DEFAULTS.retry.jitterMs, 0),
    acquireTimeoutMs: integerOption('acquireTimeoutMs', options.acquireTimeoutMs, LOCK_DEFAULTS.acquireTimeoutMs, 1),
    commandTimeoutMs: integerOption('commandTimeoutMs', options.commandTimeoutMs, LOCK_DEFAULTS.commandTimeoutMs, 0),
    recorder,
    // Capped here, once per lock, as recorders cap any explicit pattern: the lock's samples skip their check.
    pattern: pattern === undefined ? undefined : truncate(pattern, MAX_PATTERN_LENGTH),
    holder: holderOption(options.holder),
    fencing: options.fencing ?? LOCK_DEFAULTS.fencing,
    onLockLost: onLockLost && ((event) => {
      try {
        onLockLost(event);
      } catch {
        // A failing observer must not turn a completed critical section into an error.
      }
    }),
    throwOnLockLost: options.throwOnLockLost ?? LOCK_DEFAULTS.throwOnLockLost,
    signal,
    autoExtendMs,
    maxHoldMs: integerOption('maxHoldMs', maxHoldMs, LOCK_DEFAULTS.maxHoldTtls * validTtlMs, 1),
  };
}

function autoExtendInterval(value: unknown, ttlMs: number): number {
  if (value === undefined || value === false) return 0;
  if (value === true) return Math.max(1, Math.floor(ttlMs / 3));
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value >= ttlMs) {
    throw expected('autoExtend', `true, false or an interval in ms from 1 to ttlMs − 1 (${ttlMs - 1})`, value);
  }
  return value;
}

/** A {@link ConfigError} unless `ttlMs` is a TTL a lock takes: an integer from 1 to MAX_TTL_MS. */
export function checkTtl(ttlMs: unknown): number {
  return integerOption('ttlMs', ttlMs, undefined, 1, MAX_TTL_MS);
}

// Encoded once: options are resolved per lock, and the holder rarely changes.
let defaultHolder: string | undefined;
let lastHolder: [string, string] | undefined;

function holderOption(holder: unknown): string {
  if (holder === undefined) return (defaultHolder ??= encodeHolder(defaultInstanceId()));
  const name = nonEmptyString('holder', holder, undefined, 200);
  if (lastHolder?.[0] !== name) lastHolder = [name, encodeHolder(name)];
  return lastHolder[1];
}
