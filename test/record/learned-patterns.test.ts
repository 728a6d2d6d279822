import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteRecorder, analyze, mergeDatabases, type Analysis, type LockSample } from '../../src/index.js';
import { FOLD, aggregatorFor } from '../../src/record/aggregator.js';
import { runCli } from '../helpers/cli.js';
import { queryDb } from '../helpers/db.js';
import { KEY_KINDS, corpus, exactPercentile, groupingAccuracy, type CorpusLock } from '../helpers/key-corpus.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let files = 0;
const START = Date.UTC(2026, 10, 1);
const SPAN_MS = 48 * 3600 * 1000;

function sampleOf(lock: CorpusLock, i: number, count: number): LockSample {
  return { key: lock.key, at: START + Math.floor((i * SPAN_MS) / count), holdMs: lock.holdMs, waitMs: 0, attempts: 1, ttlMs: 30_000, outcome: 'released' };
}

async function record(locks: readonly CorpusLock[], instance: string, order: readonly number[] = locks.map((_, i) => i)): Promise<string> {
  const path = join(dir, `learned-${files++}.db`);
  const recorder = new SqliteRecorder({ path, instance, flushIntervalMs: 60_000 });
  for (const i of order) recorder.record(sampleOf(locks[i]!, i, locks.length));
  const stats = await recorder.close();
  expect(stats.dropped).toBe(0);
  expect(stats.written).toBe(locks.length);
  return path;
}

/** Each kind's pattern must hold exactly its samples, with its p99 within 1 % of the exact nearest-rank p99 (never below). */
function expectEveryLockApart(analysis: Analysis, locks: readonly CorpusLock[]): void {
  const byPattern = new Map(analysis.patterns.map((p) => [p.pattern, p]));
  const { accuracy, wrong } = groupingAccuracy(locks, (p) => byPattern.get(p)?.count ?? 0);
  expect(wrong).toEqual([]);
  expect(accuracy).toBeGreaterThanOrEqual(0.99);
  expect(analysis.unattributed).toBeUndefined();
  expect(analysis.patterns).toHaveLength(KEY_KINDS.length);
  KEY_KINDS.forEach((kind, k) => {
    const holds = locks.filter((l) => l.kind === k).map((l) => l.holdMs);
    const exact = exactPercentile(holds, 99);
    const p99 = byPattern.get(kind.pattern)!.holdMs.p99;
    expect(p99, kind.name).toBeGreaterThanOrEqual(exact - 0.0015);
    expect(p99 / exact, kind.name).toBeLessThanOrEqual(1.01);
  });
}

describe('patterns learned from the keys, through a samples file', () => {
  const locks = corpus(58_000);

  it('58,000 locks of 19 critical sections over 48 h: each pattern holds exactly its lock, p99 within 1 %, nothing under {other}', async () => {
    const path = await record(locks, 'api-1');
    const analysis = analyze([path]);
    expectEveryLockApart(analysis, locks);
    // The file keeps the renames, and the report says how each pattern was learned.
    const aliases = queryDb(path, 'SELECT count(*) AS n FROM pattern_aliases')[0] as { n: number };
    expect(aliases.n).toBeGreaterThan(50);
    const account = analysis.patterns.find((p) => p.pattern === 'lock:account:{id}')!;
    expect(account.learned!.names).toBeGreaterThan(1);
    expect(account.learned!.positions).toEqual([{ position: 3, distinct: 33 }]);
    expect(analysis.patterns.find((p) => p.pattern === 'cron:lock:daily-digest')!.learned).toBeUndefined();
  });

  it('two files that learned in different orders read as one that saw everything: side by side, merged, and alone', async () => {
    const half = locks.length / 2;
    const first = locks.slice(0, half);
    const second = locks.slice(half);
    // b sees its locks backwards: it learns other names first, and renames others.
    const a = await record(first, 'api-1');
    const b = await record(second, 'api-2', second.map((_, i) => second.length - 1 - i));
    const all = await record(locks, 'api-1');
    const summary = (analysis: Analysis) => analysis.patterns.map((p) => [p.pattern, p.count, p.holdMs.p99, p.recommendedTtlMs]).sort();
    const alone = analyze([all]);
    expectEveryLockApart(analyze([a, b]), locks);
    expect(summary(analyze([a, b]))).toEqual(summary(alone));
    const merged = join(dir, 'merged.db');
    mergeDatabases(merged, [b, a]);
    expect(summary(analyze([merged]))).toEqual(summary(alone));
  });

  it('a file that saw a few names only reads them under the pattern another file learned', async () => {
    const few = [0, 1, 2, 3, 4].map((i) => ({ kind: 1, key: `lock:account:someone${String.fromCharCode(97 + i)}`, holdMs: 10 }));
    const a = await record(locks, 'api-1');
    const b = await record(few, 'api-2');
    const alone = analyze([b]);
    expect(alone.patterns.map((p) => p.pattern).sort()).toEqual(few.map((l) => l.key).sort());
    const together = analyze([a, b]);
    expect(together.patterns.find((p) => p.pattern === 'lock:account:{id}')!.count).toBe(locks.filter((l) => l.kind === 1).length + 5);
  });
});

