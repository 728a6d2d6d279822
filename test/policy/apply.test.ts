import { describe, expect, it } from 'vitest';
import { applyRecommendations, DEFAULT_APPLY_MIN_CHANGE_PERCENT, DEFAULT_APPLY_MIN_WINDOW_MS } from '../../src/policy/apply.js';
import { checkPolicy } from '../../src/policy/check.js';
import { TtlPolicy, type PolicyDocument, type PolicyEntry } from '../../src/policy/policy.js';
import { analysisOf, patternAnalysis, type PatternFacts } from '../helpers/analysis.js';

/**
 * `apply` on analyses built in memory: a TTL moves only on evidence — enough
 * hold times, a long enough window, a big enough change, an entry not pinned —
 * and every recommendation left out comes back with its reason. p99 1 s gives
 * the default recommendation 3 s.
 */

const HOUR_MS = 3_600_000;
const policyOf = (locks: Record<string, PolicyEntry>, defaultTtlMs?: number) =>
  new TtlPolicy({ locks, ...(defaultTtlMs !== undefined && { defaultTtlMs }) });

/** `apply` for one pattern `p` configured with `entry` (or not in the file). */
function applyOne(entry: PolicyEntry | undefined, facts: PatternFacts = {}, options: Parameters<typeof applyRecommendations>[2] = {}) {
  return applyRecommendations(analysisOf([patternAnalysis('p', facts)]), policyOf(entry ? { p: entry } : {}), options);
}

describe('apply: what it writes', () => {
  it('moves a TTL to the recommendation, keeping the entry’s other fields and the file’s default', () => {
    const policy = policyOf({ p: { ttlMs: 2000, reason: 'measured in May' } }, 7000);
    const { document, changes, skipped } = applyRecommendations(analysisOf([patternAnalysis('p')]), policy);
    expect(changes).toEqual([{ pattern: 'p', fromMs: 2000, toMs: 3000 }]);
    expect(skipped).toEqual([]);
    expect(document).toEqual({ locks: { p: { ttlMs: 3000, reason: 'measured in May' } }, defaultTtlMs: 7000 });
    // The policy it was given is left as it was.
    expect(policy.document.locks.p!.ttlMs).toBe(2000);
  });

  it('lowers a TTL that is too long as well', () => {
    expect(applyOne({ ttlMs: 300_000 }).changes).toEqual([{ pattern: 'p', fromMs: 300_000, toMs: 3000 }]);
  });

  it('a TTL already at the recommendation is neither changed nor reported as skipped', () => {
    expect(applyOne({ ttlMs: 3000 })).toMatchObject({ changes: [], skipped: [] });
  });

  it('appends patterns the file lacks, in name order, after the changes in the file’s order', () => {
    const analysis = analysisOf([
      patternAnalysis('zeta:lock:{id}'),
      patternAnalysis('second', { p99Ms: 2000 }),
      patternAnalysis('alpha:lock:{id}', { p99Ms: 3000 }),
      patternAnalysis('first'),
    ]);
    const { document, changes } = applyRecommendations(analysis, policyOf({ first: { ttlMs: 1000 }, second: { ttlMs: 1000 } }));
    expect(changes).toEqual([
      { pattern: 'first', fromMs: 1000, toMs: 3000 },
      { pattern: 'second', fromMs: 1000, toMs: 6000 },
      { pattern: 'alpha:lock:{id}', fromMs: undefined, toMs: 9000 },
      { pattern: 'zeta:lock:{id}', fromMs: undefined, toMs: 3000 },
    ]);
    expect(Object.keys(document.locks)).toEqual(['first', 'second', 'alpha:lock:{id}', 'zeta:lock:{id}']);
    expect(document.locks['alpha:lock:{id}']).toEqual({ ttlMs: 9000 });
  });

  it('writes a template entry under the template’s name', () => {
    const analysis = analysisOf([patternAnalysis('order:lock:product:{id}')]);
    const { document, changes } = applyRecommendations(analysis, policyOf({ 'order:lock:product:{productId}': { ttlMs: 1000 } }));
    expect(changes).toEqual([{ pattern: 'order:lock:product:{productId}', fromMs: 1000, toMs: 3000 }]);
    expect(Object.keys(document.locks)).toEqual(['order:lock:product:{productId}']);
  });

  it('is idempotent: applied again to the same data it changes nothing, and check then passes', () => {
    const analysis = analysisOf([patternAnalysis('a', { p99Ms: 2000 }), patternAnalysis('b', { p99Ms: 50 }), patternAnalysis('c')]);
    const first = applyRecommendations(analysis, policyOf({ a: { ttlMs: 1000 }, b: { ttlMs: 60_000 } }));
    const again = applyRecommendations(analysis, new TtlPolicy(first.document));
    expect(again).toEqual({ document: first.document, changes: [], skipped: [] });
    expect(checkPolicy(analysis, new TtlPolicy(first.document), { strict: true }).exitCode).toBe(0);
  });

  it('patterns that share a template entry get one TTL that covers them all (check passes after apply)', () => {
    // Both data patterns match `job:lock:{name}`; the one that needs more comes first or last alike.
    for (const order of [[4000, 100], [100, 4000]]) {
      const analysis = analysisOf(order.map((p99Ms) => patternAnalysis(p99Ms > 1000 ? 'job:lock:{uuid}' : 'job:lock:{id}', { p99Ms })));
      const policy = policyOf({ 'job:lock:{name}': { ttlMs: 5000 } });
      const { document, changes, skipped } = applyRecommendations(analysis, policy);
      expect(document.locks['job:lock:{name}']!.ttlMs).toBe(12_000);
      expect(changes).toEqual([{ pattern: 'job:lock:{name}', fromMs: 5000, toMs: 12_000 }]);
      // The lower recommendation is left out, and says why.
      expect(skipped).toEqual([
        {
          pattern: 'job:lock:{name}',
          fromMs: 5000,
          toMs: 3000,
          reason: 'shared-entry',
          why: { kind: 'shared-entry', other: 'job:lock:{uuid}', otherMs: 12_000 },
          noRecommendation: false,
        },
      ]);
      expect(checkPolicy(analysis, new TtlPolicy(document)).exitCode).toBe(0);
    }
  });

  it('a shared entry moves on the evidence of the pattern that needs most', () => {
    // The demanding pattern has too few samples: the entry stays, even though the other's data would lower it.
    const analysis = analysisOf([patternAnalysis('job:lock:{uuid}', { p99Ms: 4000, holdCount: 50 }), patternAnalysis('job:lock:{id}', { p99Ms: 100 })]);
    const { changes, skipped } = applyRecommendations(analysis, policyOf({ 'job:lock:{name}': { ttlMs: 5000 } }));
    expect(changes).toEqual([]);
    expect(skipped.map((s) => [s.reason, s.toMs])).toEqual([
      ['too-few-samples', 12_000],
      ['shared-entry', 3000],
    ]);
    // Pinned, every pattern of the entry says so.
    const pinned = applyRecommendations(analysis, policyOf({ 'job:lock:{name}': { ttlMs: 5000, pinned: true } }));
    expect(pinned.skipped.map((s) => [s.reason, s.toMs])).toEqual([
      ['pinned', 12_000],
      ['pinned', 3000],
    ]);
  });
});

