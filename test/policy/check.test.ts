import { describe, expect, it } from 'vitest';
import type { CheckRow } from '../../src/policy/check.js';
import { splitExpirations } from '../../src/analyze/decision.js';
import { checkPolicy } from '../../src/policy/check.js';
import { TtlPolicy, type PolicyEntry } from '../../src/policy/policy.js';
import { analysisOf, patternAnalysis, type PatternFacts } from '../helpers/analysis.js';

/**
 * `check` on analyses built in memory: every verdict for a configured TTL,
 * what fails (exit 1) and what is only shown, and the evidence rules —
 * too few samples, pinned entries, --min-change, expirations judged against
 * the policy's TTL. p99 1 s gives the default recommendation 3 s.
 */

const policyOf = (locks: Record<string, PolicyEntry>, defaultTtlMs?: number) =>
  new TtlPolicy({ locks, ...(defaultTtlMs !== undefined && { defaultTtlMs }) });

/** `check` for one pattern `p` configured with `entry`. */
function checkOne(entry: PolicyEntry, facts: PatternFacts = {}, options: Parameters<typeof checkPolicy>[2] = {}) {
  const result = checkPolicy(analysisOf([patternAnalysis('p', facts)]), policyOf({ p: entry }), options);
  const [row] = [...result.rows, ...result.fine];
  return { result, row: row!, attention: result.rows.includes(row!) };
}

describe('check: the verdict for the configured TTL, and what fails', () => {
  it('a TTL that matches the recommendation is fine: no row needs attention, exit 0', () => {
    const { result, row, attention } = checkOne({ ttlMs: 3000 });
    expect(row).toMatchObject({ verdict: 'ok', failing: false, configuredTtlMs: 3000, recommendedTtlMs: 3000, changePercent: 0 });
    expect(attention).toBe(false);
    expect(result.exitCode).toBe(0);
  });

  it('judges the policy’s TTL, not the TTL in use (a pending deploy)', () => {
    // The data ran with 2 s (too short); the policy already says 3 s.
    const { result, row } = checkOne({ ttlMs: 3000 }, { currentTtlMs: 2000 });
    expect(row).toMatchObject({ verdict: 'ok', inUseTtlMs: 2000, configuredTtlMs: 3000 });
    expect(row.decision.findings).toContainEqual({ kind: 'deploy-pending', inUseTtlMs: 2000, policyTtlMs: 3000 });
    expect(result.exitCode).toBe(0);
    // Control: the same data against a policy that still says 2 s fails.
    expect(checkOne({ ttlMs: 2000 }, { currentTtlMs: 2000 }).result.exitCode).toBe(1);
  });

  it('too short fails, with the change it asks for', () => {
    const { result, row, attention } = checkOne({ ttlMs: 2000 });
    expect(row).toMatchObject({ verdict: 'too-short', failing: true, changePercent: 50 });
    expect(attention).toBe(true);
    expect(result.exitCode).toBe(1);
  });

  it('too long is a warning; with --strict it fails', () => {
    const loose = checkOne({ ttlMs: 10_000 });
    expect(loose.row).toMatchObject({ verdict: 'too-long', failing: false, changePercent: -70 });
    expect(loose.attention).toBe(true);
    expect(loose.result.exitCode).toBe(0);
    const strict = checkOne({ ttlMs: 10_000 }, {}, { strict: true });
    expect(strict.row.failing).toBe(true);
    expect(strict.result.exitCode).toBe(1);
    // Control: at 3× the recommendation it is not too long yet.
    expect(checkOne({ ttlMs: 9000 }, {}, { strict: true }).row).toMatchObject({ verdict: 'ok', failing: false });
  });

  it('below the floor but covering the data is hygiene: shown, never failing, not even with --strict', () => {
    // p99 10 ms: the data needs 30 ms, the floor makes the recommendation 3 s.
    const { result, row, attention } = checkOne({ ttlMs: 1000 }, { p99Ms: 10 }, { strict: true });
    expect(row).toMatchObject({ verdict: 'below-floor', failing: false, recommendedTtlMs: 3000 });
    expect(attention).toBe(true);
    expect(result.exitCode).toBe(0);
  });

  it('short only of the rounding step is ok, and not shown', () => {
    // p99 1,980 ms: the data needs 5,940 ms, rounded up to 6 s; 5,950 ms covers the need.
    const { row, attention } = checkOne({ ttlMs: 5950 }, { p99Ms: 1980 });
    expect(row).toMatchObject({ verdict: 'ok', recommendedTtlMs: 6000, failing: false });
    expect(attention).toBe(false);
    // Control: 5,930 ms does not.
    expect(checkOne({ ttlMs: 5930 }, { p99Ms: 1980 }).row.verdict).toBe('too-short');
  });

  it('a contended pattern is shown even when its TTL is right', () => {
    const { row, attention, result } = checkOne({ ttlMs: 3000 }, { contended: true });
    expect(row).toMatchObject({ verdict: 'ok', failing: false });
    expect(attention).toBe(true);
    expect(result.exitCode).toBe(0);
  });
});