describe('the bounds, while positions are learned', () => {
  it("a file's pattern budget: renames come before the rollups, so the learned pattern takes a renamed one's place", async () => {
    const path = join(dir, `budget-${files++}.db`);
    const recorder = new SqliteRecorder({ path, instance: 'api-1', maxPatterns: 32, flushIntervalMs: 60_000 });
    // 33 names in one seal: 32 provisional patterns fill the file's budget, the 33rd name makes lock:user:{id}.
    for (let i = 0; i < 33; i++) recorder.record({ key: `lock:user:name${String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26))}`, at: START + i, holdMs: 5, ttlMs: 5000, outcome: 'released' });
    await recorder.close();
    const analysis = analyze([path]);
    expect(analysis.patterns.map((p) => [p.pattern, p.count])).toEqual([['lock:user:{id}', 33]]);
    expect(analysis.unattributed).toBeUndefined();
  });

  it('hours of renamed provisional patterns do not count against the memory bound', () => {
    // maxPatterns 10: room for 94 (pattern, hour) aggregates; ten families learned in one hour hold 111 (ten provisional
    // patterns each, the budget freed by each family's renames, and its learned one).
    const aggregator = aggregatorFor('hours', [], { maxPatterns: 10, budget: { failed: 10, slowest: 1, uniform: 1 }, rawSampleRate: 0, maxPendingRawRows: 100 });
    const word = (n: number) => String.fromCharCode(97 + (n % 26), 97 + Math.floor(n / 26));
    const codes: number[] = [];
    const families = ['user', 'team', 'org', 'tenant', 'shop', 'board', 'sheet', 'doc', 'room', 'deal'];
    for (const family of families) for (let i = 0; i < 40; i++) codes.push(aggregator.fold({ key: `lock:${family}:name${word(i)}`, at: START, holdMs: 1, ttlMs: 1000, outcome: 'released' }));
    // Later hours of the learned patterns, and of others, still find room.
    for (let h = 1; h <= 3; h++) for (const family of families) codes.push(aggregator.fold({ key: `lock:${family}:namezz`, at: START + h * 3_600_000, holdMs: 1, ttlMs: 1000, outcome: 'released' }));
    expect(codes.filter((c) => c !== FOLD.counted)).toEqual([]);
  });
});

