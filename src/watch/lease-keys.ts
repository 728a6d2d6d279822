import { MAX_PATTERN_LENGTH, escapeBraces } from '../keys/pattern.js';
import type { LeaseLibrary } from '../sample/sample.js';
import { truncate } from '../text.js';

/**
 * The lease libraries `watch` tells apart with no configuration: BullMQ by its
 * keys, Redisson by the command that takes its lock (a hash, HINCRBY then
 * PEXPIRE in one script). Others renewed (redis-py's `Lock.extend()`, anything
 * that re-SETs or PEXPIREs a held key) are leases of an `unknown` library.
 */

/** BullMQ's prefix (its default; a custom one is not recognized). */
const BULLMQ_PREFIX = 'bull:';
/** BullMQ's job lock, `bull:<queue>:<jobId>:lock`: neither a queue name nor a job id may hold a `:`. */
const BULLMQ_LOCK = /^bull:([^:]+):[^:]+:lock$/;
/** Redisson's unlock latches (`redisson_unlock_latch:{lock}:…`, SET PX at each unlock): never locks, though `*lock*` matches them. */
const REDISSON_UNLOCK_LATCH = 'redisson_unlock_latch';

/**
 * Keys of a lease library that are not locks, though they are set with a TTL and deleted: under BullMQ's
 * prefix every key but a job lock (its `stalled-check`, its de-duplication keys `de:<id>` and `dn:<id>`,
 * and the job hashes its scripts HINCRBY), and Redisson's unlock latches.
 */
export function isLibraryNonLock(key: string): boolean {
  if (key.startsWith(REDISSON_UNLOCK_LATCH)) return true;
  return key.startsWith(BULLMQ_PREFIX) && !BULLMQ_LOCK.test(key);
}

/**
 * The library whose lock a hold is, from its key and the event that opened it (`set` or `hincrby`), or
 * `undefined` when it cannot be told (then a renewed hold is an `unknown` library's).
 */
export function leaseLibraryOf(key: string, event: 'set' | 'hincrby'): LeaseLibrary | undefined {
  if (event === 'hincrby') return 'redisson';
  return key.startsWith(BULLMQ_PREFIX) && BULLMQ_LOCK.test(key) ? 'bullmq' : undefined;
}

/**
 * `bull:<queue>:{id}:lock` for a BullMQ job lock whatever its job id (a custom id such as `order-7` would
 * keep a word of it, and a queue name its digits would lose), its queue name's braces doubled (a hash
 * tag's); else undefined. `watch` names a key by the first matching template, then this, then learns it.
 */
export function bullmqPatternOf(key: string): string | undefined {
  const bull = key.startsWith(BULLMQ_PREFIX) ? BULLMQ_LOCK.exec(key) : null;
  return bull ? truncate(`bull:${escapeBraces(bull[1]!)}:{id}:lock`, MAX_PATTERN_LENGTH) : undefined;
}
