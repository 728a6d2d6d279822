import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { MAX_RENEWAL_GAPS, type Outcome, type RenewalTimings } from '../sample/sample.js';

/** How often the event-loop delay is sampled while a lease is held (ms): finer costs more wake-ups. */
const LOOP_RESOLUTION_MS = 10;

/**
 * A renewed hold's renewals, as the lock sees them (see `RenewalTimings`): the
 * gap between one renewal's send and the next, the least margin left when a
 * renewal was answered, the slowest round trip, and — with `autoExtend` — the
 * longest the event loop was blocked while held (what makes renewals late).
 *
 * Made only for a lease (`autoExtend`, or a first manual `extend()`): a lock
 * that is never renewed pays nothing.
 */
export class LeaseLog {
  private readonly gaps: number[] = [];
  private minMarginMs = Number.POSITIVE_INFINITY;
  private maxRoundTripMs = 0;
  private renewals = 0;
  private loop: IntervalHistogram | undefined;
  private loopMaxMs: number | undefined;

  /**
   * @param lastSentPerf when the acquire (or the renewal before this log) was sent: the first gap counts from it.
   * @param periodMs the renewal period meant (`autoExtend`'s interval), or `undefined` for manual extensions.
   */
  constructor(
    private lastSentPerf: number,
    private readonly periodMs: number | undefined,
  ) {
    if (periodMs === undefined) return;
    // Its own timer: per lease, not per lock, and unref'd by Node (it never keeps a process alive).
    this.loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    this.loop.enable();
  }

  /**
   * A renewal sent at `sentPerf` was answered at `repliedPerf`; the TTL in force then ran out at the
   * earliest at `expiresPerf` (the previous renewal's send + its TTL): the margin is what was left of it.
   */
  renewed(sentPerf: number, repliedPerf: number, expiresPerf: number): void {
    if (this.gaps.length < MAX_RENEWAL_GAPS) this.gaps.push(sentPerf - this.lastSentPerf);
    this.lastSentPerf = sentPerf;
    this.renewals++;
    const margin = expiresPerf - repliedPerf;
    if (margin < this.minMarginMs) this.minMarginMs = margin;
    if (repliedPerf - sentPerf > this.maxRoundTripMs) this.maxRoundTripMs = repliedPerf - sentPerf;
  }

  /** Stops sampling the event loop (the hold ended, or nothing will renew it any more). Idempotent. */
  stop(): void {
    if (!this.loop) return;
    this.loop.disable();
    // The histogram is in ns; with no sample yet (a hold under one resolution) it reads 0.
    this.loopMaxMs = this.loop.count > 0 ? this.loop.max / 1e6 : 0;
    this.loop = undefined;
  }

  /**
   * The timings for the sample of a hold that ended with `outcome` at `endPerf`, whose TTL in force
   * ran out at `expiresPerf`: a lease that expired had no margin left at the renewal it missed.
   */
  timings(outcome: Outcome, endPerf: number, expiresPerf: number): RenewalTimings {
    this.stop();
    let minMarginMs = this.minMarginMs;
    if (outcome === 'expired') minMarginMs = Math.min(minMarginMs, expiresPerf - endPerf, 0);
    // Never renewed and never lost: the whole TTL was left.
    if (minMarginMs === Number.POSITIVE_INFINITY) minMarginMs = Math.max(0, expiresPerf - endPerf);
    const timings: RenewalTimings = { gapsMs: this.gaps, minMarginMs, library: 'ttl-advisor' };
    if (this.periodMs !== undefined) timings.periodMs = this.periodMs;
    if (this.renewals > 0) timings.maxRoundTripMs = this.maxRoundTripMs;
    if (this.loopMaxMs !== undefined) timings.maxLoopDelayMs = this.loopMaxMs;
    return timings;
  }
}
