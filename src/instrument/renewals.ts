import { MAX_RENEWAL_GAPS, type LeaseLibrary, type Outcome, type RenewalTimings } from '../sample/sample.js';

/**
 * A renewed hold's renewals, as the commands passing through a client show
 * them (see `RenewalTimings`). Made at a hold's first renewal: a hold never
 * renewed pays one field (`Hold.renewals`, undefined) and nothing more.
 *
 * One convention with the lock's own leases, so that both doors' figures mean
 * the same: times are when commands were *sent* (the holder's schedule — its
 * timer, its event loop — undisturbed by the network) for the gaps, and the
 * margin is taken at the *reply*. Redis restarts the TTL when it runs the
 * command, somewhere between sent and answered; so the TTL in force ran out no
 * sooner than the previous acquire or renewal's send plus its TTL, and the
 * renewal ran no later than its reply: margin = that expiry − the reply, a
 * lower bound (a margin above 0 was certainly there). A margin of 0 or less
 * says the lock may have run out before the renewal (at most one round trip
 * off the truth).
 */
export class Renewals {
  private readonly gapsMs: number[] = [];
  private minMarginMs = Number.POSITIVE_INFINITY;
  private maxRoundTripMs = 0;
  /** Renewals counted, and how many each server answered. */
  private rounds = 0;
  private readonly roundsBy = new Map<number, number>();

  /**
   * @param lastSentMs when the acquire was sent: the first gap counts from it.
   * @param expiresMs the earliest the acquire's TTL can run out (its send + its TTL).
   * @param library whose renewals these are, where the extend script told it.
   */
  constructor(
    private lastSentMs: number,
    private expiresMs: number,
    private readonly library: LeaseLibrary,
  ) {}

  /**
   * Counts a successful renewal answered by `server`; whether it is a new round. node-redlock's quorum
   * renews on every server, and each answers each round: a round counts once, when its first reply
   * comes (a server's n-th renewal is round n). Not by time: a server without the script cached
   * (EVALSHA → NOSCRIPT → EVAL) sends its renewal of the round after another server answered it.
   */
  nextRound(server: number): boolean {
    const mine = (this.roundsBy.get(server) ?? 0) + 1;
    this.roundsBy.set(server, mine);
    if (mine <= this.rounds) return false;
    this.rounds = mine;
    return true;
  }

  /** A renewal of `ttlMs`, sent at `sentMs`, answered with success at `repliedMs`. */
  renewed(sentMs: number, repliedMs: number, ttlMs: number): void {
    if (this.gapsMs.length < MAX_RENEWAL_GAPS) this.gapsMs.push(Math.max(0, sentMs - this.lastSentMs));
    const marginMs = this.expiresMs - repliedMs;
    if (marginMs < this.minMarginMs) this.minMarginMs = marginMs;
    if (repliedMs - sentMs > this.maxRoundTripMs) this.maxRoundTripMs = repliedMs - sentMs;
    this.lastSentMs = sentMs;
    this.expiresMs = sentMs + ttlMs;
  }

  /**
   * The timings for the sample of a hold that ended with `outcome` at `endMs`. A hold that
   * expired had no margin left at the renewal it missed: with its release seen, the margin
   * is how far past the TTL in force the release came (≤ 0); never released (`censored`),
   * when the renewal would have come is unknown, so 0 — not a figure made of the sweep's grace.
   */
  timings(outcome: Outcome, endMs: number, censored: boolean): RenewalTimings {
    let minMarginMs = this.minMarginMs;
    if (outcome === 'expired') minMarginMs = Math.min(minMarginMs, censored ? 0 : this.expiresMs - endMs, 0);
    return { gapsMs: this.gapsMs, minMarginMs, maxRoundTripMs: this.maxRoundTripMs, library: this.library };
  }
}
