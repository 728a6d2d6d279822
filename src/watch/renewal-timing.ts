import { defaultPeriodOf } from '../sample/libraries.js';
import { MAX_RENEWAL_GAPS, type LeaseLibrary, type RenewalTimings } from '../sample/sample.js';

/**
 * A held key's renewals as `watch` sees them, by the arrival times of their
 * notifications: each renewal's gap from the acquire or renewal before, and the
 * least margin, the TTL that one set less the gap. Bounded per key: the first
 * {@link MAX_RENEWAL_GAPS} gaps are kept; the margin covers every renewal.
 */
export class RenewalTiming {
  private readonly gapsMs: number[] = [];
  private lastMs: number;
  private minMarginMs = Number.POSITIVE_INFINITY;
  /** The TTL the latest acquire or renewal set, as read; the one before it until its PTTL answers. */
  private ttlInForceMs: number | undefined;
  /**
   * The longest gap seen before any TTL was read (-1: none): its margin waits for that TTL, and of
   * gaps measured against one TTL the longest has the least margin, so one number is enough.
   */
  private waitingGapMs = -1;

  constructor(acquiredMs: number, ttlMs: number | undefined) {
    this.lastMs = acquiredMs;
    this.ttlInForceMs = ttlMs;
  }

  /** A renewal arrived at `nowMs`. */
  renewed(nowMs: number): void {
    const gap = Math.max(0, nowMs - this.lastMs);
    this.lastMs = nowMs;
    if (this.gapsMs.length < MAX_RENEWAL_GAPS) this.gapsMs.push(gap);
    if (this.ttlInForceMs === undefined) this.waitingGapMs = Math.max(this.waitingGapMs, gap);
    else this.minMarginMs = Math.min(this.minMarginMs, this.ttlInForceMs - gap);
  }

  /** The latest acquire or renewal set `ttlMs` (its PTTL answered): the next renewal's margin is measured against it. */
  ttlSet(ttlMs: number): void {
    this.settle(ttlMs);
    this.ttlInForceMs = ttlMs;
  }

  /**
   * The timings of a hold that ended (`expired`: unrenewed at its TTL) after `holdMs`, taken with `ttlMs`.
   * A hold never renewed has the time it had left at its end as its margin; an expired one, 0 or less.
   */
  timings(expired: boolean, holdMs: number, ttlMs: number, library: LeaseLibrary, periodMs: number | undefined): RenewalTimings {
    this.settle(ttlMs);
    let margin = this.gapsMs.length === 0 ? ttlMs - holdMs : this.minMarginMs;
    if (expired) margin = Math.min(margin, 0);
    return { gapsMs: this.gapsMs, periodMs, minMarginMs: margin, library };
  }

  /** Gives the gaps that waited for a TTL their margin, against `ttlMs`. */
  private settle(ttlMs: number): void {
    if (this.waitingGapMs < 0) return;
    this.minMarginMs = Math.min(this.minMarginMs, ttlMs - this.waitingGapMs);
    this.waitingGapMs = -1;
  }
}

/**
 * The `renewal` of a hold taken with `ttlMs` at `setMs` that ended after `holdMs`: from `timing` when it was
 * renewed, or empty for a recognized lease `library`'s hold that ended before its first renewal (it was
 * meant to be renewed); `undefined` for a hold that is neither.
 */
export function renewalOf(
  timing: RenewalTiming | undefined,
  library: LeaseLibrary | undefined,
  setMs: number,
  ttlMs: number,
  holdMs: number,
  expired: boolean,
): RenewalTimings | undefined {
  if (timing === undefined && library === undefined) return undefined;
  return (timing ?? new RenewalTiming(setMs, ttlMs)).timings(expired, holdMs, ttlMs, library ?? 'unknown', defaultPeriodOf(library, ttlMs));
}
