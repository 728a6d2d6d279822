import { RenewalLog } from '../sample/renewal-log.js';
import type { LeaseLibrary, Outcome, RenewalTimings } from '../sample/sample.js';

/**
 * A renewed hold's renewals, as the commands passing through a client show
 * them, in the convention of every door (`RenewalLog`); a margin of 0 or less
 * says the lock may have run out before the renewal (at most one round trip
 * off the truth). Made at a hold's first renewal: a hold never renewed pays one
 * field (`Hold.renewals`, undefined) and nothing more.
 */
export class Renewals extends RenewalLog {
  /** Renewals counted, and how many each server answered. */
  private rounds = 0;
  private readonly roundsBy = new Map<number, number>();

  /**
   * @param lastSentMs when the acquire was sent: the first gap counts from it.
   * @param expiresMs the earliest the acquire's TTL can run out (its send + its TTL).
   * @param library whose renewals these are, where the extend script told it.
   */
  constructor(
    lastSentMs: number,
    private expiresMs: number,
    private readonly library: LeaseLibrary,
  ) {
    super(lastSentMs);
  }

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
    this.noteRenewal(sentMs, repliedMs, this.expiresMs);
    this.expiresMs = sentMs + ttlMs;
  }

  /**
   * The timings for the sample of a hold that ended with `outcome` at `endMs`. A hold that
   * expired had no margin left at the renewal it missed: with its release seen, the margin
   * is how far past the TTL in force the release came (≤ 0); never released (`censored`),
   * when the renewal would have come is unknown, so 0 — not a figure made of the sweep's grace.
   */
  timings(outcome: Outcome, endMs: number, censored: boolean): RenewalTimings {
    const minMarginMs = this.leastMarginMs(outcome, censored ? 0 : this.expiresMs - endMs);
    return { gapsMs: this.gapsMs, minMarginMs, maxRoundTripMs: this.maxRoundTripMs, library: this.library };
  }
}