describe('check: the evidence rules', () => {
  it('too few samples: always shown; fails only with --fail-on-insufficient-data', () => {
    const plain = checkOne({ ttlMs: 2000 }, { holdCount: 298 });
    expect(plain.row).toMatchObject({ verdict: 'insufficient-data', failing: false });
    expect(plain.attention).toBe(true);
    expect(plain.result.exitCode).toBe(0);
    const strict = checkOne({ ttlMs: 2000 }, { holdCount: 298 }, { failOnInsufficientData: true });
    expect(strict.row.failing).toBe(true);
    expect(strict.result.exitCode).toBe(1);
    // Control: at 299 hold times the p99 claim holds, and the 2 s TTL is too short.
    expect(checkOne({ ttlMs: 2000 }, { holdCount: 299 }).row.verdict).toBe('too-short');
  });

  it('a pinned entry is shown but fails on nothing but expirations', () => {
    const short = checkOne({ ttlMs: 2000, pinned: true, reason: 'vendor limit' });
    expect(short.row).toMatchObject({ verdict: 'too-short', failing: false });
    expect(short.attention).toBe(true);
    expect(short.result.exitCode).toBe(0);
    expect(checkOne({ ttlMs: 10_000, pinned: true }, {}, { strict: true }).row.failing).toBe(false);
    expect(short.row.decision.findings.find((f) => f.kind === 'held')).toMatchObject({ why: { kind: 'pinned', reason: 'vendor limit' } });
    expect(checkOne({ ttlMs: 2000, pinned: true }, { holdCount: 10 }, { failOnInsufficientData: true }).row.failing).toBe(false);
    const expired = checkOne({ ttlMs: 2000, pinned: true }, { expired: 1 });
    expect(expired.row).toMatchObject({ verdict: 'expired', failing: true });
    expect(expired.result.exitCode).toBe(1);
  });

  it('--min-change (10 % unless given, as in apply) hides, and does not fail on, a smaller move', () => {
    // 2.9 s → 3 s is +3.4 %: too short, but by little; apply would not move it either.
    const hidden = checkOne({ ttlMs: 2900 });
    expect(hidden.row).toMatchObject({ verdict: 'too-short', failing: false });
    expect(hidden.row.decision.apply).toMatchObject({ kind: 'hold', why: { kind: 'under-min-change' } });
    expect(hidden.result.exitCode).toBe(0);
    // Control: with no threshold the same move fails; and a move of exactly the threshold counts.
    expect(checkOne({ ttlMs: 2900 }, {}, { minChangePercent: 0 }).row.failing).toBe(true);
    expect(checkOne({ ttlMs: 2500 }, {}, { minChangePercent: 20 }).row.failing).toBe(true);
    // It hides too-long moves from --strict as well, but never an expiration the move would save.
    expect(checkOne({ ttlMs: 10_000 }, {}, { strict: true, minChangePercent: 80 }).row.failing).toBe(false);
    expect(checkOne({ ttlMs: 2900 }, { expired: 1, expiredHoldsMs: [2950] }, { minChangePercent: 50 }).row).toMatchObject({ verdict: 'expired', failing: true });
  });
});