describe('apply: the evidence rules, each with its reason', () => {
  it('a pinned entry is never changed', () => {
    expect(applyOne({ ttlMs: 2000, pinned: true, reason: 'vendor limit' })).toMatchObject({
      changes: [],
      skipped: [{ pattern: 'p', fromMs: 2000, toMs: 3000, reason: 'pinned', why: { kind: 'pinned', reason: 'vendor limit' } }],
    });
    expect(applyOne({ ttlMs: 2000, pinned: true }).skipped[0]).toMatchObject({ reason: 'pinned', why: { kind: 'pinned', reason: undefined } });
    // Pinned says why first, whatever else the data lacks.
    expect(applyOne({ ttlMs: 2000, pinned: true }, { holdCount: 5, spanMs: HOUR_MS }).skipped[0]!.reason).toBe('pinned');
    // Pinned and too little data: the number it left out is no recommendation, and is marked so.
    expect(applyOne({ ttlMs: 2000, pinned: true }, { holdCount: 5 }).skipped[0]!.noRecommendation).toBe(true);
    expect(applyOne({ ttlMs: 2000, pinned: true }).skipped[0]!.noRecommendation).toBe(false);
  });

  it('too few hold times for a p99 claim: no move, in the file or out of it', () => {
    expect(applyOne({ ttlMs: 2000 }, { holdCount: 298 })).toMatchObject({
      changes: [],
      skipped: [{ reason: 'too-few-samples', why: { kind: 'too-few-samples', holdCount: 298, neededCount: 299 } }],
    });
    expect(applyOne(undefined, { holdCount: 298 })).toMatchObject({
      document: { locks: {} },
      skipped: [{ pattern: 'p', fromMs: undefined, toMs: 3000, reason: 'too-few-samples' }],
    });
    // Control: 299 are enough.
    expect(applyOne({ ttlMs: 2000 }, { holdCount: 299 }).changes).toHaveLength(1);
  });

  it('a window shorter than --min-window (24 h unless given): no move', () => {
    expect(DEFAULT_APPLY_MIN_WINDOW_MS).toBe(24 * HOUR_MS);
    expect(applyOne({ ttlMs: 2000 }, { spanMs: 23 * HOUR_MS })).toMatchObject({
      changes: [],
      skipped: [{ reason: 'short-window', why: { kind: 'short-window', spanMs: 23 * HOUR_MS, minWindowMs: 24 * HOUR_MS } }],
    });
    expect(applyOne(undefined, { spanMs: 23 * HOUR_MS }).skipped[0]).toMatchObject({ fromMs: undefined, reason: 'short-window' });
    // Control: a full day is enough, and a smaller --min-window lets the shorter one through.
    expect(applyOne({ ttlMs: 2000 }, { spanMs: 24 * HOUR_MS }).changes).toHaveLength(1);
    expect(applyOne({ ttlMs: 2000 }, { spanMs: 23 * HOUR_MS }, { minWindowMs: 6 * HOUR_MS }).changes).toHaveLength(1);
    expect(applyOne({ ttlMs: 2000 }, { spanMs: 0 }, { minWindowMs: 0 }).changes).toHaveLength(1);
  });

  it('a move smaller than --min-change (10 % unless given): no move', () => {
    expect(DEFAULT_APPLY_MIN_CHANGE_PERCENT).toBe(10);
    // 2.8 s → 3 s is 7.1 %.
    expect(applyOne({ ttlMs: 2800 })).toMatchObject({
      changes: [],
      skipped: [{ pattern: 'p', fromMs: 2800, toMs: 3000, reason: 'under-min-change', why: { kind: 'under-min-change', minChangePercent: 10 } }],
    });
    // Measured against the TTL in the file, both ways; exactly the threshold moves.
    expect(applyOne({ ttlMs: 3300 }).skipped[0]?.reason).toBe('under-min-change'); // −9.1 %
    expect(applyOne({ ttlMs: 2500 }, {}, { minChangePercent: 20 }).changes).toEqual([{ pattern: 'p', fromMs: 2500, toMs: 3000 }]);
    expect(applyOne({ ttlMs: 2800 }, {}, { minChangePercent: 0 }).changes).toHaveLength(1);
    // A pattern new to the file has no change to measure: it is added.
    expect(applyOne(undefined, {}, { minChangePercent: 1000 }).changes).toEqual([{ pattern: 'p', fromMs: undefined, toMs: 3000 }]);
  });

  it('reports every recommendation left out, each with its own reason', () => {
    const analysis = analysisOf([
      patternAnalysis('pinned'),
      patternAnalysis('few', { holdCount: 10 }),
      patternAnalysis('short', { spanMs: HOUR_MS }),
      patternAnalysis('small'),
      patternAnalysis('moves'),
    ]);
    const policy = policyOf({ pinned: { ttlMs: 1000, pinned: true }, few: { ttlMs: 1000 }, short: { ttlMs: 1000 }, small: { ttlMs: 2900 }, moves: { ttlMs: 1000 } });
    const { changes, skipped } = applyRecommendations(analysis, policy);
    expect(changes.map((c) => c.pattern)).toEqual(['moves']);
    expect(skipped.map((s) => [s.pattern, s.reason])).toEqual([
      ['pinned', 'pinned'],
      ['few', 'too-few-samples'],
      ['short', 'short-window'],
      ['small', 'under-min-change'],
    ]);
  });
});

describe('apply: the document it returns', () => {
  it('keeps entries it did not touch as they were', () => {
    const locks: PolicyDocument['locks'] = { keep: { ttlMs: 1234, reason: 'r' }, p: { ttlMs: 1000 } };
    const { document } = applyRecommendations(analysisOf([patternAnalysis('p')]), policyOf(locks));
    expect(document.locks.keep).toEqual({ ttlMs: 1234, reason: 'r' });
    expect(document.locks.p).toEqual({ ttlMs: 3000 });
  });
});
