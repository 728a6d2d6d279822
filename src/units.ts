/** Time units and how durations are shown to people. A leaf module: it imports nothing of ours. */

export const SECOND_MS = 1000;
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const WEEK_MS = 604_800_000;

/**
 * The longest TTL the package takes or recommends (ms), about 24.8 days: the
 * largest delay a Node timer keeps (a longer one fires at once, which would
 * abort a lock's signal the moment it is taken).
 */
export const MAX_TTL_MS = 2 ** 31 - 1;

/**
 * Milliseconds (possibly fractional, possibly not a number at all) as whole
 * microseconds, the unit durations are stored in; anything that is not a finite
 * positive number becomes 0.
 */
export function toMicros(ms: unknown): number {
  const us = Math.round(Number(ms) * 1000);
  return Number.isFinite(us) && us > 0 ? us : 0;
}

/** Milliseconds for people: `850 µs`, `12.3 ms`, `4.2 s`, `3 min`. */
export function formatMs(ms: number): string {
  if (ms < 1) return `${below(ms * 1000, 1000, 0)} µs`;
  if (ms < 100) return `${Number(ms.toFixed(1))} ms`;
  if (ms < 1000) return `${below(ms, 1000, 0)} ms`;
  if (ms < MINUTE_MS) return `${below(ms / 1000, 60, 2)} s`;
  return `${Number((ms / MINUTE_MS).toFixed(1))} min`;
}

/**
 * `value` rounded to `digits`, unless rounding reaches `limit`, where the next
 * unit starts: then with one more digit (cut, if rounding that reaches the limit
 * too), so that 999.774 ms reads "999.8 ms" and never "1000 ms", which is a second.
 */
function below(value: number, limit: number, digits: number): string {
  for (const d of [digits, digits + 1]) {
    const rounded = value.toFixed(d);
    if (Number(rounded) < limit) return d === digits ? String(Number(rounded)) : rounded;
  }
  const scale = 10 ** (digits + 1);
  return (Math.floor(value * scale) / scale).toFixed(digits + 1);
}

/** A duration in hours or minutes: `48.0 h`, `35 min`. */
export function formatSpan(ms: number): string {
  // Rounded down, never up: a span just short of a day must not read "24.0 h, less than 24 h",
  // and 40 s of data is not "1 min" (nor "0 min").
  if (ms >= HOUR_MS) return `${(Math.floor((ms / HOUR_MS) * 10) / 10).toFixed(1)} h`;
  // Below an hour, exact to the second: "40 s", "1 min 30 s", "5 min".
  const seconds = Math.floor(Math.max(0, ms) / 1000);
  if (seconds < 60) return `${seconds} s`;
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** A count with thousands separators: 12,345. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** A UTC time to the minute: `2026-11-30 08:00 UTC`. */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}