describe('check: expirations judged against the policy’s TTL', () => {
  it('an expiration whose hold the policy’s TTL covers is resolved: noted, not failing', () => {
    // Two locks expired under the old 2 s TTL, after 2.5 s and 2.8 s; the policy now says 3 s.
    const { row, result } = checkOne({ ttlMs: 3000 }, { currentTtlMs: 2000, expired: 2, expiredHoldsMs: [2500, 2800] });
    expect(row).toMatchObject({ resolvedExpirations: 2, expirations: 0, failing: false });
    expect(row.verdict).not.toBe('expired');
    expect(row.decision.findings.map((f) => f.kind)).toContain('resolved');
    expect(result.exitCode).toBe(0);
  });

  it('one the recommendation would cover fails until applied; one it would not is the tail, a warning', () => {
    // TTL 2 s, recommended 3 s: a 2.5 s hold is saved by the move, a 6 s hold is not.
    const { row, result } = checkOne({ ttlMs: 2000 }, { expired: 2, expiredHoldsMs: [2500, 6000], maxMs: 6000 });
    expect(row).toMatchObject({ verdict: 'expired', expirations: 2, failing: true });
    expect(row.decision.expirations).toMatchObject({ fixable: 1, beyond: 1 });
    expect(result.exitCode).toBe(1);
    // At the recommended TTL the 6 s hold is a tail: a warning with its sentence, exit 0.
    const after = checkOne({ ttlMs: 3000 }, { expired: 2, expiredHoldsMs: [2500, 6000], maxMs: 6000 });
    expect(after.row).toMatchObject({ verdict: 'ok', failing: false, resolvedExpirations: 1, expirations: 1 });
    expect(after.row.decision.level).toBe('warn');
    expect(after.row.decision.findings.find((f) => f.kind === 'tail')).toMatchObject({ holds: 1, expired: 1, longestMs: 6000 });
    expect(after.result.exitCode).toBe(0);
    // A hold exactly at the TTL is not covered: it would expire again.
    expect(checkOne({ ttlMs: 2500 }, { expired: 1, expiredHoldsMs: [2500] }).row.expirations).toBe(1);
  });

  it('an expiration whose hold is unknown fails while the TTL is under the recommendation, and is a warning at or above it', () => {
    expect(checkOne({ ttlMs: 2000 }, { expired: 1 }).row).toMatchObject({ verdict: 'expired', failing: true });
    const above = checkOne({ ttlMs: 3000 }, { expired: 1 });
    expect(above.row).toMatchObject({ verdict: 'ok', failing: false });
    expect(above.row.decision.findings.map((f) => f.kind)).toContain('unseen-expirations');
    expect(above.row.decision.level).toBe('warn');
  });

  it('splitExpirations counts at most one hold per expiration, and never calls an unseen one covered', () => {
    const p = patternAnalysis('p', { expired: 2, expiredHoldsMs: [100, 200, 300, 9000] });
    expect(splitExpirations(p, 1000, 3000)).toEqual({ total: 2, covered: 2, fixable: 0, beyond: 0, unseen: 0 });
    expect(splitExpirations(patternAnalysis('p', { expired: 2 }), 1000, 3000)).toEqual({ total: 2, covered: 0, fixable: 0, beyond: 0, unseen: 2 });
    expect(splitExpirations(patternAnalysis('p'), 1000, 3000)).toEqual({ total: 0, covered: 0, fixable: 0, beyond: 0, unseen: 0 });
    const mixed = patternAnalysis('p', { expired: 4, expiredHoldsMs: [1200, 2500, 3500], censored: 1 });
    expect(splitExpirations(mixed, 1000, 3000)).toEqual({ total: 4, covered: 0, fixable: 2, beyond: 1, unseen: 1 });
    // A censored hold (its end unseen) is never covered, whatever the TTL.
    expect(splitExpirations(patternAnalysis('p', { expired: 1, censored: 1 }), 60_000, 3000).unseen).toBe(1);
  });
});

