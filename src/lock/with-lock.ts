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
export async function withLock<T>(
  redis: LockClient,
  key: string,
  fn: (lock: RedisLock) => T | Promise<T>,
  options: LockOptions,
): Promise<T> {
  // lock.acquire() and lock.release(), written out: each async layer costs CPU and memory per lock.
  const lock = new RedisLock(redis, key, options);
  lock.begin();
  const signal = options.signal;
  const attempt = lock.attempt(signal);
  let reply: unknown;
  try {
    reply = await attempt.reply;
  } catch (error) {
    attempt.done();
    lock.acquireFailed(error);
  }
  attempt.done();
  if (!lock.attempted(reply, signal)) {
    await lock.pause(signal);
    await lock.attemptUntilWon(signal);
  }
  let result: T;
  try {
    result = await fn(lock);
  } catch (error) {
    // The critical section's own error is what the caller needs; a release failure is in the sample.
    await lock.finish(true).catch(() => undefined);
    // Work stopped by lock.signal fails with an AbortError (or the reason itself): say why it was aborted.
    const reason = lock.signal.aborted ? (lock.signal.reason as unknown) : undefined;
    if (options.throwOnLockLost && reason instanceof LockLostError && abortedBy(error, reason)) throw reason;
    throw error;
  }
  // lock.finish(false), written out as finish() has it.
  let stillHeld = false;
  const release = lock.releaseCommand(false);
  if (release) {
    let deleted: unknown;
    let replied = false;
    try {
      deleted = await release.reply;
      replied = true;
    } catch (error) {
      release.done();
      stillHeld = isNoScript(error) ? await lock.releaseByEval() : lock.releaseFailed(error);
    }
    if (replied) {
      release.done();
      stillHeld = lock.released(deleted);
    }
  }
  if (!stillHeld && options.throwOnLockLost) {
    throw lock.signal.reason instanceof LockLostError ? lock.signal.reason : new LockLostError(key, lock.ttlMs, lock.heldMs);
  }
  return result;
}

/** Whether `error` is the abort `reason` surfacing: the reason itself, an error caused by it, or an AbortError. */
function abortedBy(error: unknown, reason: Error): boolean {
  return error === reason || (error as { cause?: unknown })?.cause === reason || (error as { name?: string })?.name === 'AbortError';
}
