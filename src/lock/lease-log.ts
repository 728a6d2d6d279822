import { RenewalLog } from '../sample/renewal-log.js';
import type { Outcome, RenewalTimings } from '../sample/sample.js';

/** How often the event loop is looked at while a lease is held (ms): finer costs more wake-ups. */
const LOOP_TICK_MS = 20;

/**
 * One ticker for every lease in the process: while any is held, an unref'd
 * interval measures how late each of its own ticks fires — how long the event
 * loop was blocked — and raises each held lease's longest. Per lease it costs a
 * set entry; `perf_hooks.monitorEventLoopDelay` per lease cost ~0.5 ms and
 * native memory each, which a service taking many short leases cannot afford.
 */
class LoopWatch {
  private readonly leases = new Set<LeaseLog>();
  private timer: NodeJS.Timeout | undefined;
  private lastTickPerf = 0;

  add(lease: LeaseLog): void {
    this.leases.add(lease);
    if (this.timer) return;
    this.lastTickPerf = performance.now();
    this.timer = setInterval(() => this.tick(), LOOP_TICK_MS);
    this.timer.unref();
  }

  delete(lease: LeaseLog): void {
    this.leases.delete(lease);
    if (this.leases.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    const now = performance.now();
    const blockedMs = Math.max(0, now - this.lastTickPerf - LOOP_TICK_MS);
    this.lastTickPerf = now;
    for (const lease of this.leases) {
      // A lease nobody released (its holder gone) is let go once nothing can renew it any more.
      if (now > lease.untilPerf) lease.stop();
      // A lease taken during the block is charged only what it was held of it.
      else if (blockedMs > 0) lease.loopBlocked(Math.min(blockedMs, now - lease.watchedFromPerf));
    }
  }
}

const loopWatch = new LoopWatch();

/**
 * A renewed hold's renewals, as the lock sees them (see `RenewalLog`, whose
 * convention it keeps), and — with `autoExtend` — the longest the event loop
 * was blocked while held (what makes renewals late), to the ticker's 20 ms
 * resolution.
 *
 * Made only for a lease (`autoExtend`, or a first manual `extend()`): a lock
 * that is never renewed pays nothing.
 */
export class LeaseLog extends RenewalLog {
  private watching = false;
  /** When the event loop began to be watched for this lease. */
  watchedFromPerf = 0;
  private loopMaxMs: number | undefined;

  /**
   * @param lastSentPerf when the acquire (or the renewal before this log) was sent: the first gap counts from it.
   * @param periodMs the renewal period meant (`autoExtend`'s interval), or `undefined` for manual extensions.
   * @param untilPerf when the event loop stops being watched for it at the latest (past `maxHoldMs` and a TTL).
   */
  constructor(
    lastSentPerf: number,
    private readonly periodMs: number | undefined,
    readonly untilPerf = Number.POSITIVE_INFINITY,
  ) {
    super(lastSentPerf);
    if (periodMs === undefined) return;
    this.watchedFromPerf = performance.now();
    this.loopMaxMs = 0;
    this.watching = true;
    loopWatch.add(this);
  }

  /** The event loop was blocked `ms` while this lease was held (see {@link LoopWatch}). */
  loopBlocked(ms: number): void {
    if (ms > this.loopMaxMs!) this.loopMaxMs = ms;
  }

  /**
   * A renewal sent at `sentPerf` was answered at `repliedPerf`; the TTL in force then ran out at the
   * earliest at `expiresPerf` (the previous renewal's send + its TTL): the margin is what was left of it.
   */
  renewed(sentPerf: number, repliedPerf: number, expiresPerf: number): void {
    this.noteRenewal(sentPerf, repliedPerf, expiresPerf);
  }

  /** Stops watching the event loop (the hold ended, or nothing will renew it any more). Idempotent. */
  stop(): void {
    if (!this.watching) return;
    this.watching = false;
    loopWatch.delete(this);
  }

  /**
   * The timings for the sample of a hold that ended with `outcome` at `endPerf`, whose TTL in force
   * ran out at `expiresPerf`: a lease that expired had no margin left at the renewal it missed.
   */
  timings(outcome: Outcome, endPerf: number, expiresPerf: number): RenewalTimings {
    this.stop();
    let minMarginMs = this.leastMarginMs(outcome, expiresPerf - endPerf);
    // Never renewed and never lost: the whole TTL was left.
    if (minMarginMs === Number.POSITIVE_INFINITY) minMarginMs = Math.max(0, expiresPerf - endPerf);
    const timings: RenewalTimings = { gapsMs: this.gapsMs, minMarginMs, library: 'ttl-advisor' };
    if (this.periodMs !== undefined) timings.periodMs = this.periodMs;
    // Every renewal has a gap (the cap is far above 0): with none, there is no round trip to give.
    if (this.gapsMs.length > 0) timings.maxRoundTripMs = this.maxRoundTripMs;
    if (this.loopMaxMs !== undefined) timings.maxLoopDelayMs = this.loopMaxMs;
    return timings;
  }
}
