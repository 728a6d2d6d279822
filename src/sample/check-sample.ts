import { LEASE_LIBRARIES, MAX_RENEWAL_GAPS, OUTCOME_CODE } from './sample.js';

/**
 * The ranges a sample's numbers must fall in. Anything outside is a bug in the
 * caller (a TTL of 1e300, nanosecond timestamps), not a lock: stored, it would
 * corrupt the pattern-hour's rollup and every report that reads it.
 */
export const SAMPLE_LIMITS = Object.freeze({
  /**
   * Epoch ms from 2000-01-01: a timestamp in seconds (`Date.now() / 1000`) is
   * in January 1970, and one such row made a report chart 56 years hour by hour.
   */
  minAtMs: Date.UTC(2000, 0, 1),
  /** How far past the clock `at` may be (ms): one day of clock skew between hosts. Nanosecond and microsecond timestamps are far above. */
  maxAtAheadMs: 24 * 60 * 60 * 1000,
  /** Hold and wait times (ms): the histograms' range, about 4.4 years. */
  maxDurationMs: (2 ** 47 - 1) / 1000,
  /** TTLs (ms): about 35 years. */
  maxTtlMs: 2 ** 40,
  maxAttempts: 2 ** 20,
  maxExtensions: 2 ** 30,
  /** Instance names (code points). */
  maxInstanceLength: 200,
});

/**
 * A sample's outcome as its {@link OUTCOME_CODE}, or -1 for anything else
 * (`toString` too). A switch: a lookup by a name that varies from sample to
 * sample went through V8's megamorphic cache, twice per sample.
 */
export function outcomeCodeOf(outcome: unknown): number {
  switch (outcome) {
    case 'released':
      return OUTCOME_CODE.released;
    case 'expired':
      return OUTCOME_CODE.expired;
    case 'not_acquired':
      return OUTCOME_CODE.not_acquired;
    case 'error':
      return OUTCOME_CODE.error;
    case 'lost':
      return OUTCOME_CODE.lost;
    default:
      return -1;
  }
}

/**
 * The latest `at` taken: the clock when last read, plus the skew allowed. An
 * `at` at or before it is taken without reading the clock (a call that cost as
 * much as the rest of the checks); the clock is read for an `at` past it, and
 * every {@link CLOCK_EVERY} checks, so a clock set back counts within them.
 */
let latestAtMs = 0;
let checksLeft = 0;
const CLOCK_EVERY = 256;

function atTooLate(at: number): boolean {
  if (at <= latestAtMs && --checksLeft > 0) return false;
  latestAtMs = Date.now() + SAMPLE_LIMITS.maxAtAheadMs;
  checksLeft = CLOCK_EVERY;
  return at > latestAtMs;
}

/**
 * Whether a sample's fields (each read once by the caller) pass the checks that
 * the common sample needs: a key, a known outcome (its `code`), each number
 * absent or in range, no pattern or instance. It accepts only what
 * {@link refusalOf} accepts; false asks refusalOf, which may still accept
 * (`null` fields) and says why not. Small, so that it is inlined where samples
 * are taken: a call boxed `at` and `holdMs` each in a new heap number.
 */
export function isPlainValid(key: unknown, code: number, at: unknown, holdMs: unknown, waitMs: unknown, ttlMs: unknown, attempts: unknown, extensions: unknown, pattern: unknown, instance: unknown): boolean {
  const L = SAMPLE_LIMITS;
  return (
    typeof key === 'string' && key !== '' && code >= 0 && pattern === undefined && instance === undefined &&
    typeof at === 'number' && at >= L.minAtMs && !atTooLate(at) &&
    (holdMs === undefined || inRange(holdMs, 0, L.maxDurationMs)) && (waitMs === undefined || inRange(waitMs, 0, L.maxDurationMs)) &&
    inRange(ttlMs, 0, L.maxTtlMs) && (attempts === undefined || inRange(attempts, 0, L.maxAttempts)) && (extensions === undefined || inRange(extensions, 0, L.maxExtensions))
  );
}

/**
 * Why a sample's fields (each read once by the caller) are refused, or
 * `undefined` when they are valid. Throws only when a field's own `toString`
 * does, quoting it (the caller's catch refuses the sample with that reason).
 */
