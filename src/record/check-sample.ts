import { MAX_PATTERN_LENGTH } from '../keys/pattern.js';
import { truncate } from '../text.js';
import { OUTCOME_CODE, type LockSample } from './sample.js';

/**
 * The ranges a sample's numbers must fall in. Anything outside is a bug in the
 * caller (a TTL of 1e300, nanosecond timestamps), not a lock: stored, it would
 * corrupt the pattern-hour's rollup and every report that reads it.
 */
export const SAMPLE_LIMITS = Object.freeze({
  /** Epoch ms: below 2^47 (the year 6429). Nanosecond and microsecond timestamps are far above. */
  maxAtMs: 2 ** 47,
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
 * Validates a sample and copies its fields, each read once, into a plain object
 * the recorder owns: a getter that throws, a Proxy, or a sample changed after
 * `record()` returned cannot reach a batch. Returns the copy, or why the sample
 * is refused. Never throws.
 */
export function checkSample(sample: LockSample): LockSample | string {
  try {
    if (sample === null || typeof sample !== 'object') return `a sample must be an object, got ${typeof sample}`;
    // Built by this package's own lock from validated options and its own clocks, never changed
    // afterwards: valid by construction, so the copy is skipped on the lock's hot path.
    if ((sample as { [TRUSTED]?: boolean })[TRUSTED] === true) return sample;
    const { key, at, holdMs, waitMs, ttlMs, attempts, outcome, threw, pattern, instance, extensions } = sample;
    if (typeof key !== 'string' || key === '') return 'a sample needs a non-empty string `key`';
    if (typeof outcome !== 'string' || !Object.hasOwn(OUTCOME_CODE, outcome)) return `unknown \`outcome\` ${JSON.stringify(String(outcome))}`;
    const L = SAMPLE_LIMITS;
    if (!inRange(at, 0, L.maxAtMs)) return `\`at\` must be epoch milliseconds, got ${String(at)}`;
    if (holdMs !== undefined && holdMs !== null && !inRange(holdMs, 0, L.maxDurationMs)) return `\`holdMs\` out of range: ${String(holdMs)}`;
    if (waitMs !== undefined && waitMs !== null && !inRange(waitMs, 0, L.maxDurationMs)) return `\`waitMs\` out of range: ${String(waitMs)}`;
    if (!inRange(ttlMs, 0, L.maxTtlMs)) return `\`ttlMs\` out of range: ${String(ttlMs)}`;
    if (attempts !== undefined && attempts !== null && !inRange(attempts, 0, L.maxAttempts)) return `\`attempts\` out of range: ${String(attempts)}`;
    if (extensions !== undefined && extensions !== null && !inRange(extensions, 0, L.maxExtensions)) return `\`extensions\` out of range: ${String(extensions)}`;
    if (pattern !== undefined && pattern !== null && typeof pattern !== 'string') return '`pattern` must be a string';
    if (instance !== undefined && instance !== null && typeof instance !== 'string') return '`instance` must be a string';
    return {
      key,
      at,
      holdMs: holdMs ?? undefined,
      waitMs: waitMs ?? 0,
      ttlMs,
      attempts: attempts ?? 1,
      outcome,
      threw: threw === true,
      // An explicit pattern is capped like a derived one: a 1 MB pattern made a 4.4 MB report.
      pattern: pattern ? truncate(pattern, MAX_PATTERN_LENGTH) : undefined,
      instance: instance ? truncate(instance, L.maxInstanceLength) : undefined,
      extensions: extensions ?? 0,
    };
  } catch (error) {
    return `reading the sample threw: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** The mark of samples made by RedisLock (see lock/redis-lock.ts); a registry symbol, so no import joins the two. */
const TRUSTED = Symbol.for('ttl-advisor.lock-sample');

function inRange(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && value >= min && value <= max;
}
