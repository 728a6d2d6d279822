/** What the tracker keeps per lock: a hold won, or attempts not won yet. */

import type { Renewals } from './renewals.js';

/**
 * A lock seen won and not yet released. Times are `performance.now()` milliseconds.
 *
 * A class, not an object literal: V8 tracks the objects a literal makes and, when those it saw at a
 * collection had all survived, may allocate every later one in the old generation. A hold lives from
 * its acquire's reply to its release's, so that could happen to some processes and not others.
 */
export class Hold {
  /** An older hold on the same key still open here (its TTL ran out and another holder took the key). */
  older: Hold | undefined = undefined;
  extensions = 0;
  /** How its renewals came; made at the first one (a lock never renewed allocates nothing for it). */
  renewals: Renewals | undefined = undefined;

  constructor(
    readonly key: string,
    /** The connection(s) it was won on (Redlock's quorum: several); a release's reply counts only from one of them. */
    public wonOn: number | number[],
    readonly token: string,
    /** Wall clock of the first attempt (epoch ms). */
    readonly at: number,
    readonly attempts: number,
    readonly waitMs: number,
    /** When the winning reply arrived: the hold starts here. */
    readonly wonMs: number,
    /** The TTL the lock was taken with. */
    readonly ttlMs: number,
    /** From here the key may have expired: the last acquire or extend was sent, plus the TTL it set. */
    public mayExpireMs: number,
    /** From here it certainly has: the last acquire or extend's reply, plus the TTL it set. */
    public expiredMs: number,
    /** Taken by a lock library's script: a lock for certain, not a cache's SET NX. */
    readonly byScript: boolean,
  ) {}
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