describe('the memory bound over weeks', () => {
  it('{other} renamed with the patterns it stood in for goes on counting its hours: the bound never shrinks', () => {
    // Room for 2 patterns (70 aggregates): user names past the budget go to {other} while their position is learned.
    const aggregator = aggregatorFor('weeks', [], { maxPatterns: 2, budget: { failed: 10, slowest: 1, uniform: 1 }, rawSampleRate: 0, maxPendingRawRows: 100 });
    const name = (i: number) => `lock:user:name${String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26))}`;
    const hour = 3_600_000;
    const codes: number[] = [];
    for (let i = 0; i < 40; i++) codes.push(aggregator.fold({ key: name(i), at: START, holdMs: 1, ttlMs: 1000, outcome: 'released' }));
    codes.push(aggregator.fold({ key: 'job:lock:cleanup', at: START, holdMs: 1, ttlMs: 1000, outcome: 'released' }));
    // 200 hours: each a new pattern past the budget ({other}), the learned one, and a seal that retires the hours before.
    for (let h = 1; h <= 200; h++) {
      codes.push(aggregator.fold({ key: `svc${h}:lock:x`, at: START + h * hour, holdMs: 1, ttlMs: 1000, outcome: 'released' }));
      codes.push(aggregator.fold({ key: name(h % 40), at: START + h * hour, holdMs: 1, ttlMs: 1000, outcome: 'released' }));
      aggregator.seal(START + h * hour + 10 * 60_000);
    }
    expect(codes.filter((c) => c !== FOLD.counted)).toEqual([]);
    expect(aggregator.hoursInMemory).toBeLessThan(10);
  });
});

describe('renames are never lost with a seal', () => {
  it('a seal that reached no file or stream gives its renames back, and the next seal carries them', () => {
    const aggregator = aggregatorFor('restore', [], { maxPatterns: 100, budget: { failed: 10, slowest: 1, uniform: 1 }, rawSampleRate: 0, maxPendingRawRows: 100 });
    for (let i = 0; i < 33; i++) aggregator.fold({ key: `lock:user:name${String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26))}`, at: START, holdMs: 1, ttlMs: 1000, outcome: 'released' });
    const lost = aggregator.seal(START).batches;
    expect(lost.flatMap((b) => b.aliases ?? [])).toHaveLength(32);
    expect(aggregator.seal(START).batches.flatMap((b) => b.aliases ?? [])).toEqual([]);
    aggregator.restoreAliases(lost);
    expect(aggregator.seal(START).batches.flatMap((b) => b.aliases ?? [])).toEqual(lost.flatMap((b) => b.aliases ?? []));
  });
});

describe('adversarial orders, through the aggregator', () => {
  it('ten families of 200,000 distinct names each, one family at a time then interleaved: nothing dropped, memory bounded', () => {
    const families = ['user', 'account', 'tenant', 'sku', 'slug', 'name', 'team', 'org', 'project', 'board'];
    const aggregator = aggregatorFor('adversary', [], { maxPatterns: 1000, budget: { failed: 100, slowest: 10, uniform: 40 }, rawSampleRate: 0, maxPendingRawRows: 10_000 });
    const at = START;
    let folded = 0;
    let counted = 0;
    let sealed = 0;
    let maxHours = 0;
    const patterns = new Set<string>();
    const seal = (final: boolean) => {
      maxHours = Math.max(maxHours, aggregator.hoursInMemory);
      const { batches, samples } = aggregator.seal(at, final);
      sealed += samples;
      for (const r of batches.flatMap((b) => b.rollups)) patterns.add(r.pattern);
    };
    const fold = (key: string) => {
      if (aggregator.fold({ key, at: at + (folded % 3_600_000), holdMs: 1, ttlMs: 5000, outcome: 'released' }) === FOLD.counted) counted++;
      if (++folded % 100_000 === 0) seal(false);
    };
    const word = (n: number) => n.toString(26).replace(/./g, (c) => String.fromCharCode(97 + parseInt(c, 26)));
    // One family's ids first, whole.
    for (const family of families.slice(0, 5)) for (let i = 0; i < 200_000; i++) fold(`lock:${family}:${word(i)}-${word(i * 7)}`);
    // Then interleaved.
    for (let i = 0; i < 200_000; i++) for (const family of families.slice(5)) fold(`lock:${family}:${word(i)}-${word(i * 7)}`);
    seal(true);
    expect(counted).toBe(2_000_000);
    expect(sealed).toBe(2_000_000);
    expect(patterns.has('{other}')).toBe(false);
    // Each family: its learned pattern, and the provisional ones before it (renamed, read as the learned one).
    const learned = [...patterns].filter((p) => /^lock:[a-z]+:\{id\}$/.test(p));
    expect(new Set(learned)).toEqual(new Set(families.map((f) => `lock:${f}:{id}`)));
    expect(maxHours).toBeLessThanOrEqual(families.length * 33);
    expect(aggregator.patternOverflow).toBe(0);
  });
});

