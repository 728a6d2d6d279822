import { MAX_RENEWAL_GAPS, type Outcome } from './sample.js';

/**
 * A renewed hold's renewals as a door sees them, in the one convention every
 * door keeps, so that their figures mean the same (see `RenewalTimings`): a
 * gap runs from one renewal's *send* to the next (the holder's schedule — its
 * timer, its event loop — undisturbed by the network), and a margin is taken
 * at the *reply*. Redis restarts the TTL when it runs the command, somewhere
 * between sent and answered; so the TTL in force ran out no sooner than the
 * previous acquire or renewal's send plus its TTL, and the renewal ran no later
 * than its reply: margin = that expiry − the reply, a lower bound.
 *
 * The base of the lock's own leases (`lock/lease-log.ts`: with the event loop
 * watched) and of the renewals `instrument` reads from a client's commands
 * (`instrument/renewals.ts`: with node-redlock's quorum rounds). Made only for
 * a hold that is renewed: one never renewed pays nothing.
 */
export class RenewalLog {
  protected readonly gapsMs: number[] = [];
  private minMarginMs = Number.POSITIVE_INFINITY;
  protected maxRoundTripMs = 0;

  /** @param lastSentMs when the acquire was sent: the first gap counts from it. */
  constructor(private lastSentMs: number) {}

  /** A renewal sent at `sentMs`, answered at `repliedMs`; the TTL in force ran out at the earliest at `expiresMs`. */
  protected noteRenewal(sentMs: number, repliedMs: number, expiresMs: number): void {
    if (this.gapsMs.length < MAX_RENEWAL_GAPS) this.gapsMs.push(Math.max(0, sentMs - this.lastSentMs));
    this.lastSentMs = sentMs;
    const marginMs = expiresMs - repliedMs;
    if (marginMs < this.minMarginMs) this.minMarginMs = marginMs;
    if (repliedMs - sentMs > this.maxRoundTripMs) this.maxRoundTripMs = repliedMs - sentMs;
  }

  /**
   * The least margin of a hold that ended with `outcome`: one that expired had none left at the renewal
   * it missed, `lostMarginMs` or less (how far past the TTL in force it ended, ≤ 0). `Infinity` when it
   * was never renewed and not lost.
   */
  protected leastMarginMs(outcome: Outcome, lostMarginMs: number): number {
    return outcome === 'expired' ? Math.min(this.minMarginMs, lostMarginMs, 0) : this.minMarginMs;
  }
}