describe('check: patterns and entries that do not meet', () => {
  it('a pattern missing from the policy runs with the default: a warning, or a failure when a lock expired', () => {
    const quiet = checkPolicy(analysisOf([patternAnalysis('cart:lock:{id}')]), policyOf({}, 7000));
    expect(quiet.missingFromPolicy.map((p) => p.pattern)).toEqual(['cart:lock:{id}']);
    expect(quiet.defaultTtlMs).toBe(7000);
    expect(quiet.exitCode).toBe(0);
    // Under a default the recommendation would raise, an expiration fails: apply adds the entry.
    const lost = checkPolicy(analysisOf([patternAnalysis('cart:lock:{id}', { expired: 1, expiredHoldsMs: [2500] })]), policyOf({}, 2000));
    expect(lost.exitCode).toBe(1);
    expect(lost.missingFromPolicy[0]!.decision.apply).toEqual({ kind: 'write', toMs: 3000 });
  });

  it('an entry that matches no pattern in the data names the closest one: a misspelling, most likely', () => {
    const result = checkPolicy(analysisOf([patternAnalysis('order:lock:product:{id}')]), policyOf({ 'order:lock:prodcut:{id}': { ttlMs: 3000 } }));
    expect(result.noData).toEqual([{ pattern: 'order:lock:prodcut:{id}', suggestion: 'order:lock:product:{id}' }]);
    expect(result.exitCode).toBe(0);
    // Control: nothing close enough, no suggestion.
    expect(checkPolicy(analysisOf([patternAnalysis('cart:lock:{id}')]), policyOf({ 'order:lock:product:{id}': { ttlMs: 3000 } })).noData[0]!.suggestion).toBeUndefined();
  });

  it('an entry with no data in the window is listed, and fails nothing', () => {
    const result = checkPolicy(analysisOf([patternAnalysis('a')]), policyOf({ a: { ttlMs: 3000 }, gone: { ttlMs: 1000 } }));
    expect(result.noData).toEqual([{ pattern: 'gone', suggestion: undefined }]);
    expect(result.exitCode).toBe(0);
  });

  it('a template entry is matched by the data’s pattern, and the row names both', () => {
    const result = checkPolicy(analysisOf([patternAnalysis('order:lock:product:{id}')]), policyOf({ 'order:lock:product:{productId}': { ttlMs: 2000 } }));
    expect(result.rows[0]).toMatchObject({ pattern: 'order:lock:product:{productId}', dataPattern: 'order:lock:product:{id}', verdict: 'too-short' });
    expect(result.noData).toEqual([]);
  });

  it('lists rows worst verdict first, then by name', () => {
    const analysis = analysisOf([
      patternAnalysis('b-long'),
      patternAnalysis('a-long'),
      patternAnalysis('c-few', { holdCount: 10 }),
      patternAnalysis('d-short'),
      patternAnalysis('e-expired', { currentTtlMs: 2500, expired: 1, expiredHoldsMs: [2700] }),
    ]);
    const result = checkPolicy(
      analysis,
      policyOf({ 'b-long': { ttlMs: 10_000 }, 'a-long': { ttlMs: 10_000 }, 'c-few': { ttlMs: 3000 }, 'd-short': { ttlMs: 2000 }, 'e-expired': { ttlMs: 2500 } }),
    );
    expect(result.rows.map((r: CheckRow) => [r.pattern, r.verdict])).toEqual([
      ['e-expired', 'expired'],
      ['d-short', 'too-short'],
      ['a-long', 'too-long'],
      ['b-long', 'too-long'],
      ['c-few', 'insufficient-data'],
    ]);
  });
});