export function refusalOf(
  key: unknown,
  at: unknown,
  holdMs: unknown,
  waitMs: unknown,
  ttlMs: unknown,
  attempts: unknown,
  outcome: unknown,
  pattern: unknown,
  instance: unknown,
  extensions: unknown,
  censored?: unknown,
  unconfirmed?: unknown,
  renewal?: unknown,
): string | undefined {
  if (typeof key !== 'string' || key === '') return 'a sample needs a non-empty string `key`';
  if (outcomeCodeOf(outcome) < 0) return `unknown \`outcome\` ${JSON.stringify(String(outcome))}`;
  const L = SAMPLE_LIMITS;
  if (typeof at !== 'number' || !(at >= L.minAtMs) || atTooLate(at)) return atRefusal(at);
  if (holdMs !== undefined && holdMs !== null && !inRange(holdMs, 0, L.maxDurationMs)) return `\`holdMs\` out of range: ${String(holdMs)}`;
  if (waitMs !== undefined && waitMs !== null && !inRange(waitMs, 0, L.maxDurationMs)) return `\`waitMs\` out of range: ${String(waitMs)}`;
  if (!inRange(ttlMs, 0, L.maxTtlMs)) return `\`ttlMs\` out of range: ${String(ttlMs)}`;
  if (attempts !== undefined && attempts !== null && !inRange(attempts, 0, L.maxAttempts)) return `\`attempts\` out of range: ${String(attempts)}`;
  if (extensions !== undefined && extensions !== null && !inRange(extensions, 0, L.maxExtensions)) return `\`extensions\` out of range: ${String(extensions)}`;
  if (pattern !== undefined && pattern !== null && typeof pattern !== 'string') return '`pattern` must be a string';
  if (censored !== undefined && censored !== null && censored !== false) {
    if (censored !== true) return '`censored` must be a boolean';
    if (holdMs === undefined || holdMs === null) return 'a `censored` sample needs the `holdMs` it was seen held';
  }
  if (unconfirmed !== undefined && unconfirmed !== null && unconfirmed !== false) {
    if (unconfirmed !== true) return '`unconfirmed` must be a boolean';
    if (outcome !== 'expired') return 'only an `expired` sample can be `unconfirmed` (a pattern never seen released)';
  }
  if (instance !== undefined && instance !== null && typeof instance !== 'string') return '`instance` must be a string';
  if (renewal !== undefined && renewal !== null) {
    if (holdMs === undefined || holdMs === null) return 'a sample with `renewal` needs the `holdMs` it was held (a lock never won was never renewed)';
    return renewalRefusal(renewal);
  }
  return undefined;
}

/** Whether an observation gap's fields (each read once by the caller) make a gap: a source, a reason, a time range in the limits, a count of open holds. */
export function isValidGap(source: unknown, fromMs: unknown, toMs: unknown, reason: unknown, openHolds: unknown, instance: unknown): boolean {
  const L = SAMPLE_LIMITS;
  return (
    typeof source === 'string' && source !== '' && typeof reason === 'string' && reason !== '' &&
    typeof fromMs === 'number' && typeof toMs === 'number' && fromMs >= L.minAtMs && toMs >= fromMs && toMs <= Date.now() + L.maxAtAheadMs &&
    Number.isSafeInteger(openHolds) && (openHolds as number) >= 0 && (instance === undefined || typeof instance === 'string')
  );
}

/** Why a sample's `renewal` is refused, or `undefined`. Never throws (a getter that throws is the caller's to catch). */
function renewalRefusal(renewal: unknown): string | undefined {
  if (typeof renewal !== 'object') return '`renewal` must be an object';
  const { gapsMs, periodMs, minMarginMs, maxRoundTripMs, maxLoopDelayMs, library } = renewal as Record<string, unknown>;
  const max = SAMPLE_LIMITS.maxDurationMs;
  if (!Array.isArray(gapsMs) || gapsMs.length > MAX_RENEWAL_GAPS) return `\`renewal.gapsMs\` must be an array of at most ${MAX_RENEWAL_GAPS} durations`;
  for (const gap of gapsMs) if (!inRange(gap, 0, max)) return `\`renewal.gapsMs\` holds a value out of range: ${String(gap)}`;
  if (!inRange(minMarginMs, -max, max)) return `\`renewal.minMarginMs\` out of range: ${String(minMarginMs)}`;
  for (const [name, value] of [['periodMs', periodMs], ['maxRoundTripMs', maxRoundTripMs], ['maxLoopDelayMs', maxLoopDelayMs]] as const) {
    if (value !== undefined && value !== null && !inRange(value, 0, max)) return `\`renewal.${name}\` out of range: ${String(value)}`;
  }
  if (library !== undefined && library !== null && !(LEASE_LIBRARIES as readonly unknown[]).includes(library)) return `unknown \`renewal.library\` ${JSON.stringify(String(library))}`;
  return undefined;
}

/**
 * Whether a sample was built by this package's own lock from validated options
 * and its own clocks, never changed afterwards: valid by construction, so the
 * checks are skipped on the lock's hot path.
 */
export function isTrustedSample(sample: object): boolean {
  return (sample as { [TRUSTED]?: boolean })[TRUSTED] === true;
}

/**
 * The mark of samples made by RedisLock (see lock/redis-lock.ts). A registry
 * symbol, so that a sample made by the ES module build is trusted by the
 * CommonJS one too, when a process loads both.
 */
export const TRUSTED_SAMPLE: unique symbol = Symbol.for('ttl-advisor.lock-sample') as never;
const TRUSTED = TRUSTED_SAMPLE;

/** Says what a refused `at` looks like: seconds, microseconds or nanoseconds are the usual mistakes. */
function atRefusal(at: unknown): string {
  const unit = typeof at !== 'number' || !Number.isFinite(at) || at <= 0 ? '' : at < 1e11 ? ' (seconds? `at` is Date.now(), in ms)' : at > 1e14 ? ' (micro- or nanoseconds? `at` is in ms)' : '';
  return `\`at\` must be epoch milliseconds from 2000-01-01 to a day from now, got ${String(at)}${unit}`;
}

function inRange(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && value >= min && value <= max;
}
