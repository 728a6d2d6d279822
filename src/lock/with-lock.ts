import { LockLostError } from '../errors.js';
import type { LockClient } from './client.js';
import type { LockOptions } from './options.js';
import { RedisLock } from './redis-lock.js';

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
  const lock = await new RedisLock(redis, key, options).acquire();
  let result: T;
  try {
    result = await fn(lock);
  } catch (error) {
    // The critical section's own error is what the caller needs; a release failure is in the sample.
    await lock.finish(true).catch(() => undefined);
    throw error;
  }
  const stillHeld = await lock.finish(false);
  if (!stillHeld && options.throwOnLockLost) {
    throw new LockLostError(key, lock.ttlMs, lock.heldMs);
  }
  return result;
}
