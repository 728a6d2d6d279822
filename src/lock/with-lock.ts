import { CommandTimeoutError, lastResolvers, newPromise, unwatch, watch, type Watched } from '../deadline.js';
import { LockLostError } from '../errors.js';
import type { LockClient } from './client.js';
import type { LockOptions } from './options.js';
import { RedisLock } from './redis-lock.js';
import { isNoScript } from './scripts.js';

/**
 * Runs `fn` while holding the Redis lock on `key`, and releases the lock
 * afterwards, also when `fn` throws. One sample per call goes to
 * `options.recorder`.
 *
 * - Cannot take the lock within the retries: throws `LockNotAcquiredError` (`fn` does not run).
 * - `fn` throws: the lock is released and `fn`'s error is rethrown.
 * - The lock expired while `fn` ran: the sample says `expired`, `onLockLost` is
 *   called, `lock.signal` has aborted, and with `throwOnLockLost` a
 *   `LockLostError` is thrown instead of returning `fn`'s result.
 * - `fn` stopped because `lock.signal` aborted (its I/O threw an `AbortError`): with
 *   `throwOnLockLost`, the `LockLostError` that aborted it; otherwise `fn`'s error.
 * - Redis fails: `LockRedisError` with the cause.
 *
 * @example
 * const order = await withLock(redis, `order:lock:product:${id}`, async (lock) => {
 *   const stock = Number(await redis.get(`stock:${id}`));
 *   if (stock <= 0) throw new OutOfStock(id);
 *   await redis.decr(`stock:${id}`);
 *   return createOrder(id, { signal: lock.signal });
 * }, { ttlMs: 10_000, recorder, retry: { count: 5, delayMs: 200 } });
 */
export function withLock<T>(
  redis: LockClient,
  key: string,
  fn: (lock: RedisLock) => T | Promise<T>,
  options: LockOptions,
): Promise<T> {
  const promise = newPromise<T>();
  const resolve = lastResolvers.resolve as (value: T) => void;
  const reject = lastResolvers.reject;
  let lock: RedisLock;
  try {
    lock = new RedisLock(redis, key, options);
    lock.begin();
  } catch (error) {
    reject(error);
    return promise;
  }
  new LockCycle(lock, fn, options, resolve, reject).start();
  return promise;
}

// What a cycle is waiting for; NOTHING after a timeout, so that the late reply changes nothing.
const NOTHING = 0;
const ACQUIRE = 1;
const SECTION = 2;
const RELEASE = 3;

/**
 * One `withLock` call, step by step: send SET, run `fn`, send the release, settle. Written as callbacks
 * on the replies rather than an async function: its awaits, and a promise per command for its timeout,
 * cost more CPU and memory than the lock's own work. The cycle is its own watchdog node: a command that
 * times out fails the step it was sent for, as a rejected reply would. Uncommon paths (retries, errors)
 * are handed to the async methods of {@link RedisLock}.
 */
class LockCycle<T> implements Watched {
  prev: Watched = this;
  next: Watched = this;
  deadline = 0;
  private waitingFor = NOTHING;
  private result: T | undefined;
  private readonly onReply = (value: unknown): void => this.replied(value);
  private readonly onError = (error: unknown): void => this.rejected(error);

