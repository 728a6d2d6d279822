/** What the tracker keeps per lock: a hold won, or attempts not won yet. */

import type { Renewals } from './renewals.js';

/** A lock seen won and not yet released. Times are `performance.now()` milliseconds. */
export interface Hold {
  readonly key: string;
  /** An older hold on the same key still open here (its TTL ran out and another holder took the key). */
  older: Hold | undefined;
  /** The connection(s) it was won on (Redlock's quorum: several); a release's reply counts only from one of them. */
  wonOn: number | number[];
  readonly token: string;
  /** Wall clock of the first attempt (epoch ms). */
  readonly at: number;
  readonly attempts: number;
  readonly waitMs: number;
  /** When the winning reply arrived: the hold starts here. */
  readonly wonMs: number;
  /** The TTL the lock was taken with. */
  readonly ttlMs: number;
  /** From here the key may have expired: the last acquire or extend was sent, plus the TTL it set. */
  mayExpireMs: number;
  /** From here it certainly has: the last acquire or extend's reply, plus the TTL it set. */
  expiredMs: number;
  extensions: number;
  /** Taken by a lock library's script: a lock for certain, not a cache's SET NX. */
  readonly byScript: boolean;
  /** How its renewals came; made at the first one (a lock never renewed allocates nothing for it). */
  renewals: Renewals | undefined;
}

/** Attempts on a key and token not won yet. */
export interface Waiting {
  readonly key: string;
  readonly token: string;
  /** Another waiter on the same key (another task of this process, with its own token). */
  older: Waiting | undefined;
  readonly at: number;
  readonly firstMs: number;
  /** Failed attempts: the most any one client sent (each client is one server of a Redlock quorum, so one round sends one per client). */
  attempts: number;
  /** Failed attempts per client, once more than one client took part. */
  perClient: Map<number, number> | undefined;
  readonly firstClient: number;
  lastMs: number;
  failedWithError: boolean;
  readonly byScript: boolean;
  readonly ttlMs: number;
}

/** The attempts a lock has made once `client` sent one more: the most any one client sent. */
export function attemptsWith(w: Waiting, client: number): number {
  const mine = (w.perClient ? (w.perClient.get(client) ?? 0) : client === w.firstClient ? w.attempts : 0) + 1;
  return Math.max(w.attempts, mine);
}
