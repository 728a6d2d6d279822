/**
 * The layout of a checked sample's numbers in the Float64Arrays the aggregator
 * folds from: the sample queue's, and the aggregator's own for a sample folded
 * as it is. One layout, so that both are folded by one fold.
 */

/** Numbers a sample is folded from (see {@link putNumbers}). */
export const SAMPLE_SLOTS = 8;

/**
 * Puts a valid sample's numbers at `offset` of `into`, where the fold reads them: `at`, the hold
 * (NaN: none), the wait (NaN: not measured), `ttlMs`, `attempts`, `extensions`, `threw` (1 or 0),
 * the outcome's code (see `outcomeCodeOf`).
 */
export function putNumbers(into: Float64Array, offset: number, at: number, holdMs: unknown, waitMs: unknown, ttlMs: number, attempts: unknown, code: number, threw: unknown, extensions: unknown): void {
  into[offset] = at;
  into[offset + 1] = holdMs === undefined || holdMs === null ? Number.NaN : (holdMs as number);
  into[offset + 2] = waitMs === undefined ? 0 : waitMs === null ? Number.NaN : (waitMs as number);
  into[offset + 3] = ttlMs;
  into[offset + 4] = attempts === undefined || attempts === null ? 1 : (attempts as number);
  into[offset + 5] = extensions === undefined || extensions === null ? 0 : (extensions as number);
  into[offset + 6] = threw === true ? 1 : 0;
  into[offset + 7] = code;
}
