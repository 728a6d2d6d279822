import Database from 'better-sqlite3';
import { copyFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analyze/analyze.js';
import { MIN_SAMPLES_FOR_P99 } from '../../src/analyze/confidence.js';
import type { PatternAnalysis } from '../../src/analyze/summarize.js';
import { BUCKET_MS, SCHEMA_VERSION } from '../../src/store/format.js';
import { DatabaseError } from '../../src/errors.js';
import { DEMO_START_MS } from '../../fixtures/generate.js';
import { queryDb } from '../helpers/db.js';
import { buildDb, nearestRankExact, rawHoldTimes } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const demo = buildDb(dir, 'demo.db');
const byPattern = (patterns: PatternAnalysis[], name: string) => patterns.find((p) => p.pattern === name)!;

function expectClose(approxMs: number, exactUs: number): void {
  const exactMs = exactUs / 1000;
  expect(approxMs).toBeGreaterThanOrEqual(exactMs);
  expect((approxMs - exactMs) / exactMs).toBeLessThanOrEqual(0.001);
}

describe('analyze', () => {
  const analysis = analyze([demo], { nowMs: DEMO_START_MS + 2 * 86_400_000 });

  it('states the risk in numbers, agreeing with exact counts over the raw rows (never below them)', () => {
    const holdsOver = (pattern: string, thresholdMs: number) =>
      queryDb<{ n: number }>(demo, 'SELECT count(*) AS n FROM samples WHERE pattern = ? AND hold_us > ?', pattern, thresholdMs * 1000)[0]!.n;
    for (const p of analysis.patterns) {
      const thresholds: [number, number][] = [
        [p.risk.overCurrentTtl, p.ttl.currentMs],
        [p.risk.nearMisses, p.ttl.currentMs / 2],
        [p.risk.overRecommendedTtl, p.recommendedTtlMs],
      ];
      for (const [reported, thresholdMs] of thresholds) {
        // At least the exact count; at most those within the histogram's resolution below the threshold.
        expect(reported, `${p.pattern} > ${thresholdMs} ms`).toBeGreaterThanOrEqual(holdsOver(p.pattern, thresholdMs));
        expect(reported, `${p.pattern} > ${thresholdMs} ms`).toBeLessThanOrEqual(holdsOver(p.pattern, thresholdMs * (1 - 1 / 1024)));
      }
      // Per day from a day of data or more (the demo has two).
      const days = (p.lastMs - p.firstMs) / 86_400_000;
      expect(p.risk.rate.per).toBe('day');
      expect(p.risk.rate.overCurrentTtl).toBeCloseTo(p.risk.overCurrentTtl / days, 6);
      expect(p.risk.crashWaitMs).toEqual({ current: p.ttl.currentMs, recommended: p.recommendedTtlMs });
      expect(p.risk.headroom.p99).toBeCloseTo(p.ttl.currentMs / p.holdMs.p99, 6);
      expect(p.risk.headroom.max).toBeCloseTo(p.ttl.currentMs / p.holdMs.max, 6);
    }
    // The demo's payment lock outlives its 5 s TTL; at the recommended TTL far fewer would.
    const payment = byPattern(analysis.patterns, 'payment:lock:order:{id}');
    expect(payment.risk.overCurrentTtl).toBeGreaterThan(0);
    expect(payment.risk.overRecommendedTtl).toBeLessThan(payment.risk.overCurrentTtl);
  });

  it('agrees with an exact computation over the raw rows, for every pattern', () => {
    const truth = queryDb<{ pattern: string; n: number; released: number; expired: number; not_acquired: number; threw: number }>(
      demo,
      `SELECT pattern, count(*) n, sum(outcome = 'released') released, sum(outcome = 'expired') expired,
              sum(outcome = 'not_acquired') not_acquired, sum(threw) threw FROM samples GROUP BY pattern`,
    );
    expect(analysis.patterns).toHaveLength(truth.length);
    for (const t of truth) {
      const p = byPattern(analysis.patterns, t.pattern);
      expect(p.count).toBe(t.n);
      expect(p.outcomes).toMatchObject({ released: t.released, expired: t.expired, not_acquired: t.not_acquired });
      expect(p.threw).toBe(t.threw);
      const holds = rawHoldTimes([demo], t.pattern);
      expect(p.holdCount).toBe(holds.length);
      expectClose(p.holdMs.p50, nearestRankExact(holds, 50));
      expectClose(p.holdMs.p90, nearestRankExact(holds, 90));
      expectClose(p.holdMs.p99, nearestRankExact(holds, 99));
      expectClose(p.holdMs.p999, nearestRankExact(holds, 99.9));
      expect(p.holdMs.max).toBe(holds.at(-1)! / 1000);
      expect(p.holdMs.mean).toBeCloseTo(holds.reduce((a, b) => a + b, 0) / holds.length / 1000, 6);
    }
  });

  it('gives each story of the demo its verdict, worst first', () => {
    const verdicts = Object.fromEntries(analysis.patterns.map((p) => [p.pattern, p.verdict]));
    expect(verdicts).toMatchObject({
      'payment:lock:order:{id}': 'expired',
      '<img src=x onerror=alert({id})>:{id}': 'too-short',
      'report:lock:tenant:{id}': 'too-long',
      'order:lock:product:{id}': 'ok',
      'mail:lock:user:{id}': 'insufficient-data',
    });
    const order = ['expired', 'too-short', 'too-long', 'ok', 'insufficient-data'];
    const ranks = analysis.patterns.map((p) => order.indexOf(p.verdict));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it('recommends max(3 s, 3 × p99) rounded up to 100 ms, against the TTL in use', () => {
    for (const p of analysis.patterns) {
      expect(p.recommendedTtlMs).toBe(Math.max(3000, Math.ceil((3 * p.holdMs.p99) / 100 - 1e-9) * 100));
    }
    const payment = byPattern(analysis.patterns, 'payment:lock:order:{id}');
    expect(payment.ttl).toEqual({ currentMs: 5000, minMs: 5000, maxMs: 5000 });
    expect(payment.recommendedTtlMs).toBeGreaterThan(5000);
  });

  it('flags the contended global lock and withholds p99 claims below 299 samples', () => {
    const global = byPattern(analysis.patterns, 'inventory:lock:global');
    expect(global.decision.findings).toContainEqual({ kind: 'contended', waitP99Ms: global.waitMs.p99, notAcquiredRate: global.outcomes.not_acquired / global.count });
    expect(global.outcomes.not_acquired).toBeGreaterThan(0);
    const mail = byPattern(analysis.patterns, 'mail:lock:user:{id}');
    expect(mail.holdCount).toBeLessThan(MIN_SAMPLES_FOR_P99);
    expect(mail.p99UpperBoundMs).toBeUndefined();
    expect(mail.decision.findings).toContainEqual({ kind: 'insufficient-data', holdCount: mail.holdCount, neededCount: MIN_SAMPLES_FOR_P99 });
    const order = byPattern(analysis.patterns, 'order:lock:product:{id}');
    expect(order.p99UpperBoundMs).toBeGreaterThanOrEqual(order.holdMs.p99);
    // Control: a pattern with enough samples and no contention has neither finding.
    expect(order.decision.findings.map((f) => f.kind)).not.toContain('insufficient-data');
    expect(order.decision.findings.map((f) => f.kind)).not.toContain('contended');
  });

  it('has an hourly p99 series covering the two days', () => {
    const order = byPattern(analysis.patterns, 'order:lock:product:{id}');
    expect(order.hourly).toHaveLength(48);
    expect(order.hourly.reduce((a, h) => a + h.count, 0)).toBe(order.count);
    const first = order.hourly[0]!;
    const holds = rawHoldTimes([demo], order.pattern, `ts_ms >= ${first.hourStartMs} AND ts_ms < ${first.hourStartMs + 3_600_000}`);
    expectClose(first.p99Ms, nearestRankExact(holds, 99));
    expect(analysis.warnings).toEqual([]);
  });

  it('limits the window with since / until, at hour bucket boundaries', () => {
    const since = DEMO_START_MS + 24 * 3_600_000;
    const until = since + 6 * 3_600_000;
    expect(since % BUCKET_MS).toBe(0);
    const part = analyze([demo], { sinceMs: since, untilMs: until });
    const order = byPattern(part.patterns, 'order:lock:product:{id}');
    const holds = rawHoldTimes([demo], order.pattern, `ts_ms >= ${since} AND ts_ms < ${until}`);
    expect(order.holdCount).toBe(holds.length);
    expectClose(order.holdMs.p99, nearestRankExact(holds, 99));
    expect(part.warnings).toEqual([{ kind: 'short-window', spanMs: part.window.toMs - part.window.fromMs }]);
    expect(part.window.toMs - part.window.fromMs).toBeLessThan(86_400_000);
  });

  it('selects patterns by glob', () => {
    const part = analyze([demo], { patterns: ['order:*', 'cart:lock:?uuid?'] });
    expect(part.patterns.map((p) => p.pattern).sort()).toEqual(['cart:lock:{uuid}', 'order:lock:product:{id}']);
  });

  it('merges several databases into one report', () => {
    // Another service's file: other instances (files that share instances count each once; see below).
    const other = buildDb(dir, 'other.db', { seed: 7, hours: 12, instancePrefix: 'other' });
    const both = analyze([demo, other]);
    const order = byPattern(both.patterns, 'order:lock:product:{id}');
    const holds = rawHoldTimes([demo, other], order.pattern);
    expect(order.holdCount).toBe(holds.length);
    expectClose(order.holdMs.p99, nearestRankExact(holds, 99));
    expect(both.sources).toEqual([basename(demo), basename(other)]); // outside the working directory: file names only
  });

  it('reads the same numbers from the sums over instances (schema 4) as from per-instance rows', () => {
    const perInstance = `${dir}/per-instance.db`;
    copyFileSync(demo, perInstance);
    const db = new Database(perInstance);
    db.exec('DROP TABLE fleet_rollups');
    db.pragma('user_version = 3');
    db.close();
    const strip = (a: ReturnType<typeof analyze>) => a.patterns;
    expect(strip(analyze([perInstance], { nowMs: 0 }))).toEqual(strip(analyze([demo], { nowMs: 0 })));
    expect(queryDb(demo, 'SELECT sum(count) AS n, sum(expired) AS e FROM fleet_rollups')).toEqual(
      queryDb(demo, 'SELECT sum(count) AS n, sum(expired) AS e FROM rollups'),
    );
  });

  it('an empty database is an empty analysis, not an error', () => {
    const empty = buildDb(dir, 'empty.db', { hours: 0 });
    const result = analyze([empty]);
    expect(result.patterns).toEqual([]);
    expect(result.warnings).toEqual([{ kind: 'nothing-matched', held: { samples: 0, firstMs: undefined, lastMs: undefined } }]);
  });

  it('refuses missing, foreign and newer databases with a DatabaseError', () => {
    expect(() => analyze([`${dir}/missing.db`])).toThrow(DatabaseError);
    const newer = `${dir}/newer.db`;
    const db = new Database(newer);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => analyze([newer])).toThrow(/newer than this ttl-advisor/);
    const foreign = `${dir}/foreign.db`;
    new Database(foreign).exec('CREATE TABLE t (x)');
    expect(() => analyze([foreign])).toThrow(/not a ttl-advisor samples database/);
  });
});

describe('inputs counted once', () => {
  it('the same file given twice, or through a link, is read once, and the analysis says so', async () => {
    const { symlinkSync } = await import('node:fs');
    const dir = tempDir();
    const db = buildDb(dir, 'once.db', { seed: 21, hours: 6 });
    const link = join(dir, 'once-link.db');
    symlinkSync(db, link);
    const single = analyze([db]);
    const twice = analyze([db, db, link]);
    expect(twice.patterns.map((p) => [p.pattern, p.count])).toEqual(single.patterns.map((p) => [p.pattern, p.count]));
    expect(twice.warnings.filter((w) => w.kind === 'same-file')).toEqual([
      { kind: 'same-file', path: db, firstPath: db },
      { kind: 'same-file', path: link, firstPath: db },
    ]);
    expect(single.warnings.filter((w) => w.kind === 'same-file')).toEqual([]);
  });

  it('a merged file and its inputs count each instance once', async () => {
    const { mergeDatabases } = await import('../../src/store/merge.js');
    const dir = tempDir();
    const a = buildDb(dir, 'inst-a.db', { seed: 31, hours: 6, instancePrefix: 'inst-a' });
    const b = buildDb(dir, 'inst-b.db', { seed: 32, hours: 6, instancePrefix: 'inst-b' });
    const merged = join(dir, 'inst-merged.db');
    mergeDatabases(merged, [a, b]);
    const expected = analyze([merged]).patterns.map((p) => [p.pattern, p.count, p.holdMs.p99]);
    const both = analyze([merged, a, b]);
    expect(both.patterns.map((p) => [p.pattern, p.count, p.holdMs.p99])).toEqual(expected);
    expect(both.warnings).toContainEqual({ kind: 'shared-instances', instances: expect.any(Number), firstPath: merged });
    // Control: files with different instances still add up.
    const sum = analyze([a, b]);
    expect(sum.warnings.map((w) => w.kind)).not.toContain('shared-instances');
    expect(sum.patterns.map((p) => [p.pattern, p.count])).toEqual(expected.map(([pattern, count]) => [pattern, count]));
  });
});
