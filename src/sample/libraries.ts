import type { LeaseLibrary } from './sample.js';

/**
 * What ttl-advisor knows of each lock library whose renewed locks (leases) it
 * records and advises on, in one typed table: the doors read the renewal period
 * a holder means, the analysis how it renews, the reports its name and option
 * names, `check --code` the options a call carries. A library added to
 * `LEASE_LIBRARIES` does not compile until it has its row.
 */
export interface LeaseLibraryFacts {
  /** The name users know it by, in reports. */
  name: string;
  /**
   * `period`: renewed every α × TTL (BullMQ, redis-semaphore, Redisson, `autoExtend`); `threshold`:
   * renewed when less than a threshold is left (node-redlock's `using()`).
   */
  renewal: 'period' | 'threshold';
  /** Every lock of it is a lease, renewed or not yet (a BullMQ job lock; Redisson's watchdog). */
  alwaysLease: boolean;
  /**
   * Its holders renew every TTL / this unless told otherwise: BullMQ's `lockRenewTime` is
   * `lockDuration / 2`, Redisson's watchdog renews every `lockWatchdogTimeout / 3`. Absent where it
   * is not known: reports infer the period from the gaps.
   */
  defaultPeriodDivisor?: number;
  /** The options a call takes the lease and its renewal with, where the library has its own words. */
  options?: { ttl: string; renewEvery?: string; threshold?: string };
}

export const LEASE_LIBRARY_FACTS: Readonly<Record<LeaseLibrary, Readonly<LeaseLibraryFacts>>> = Object.freeze({
  unknown: { name: 'renewed lock', renewal: 'period', alwaysLease: false },
  'ttl-advisor': { name: 'withLock autoExtend', renewal: 'period', alwaysLease: false, options: { ttl: 'ttlMs', renewEvery: 'autoExtend' } },
  bullmq: { name: 'BullMQ', renewal: 'period', alwaysLease: true, defaultPeriodDivisor: 2, options: { ttl: 'lockDuration', renewEvery: 'lockRenewTime' } },
  redlock: { name: 'node-redlock using()', renewal: 'threshold', alwaysLease: false, options: { ttl: 'duration', threshold: 'automaticExtensionThreshold' } },
  'redis-semaphore': { name: 'redis-semaphore', renewal: 'period', alwaysLease: false, options: { ttl: 'lockTimeout', renewEvery: 'refreshInterval' } },
  redisson: { name: 'Redisson', renewal: 'period', alwaysLease: true, defaultPeriodDivisor: 3, options: { ttl: 'lockWatchdogTimeout' } },
  'redis-py': { name: 'redis-py Lock', renewal: 'period', alwaysLease: false },
});

/** The renewal period (ms) a library's holder means by default for a lock taken with `ttlMs`; `undefined` where not known. */
export function defaultPeriodOf(library: LeaseLibrary | undefined, ttlMs: number): number | undefined {
  const divisor = library === undefined ? undefined : LEASE_LIBRARY_FACTS[library].defaultPeriodDivisor;
  return divisor === undefined ? undefined : ttlMs / divisor;
}

/** A renewal's lateness (ms): how far past the period it was meant at its gap came; never below 0 (an early one is on time). */
export function latenessOf(gapMs: number, periodMs: number): number {
  return Math.max(0, gapMs - periodMs);
}
