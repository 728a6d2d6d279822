import { ConfigError } from '../errors.js';
import { numberOption } from '../validate.js';
import { MAX_TTL_MS } from '../units.js';

/** How a recommendation is computed: TTL = max(floor, multiplier × p99), rounded up to a whole step. */
export interface RecommendationPolicy {
  /** Factor applied to the hold-time p99. @default 3 */
  multiplier: number;
  /** Lowest TTL ever recommended (ms). @default 3000 */
  floorMs: number;
  /** Recommendations are rounded up to a multiple of this (ms). @default 100 */
  stepMs: number;
  /**
   * `p99`: the rule alone; holds beyond the recommendation are a finding (a hung holder runs past
   * anything). `max`: also cover the longest hold seen. @default 'p99'
   */
  cover: 'p99' | 'max';
}

export const DEFAULT_RECOMMENDATION_POLICY: Readonly<RecommendationPolicy> = Object.freeze({ multiplier: 3, floorMs: 3000, stepMs: 100, cover: 'p99' });

/** A current TTL more than this many times the recommendation is `too-long`. */
export const TOO_LONG_FACTOR = 3;

/** Validates a partial policy and fills in the defaults. */
export function resolveRecommendationPolicy(policy: Partial<RecommendationPolicy> = {}): RecommendationPolicy {
  const resolved: RecommendationPolicy = {
    multiplier: policy.multiplier ?? DEFAULT_RECOMMENDATION_POLICY.multiplier,
    floorMs: policy.floorMs ?? DEFAULT_RECOMMENDATION_POLICY.floorMs,
    stepMs: policy.stepMs ?? DEFAULT_RECOMMENDATION_POLICY.stepMs,
    cover: policy.cover ?? DEFAULT_RECOMMENDATION_POLICY.cover,
  };
  if (resolved.cover !== 'p99' && resolved.cover !== 'max') {
    throw new ConfigError(`Expected \`cover\` to be "p99" or "max", got ${JSON.stringify(String(resolved.cover))}`);
  }
  // Recommendations are TTLs a lock and a policy file accept: whole milliseconds up to MAX_TTL_MS.
  check('multiplier', resolved.multiplier, (v) => v > 0, 'a finite number > 0');
  check('multiplier', resolved.multiplier, (v) => v <= MAX_MULTIPLIER, `at most ${MAX_MULTIPLIER}`);
  check('floorMs', resolved.floorMs, (v) => Number.isInteger(v) && v >= 0 && v <= MAX_TTL_MS, `an integer from 0 to ${MAX_TTL_MS}`);
  check('stepMs', resolved.stepMs, (v) => Number.isInteger(v) && v >= 1 && v <= MAX_TTL_MS, `an integer from 1 to ${MAX_TTL_MS}`);
  return resolved;
}

/**
 * The recommended TTL for a hold-time p99 (ms): max(floor, multiplier × p99), and with
 * `cover: 'max'` at least the longest hold; a whole number of steps, at most MAX_TTL_MS.
 */
export function recommendTtl(p99Ms: number, policy: Pick<RecommendationPolicy, 'floorMs' | 'multiplier' | 'stepMs'> & { cover?: 'p99' | 'max' }, maxMs = 0): number {
  // To cover the longest hold the TTL must exceed it: a hold as long as its TTL expires (1 µs more does).
  return roundUpToStep(Math.max(policy.floorMs, policy.multiplier * p99Ms, policy.cover === 'max' ? maxMs + 0.001 : 0), policy.stepMs);
}

/** `ms` rounded up to a whole number of steps, from 0 to MAX_TTL_MS: every TTL advised is one a lock and a policy file take. */
export function roundUpToStep(ms: number, stepMs: number): number {
  // Guard against 3 × 0.1 = 0.30000000000000004 rounding a whole step up.
  const steps = Math.ceil(ms / stepMs - 1e-9);
  return Math.min(Math.max(steps * stepMs, 0), MAX_TTL_MS);
}

/** The largest multiplier taken: beyond it no recommendation is a TTL anyone would set. */
export const MAX_MULTIPLIER = 1000;

function check(name: string, value: unknown, ok: (v: number) => boolean, expectation: string): void {
  numberOption(name, value, ok, expectation);
}