  constructor(
    private readonly lock: RedisLock,
    private readonly fn: (lock: RedisLock) => T | Promise<T>,
    private readonly options: LockOptions,
    private readonly resolve: (value: T) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  start(): void {
    try {
      this.send(ACQUIRE, this.lock.sendAttempt(this.options.signal));
    } catch (error) {
      // An abort before the first attempt, or a client that throws (or returns no promise): a rejection, as from an async function.
      this.reject(error);
    }
  }

  /** The watchdog's verdict, after it stopped watching: the step fails as on a rejected reply, out of the timer. */
  timeOut(): void {
    const step = this.waitingFor;
    this.waitingFor = NOTHING;
    const error = new CommandTimeoutError(this.lock.commandTimeoutMs);
    queueMicrotask(() => this.failed(step, error));
  }

  private send(step: number, pending: Promise<unknown>): void {
    this.waitingFor = step;
    // Watched before `then`: a thenable that answers inside `then` has the step over (and perhaps the next one
    // sent and watched) by the time it returns, so watching after it would watch a finished step, or twice.
    if (this.lock.commandTimeoutMs !== 0) {
      this.deadline = step === ACQUIRE ? this.lock.attemptDeadline : this.lock.releaseDeadline;
      watch(this);
    }
    try {
      void pending.then(this.onReply, this.onError);
    } catch (error) {
      // A client that answered with no promise: the step fails as on a rejected reply (this may run in a reply's callback).
      this.waitingFor = NOTHING;
      return this.failed(step, error);
    }
  }

  private replied(value: unknown): void {
    const step = this.waitingFor;
    if (step === NOTHING) return; // after its timeout
    this.waitingFor = NOTHING;
    if (step === SECTION) {
      this.result = value as T;
      this.release();
      return;
    }
    unwatch(this);
    if (step === ACQUIRE) this.acquired(value);
    else this.released(value);
  }

  private rejected(error: unknown): void {
    const step = this.waitingFor;
    if (step === NOTHING) return; // after its timeout
    this.waitingFor = NOTHING;
    this.failed(step, error);
  }

  private failed(step: number, error: unknown): void {
    if (step === SECTION) return this.sectionFailed(error);
    unwatch(this);
    if (step === RELEASE) return this.releaseFailed(error);
    try {
      this.lock.acquireFailed(error);
    } catch (failure) {
      this.reject(failure);
    }
  }

  private acquired(reply: unknown): void {
    const lock = this.lock;
    const signal = this.options.signal;
    let won: boolean;
    try {
      won = lock.attempted(reply, signal);
    } catch (error) {
      this.reject(error);
      return;
    }
    if (won) return this.run();
    lock.pause(signal).then(() => lock.attemptUntilWon(signal)).then(() => this.run(), this.reject);
  }

  private run(): void {
    let value: T | Promise<T>;
    try {
      value = this.fn(this.lock);
    } catch (error) {
      return this.sectionFailed(error);
    }
    // Only an object can be a promise (or a thenable): anything else is the result now, with no turn to wait.
    if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
      this.waitingFor = SECTION;
      try {
        void Promise.resolve(value).then(this.onReply, this.onError);
      } catch (error) {
        // A promise whose `constructor` or `then` throws: the section failed, as `await` would have it.
        this.waitingFor = NOTHING;
        this.sectionFailed(error);
      }
      return;
    }
    this.result = value;
    this.release();
  }

  private sectionFailed(error: unknown): void {
    afterSectionThrew(this.lock, error, this.options).catch(this.reject);
  }

  private release(): void {
    let pending: Promise<unknown> | undefined;
    try {
      pending = this.lock.sendRelease(false);
    } catch (error) {
      // Not expected (a client's throw or missing promise is a rejected release already): a rejection, never a hang.
      return this.reject(error);
    }
    // Released by `fn` itself: nothing to send.
    if (!pending) return this.end(false);
    this.send(RELEASE, pending);
  }

  private released(deleted: unknown): void {
    let stillHeld: boolean;
    try {
      stillHeld = this.lock.released(deleted);
    } catch (error) {
      this.reject(error);
      return;
    }
    this.end(stillHeld);
  }

  private releaseFailed(error: unknown): void {
    if (isNoScript(error)) {
      this.lock.releaseByEval().then((stillHeld) => this.end(stillHeld), this.reject);
      return;
    }
    let stillHeld: boolean;
    try {
      stillHeld = this.lock.releaseFailed(error);
    } catch (failure) {
      this.reject(failure);
      return;
    }
    this.end(stillHeld);
  }

  private end(stillHeld: boolean): void {
    const lock = this.lock;
    if (!stillHeld && this.options.throwOnLockLost) {
      this.reject(lock.signal.reason instanceof LockLostError ? lock.signal.reason : new LockLostError(lock.key, lock.ttlMs, lock.heldMs));
    } else {
      this.resolve(this.result as T);
    }
  }
}

/** After the critical section threw: releases, and rejects with what the caller needs to see. */
async function afterSectionThrew(lock: RedisLock, error: unknown, options: LockOptions): Promise<never> {
  // The critical section's own error is what the caller needs; a release failure is in the sample.
  await lock.finish(true).catch(() => undefined);
  // Work stopped by lock.signal fails with an AbortError (or the reason itself): say why it was aborted.
  const reason = lock.signal.aborted ? (lock.signal.reason as unknown) : undefined;
  if (options.throwOnLockLost && reason instanceof LockLostError && abortedBy(error, reason)) throw reason;
  throw error;
}

/** Whether `error` is the abort `reason` surfacing: the reason itself, an error caused by it, or an AbortError. */
function abortedBy(error: unknown, reason: Error): boolean {
  return error === reason || (error as { cause?: unknown })?.cause === reason || (error as { name?: string })?.name === 'AbortError';
}
