/** How `watch` reads the TTL a client set from PTTL's answer (see docs/watch.md). */

/**
 * The most the rounding in {@link likelyTtl} may add to PTTL's answer: 2 % of
 * it, and 10 ms below 500 ms. The time PTTL's answer took bounds how stale the
 * answer can be, but on a loaded host it can be many times a short TTL, and the
 * roundest value in a wide range is a power of ten: a 100 ms lock would be read
 * as 1,000 ms. The trip from the SET to the PTTL is well under a millisecond on
 * a healthy network and 5–10 ms when Redis or this process is busy (seen in CI:
 * a 100 ms TTL answered as 95), so 10 ms keeps short TTLs round on a loaded host.
 * 2 % is twice what the notification's unseen trip is allowed (1 %, at most 50 ms), so
 * a stall of hundreds of ms still rounds a TTL of tens of seconds, while a TTL
 * that is not round is never read more than 2 % (or 10 ms) high. A longer stall reads the
 * TTL low by what exceeds the cap (10,000 answered as 9,703 is recorded as
 * 9,800), never ten times too high.
 */
export function roundingSlackCapMs(remainingMs: number): number {
  return Math.max(MIN_ROUNDING_SLACK_MS, remainingMs * MAX_ROUNDING_SLACK_FRACTION);
}

const MAX_ROUNDING_SLACK_FRACTION = 0.02;
const MIN_ROUNDING_SLACK_MS = 10;

/**
 * The TTL a client most likely set, from PTTL's answer `remainingMs` read at
 * most `slackMs` after the SET ran: the "roundest" value (most trailing zeros)
 * in [remaining, remaining + slack], the smallest among equals — 10000 from
 * 9999, 150 from 149, 1234 from 1234. The slack is capped by
 * {@link roundingSlackCapMs}.
 */
export function likelyTtl(remainingMs: number, slackMs: number): number {
  const upTo = remainingMs + Math.min(Math.ceil(Math.max(0, slackMs)), Math.floor(roundingSlackCapMs(remainingMs)));
  // The largest power of ten with a multiple in range; its smallest multiple there has the most zeros.
  for (let p = 10 ** (Math.floor(Math.log10(Math.max(1, upTo))) + 1); p >= 10; p /= 10) {
    const multiple = Math.ceil(Math.max(1, remainingMs) / p) * p;
    if (multiple <= upTo) return multiple;
  }
  return remainingMs;
}