describe('what people read: stats, the reports, {other}', () => {
  it('stats and the reports say how a pattern was learned', async () => {
    const locks = corpus(20_000, 11);
    const path = await record(locks, 'api-1');
    const stats = await runCli(['stats', '--db', path]);
    expect(stats.code).toBe(0);
    expect(stats.stdout).toMatch(new RegExp(`patterns +${KEY_KINDS.length} \\(\\d+ names recorded, read as these once their positions were learned\\)`));
    expect(stats.stdout).toContain('lock:account:{id}: learned from the keys at position 3 (past 32 distinct values)');
    const out = join(dir, `reports-${files++}`);
    expect((await runCli(['report', '--db', path, '--format', 'json', '--out', out])).code).toBe(0);
    const json = JSON.parse(readFileSync(join(out, 'ttl-report.json'), 'utf8')) as {
      patterns: { pattern: string; learned: { names: number; positions: unknown[]; text: string } | null }[];
    };
    const account = json.patterns.find((p) => p.pattern === 'lock:account:{id}')!;
    expect(account.learned!.positions).toEqual([{ position: 3, distinct: 33 }]);
    expect(json.patterns.find((p) => p.pattern === 'cron:lock:daily-digest')!.learned).toBeNull();
  });

  it('{other} is counted apart: no verdict, no recommendation, no policy entry, and the reports say why and what to do', async () => {
    // A recorder with room for 3 patterns: the rest of the corpus goes to {other}.
    const locks = corpus(5000, 12);
    const path = join(dir, `other-${files++}.db`);
    const recorder = new SqliteRecorder({ path, instance: 'small', maxPatterns: 3, flushIntervalMs: 60_000 });
    // A second apart: an hour and a half, so that every (pattern, hour) finds room in memory.
    locks.forEach((l, i) => recorder.record({ ...sampleOf(l, i, locks.length), at: START + i * 1000 }));
    expect((await recorder.close()).dropped).toBe(0);
    const analysis = analyze([path]);
    expect(analysis.patterns.map((p) => p.pattern)).not.toContain('{other}');
    expect(analysis.unattributed!.count).toBe(locks.length - analysis.patterns.reduce((n, p) => n + p.count, 0));
    const out = join(dir, `reports-${files++}`);
    const table = await runCli(['report', '--db', path, '--format', 'md,json', '--out', out]);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('name those keys with templates (`patterns`), or raise `maxPatterns`');
    expect(readFileSync(join(out, 'ttl-report.md'), 'utf8')).toMatch(/samples under \\\{other\\\} belong to no one lock/);
    const json = JSON.parse(readFileSync(join(out, 'ttl-report.json'), 'utf8')) as { unattributed: { count: number }; patterns: { pattern: string }[] };
    expect(json.unattributed.count).toBe(analysis.unattributed!.count);
    expect(json.patterns.map((p) => p.pattern)).not.toContain('{other}');
    const policy = join(dir, `other-policy-${files}.json`);
    expect((await runCli(['init', '--db', path, '--policy', policy, '--min-window', '0'])).code).toBe(0);
    expect(Object.keys((JSON.parse(readFileSync(policy, 'utf8')) as { locks: object }).locks)).not.toContain('{other}');
    const check = await runCli(['check', '--db', path, '--policy', policy]);
    expect(check.stdout + check.stderr).not.toContain('{other}');
  });
});
