import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteRecorder, analyze, type LockSample, type Outcome, type RecorderWarning } from '../../src/index.js';
import { BUCKET_MS, SCHEMA_VERSION } from '../../src/store/format.js';
import { schemaDdlUpTo } from '../../src/store/schema.js';
import { runCli } from '../helpers/cli.js';
import { countRows, queryDb, rollupTotal } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let n = 0;
const dbPath = () => join(dir, `agg-${n++}.db`);
const HOUR0 = Date.UTC(2026, 10, 30, 8);

/** A deterministic generator, so a failure can be replayed. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

/** The exact nearest-rank percentile; the rank in integer arithmetic (99.9 / 100 × 100,000 is 99,900.00000000001 in floating point). */
function nearestRank(sorted: readonly number[], percentile: number): number {
  const rank = Math.ceil((Math.round(percentile * 10) * sorted.length) / 1000);
  return sorted[Math.max(1, rank) - 1]!;
}

describe('in-process aggregation: statistics never depend on the writer keeping up', () => {
  it('a synchronous burst of 2,000,000 samples: the report counts all of them; raw rows are the budget', async () => {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path, instance: 'burst' });
    const random = lcg(7);
    for (let i = 0; i < 2_000_000; i++) {
      recorder.record({ key: `order:lock:product:${i % 1000}`, at: HOUR0 + (i % 3_600_000), holdMs: 1 + random() * 50, ttlMs: 3000, outcome: 'released' });
    }
    const stats = await recorder.close();
    expect(stats).toMatchObject({ recorded: 2_000_000, written: 2_000_000, dropped: 0, pending: 0 });
    expect(rollupTotal(path)).toBe(2_000_000);
    const analysis = analyze([path]);
    expect(analysis.patterns.map((p) => [p.pattern, p.count])).toEqual([['order:lock:product:{id}', 2_000_000]]);
    // One pattern-hour: its 10 slowest holds and 40 uniform rows, each row once (a row can be both).
    const raw = countRows(path, 'raw_samples');
    expect(raw).toBe(stats.rawWritten);
    expect(raw).toBeGreaterThanOrEqual(40);
    expect(raw).toBeLessThanOrEqual(50);
  });

  it('a writer blocked for seconds by another process: once it frees, the rollups count every lock', async () => {
    const path = dbPath();
    const first = new SqliteRecorder({ path });
    first.record({ key: 'order:lock:product:1', at: HOUR0, holdMs: 1, ttlMs: 3000, outcome: 'released' });
    await first.close();
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    const recorder = new SqliteRecorder({ path, flushIntervalMs: 50, busyTimeoutMs: 100, flushTimeoutMs: 10_000 });
    const started = Date.now();
    let recorded = 0;
    while (Date.now() - started < 2500) {
      for (let i = 0; i < 5000; i++, recorded++) {
        recorder.record({ key: `order:lock:product:${i}`, at: HOUR0 + (recorded % BUCKET_MS), holdMs: 2, ttlMs: 3000, outcome: 'released' });
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(recorder.stats()).toMatchObject({ written: 0, dropped: 0, pending: recorded });
    holder.exec('ROLLBACK');
    holder.close();
    const stats = await recorder.close();
    expect(stats).toMatchObject({ recorded, written: recorded, dropped: 0, pending: 0 });
    expect(rollupTotal(path)).toBe(recorded + 1);
  });

  it('percentiles from the rollups equal exact nearest-rank ones over every sample, within 0.1 %, never below', async () => {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path });
    const random = lcg(42);
    const truth = new Map<string, number[]>();
    for (let i = 0; i < 300_000; i++) {
      const kind = i % 3;
      const key = ['order:lock:product:', 'cart:lock:user:', 'stock:lock:sku:'][kind]! + (i % 997);
      // lognormal-ish holds, a bimodal one, and a heavy tail
      const u = random();
      const holdMs = kind === 0 ? Math.exp(2 + u * 2) : kind === 1 ? (u < 0.9 ? 3 + u : 800 + u * 400) : 1 / (1 - u * 0.999);
      const rounded = Math.round(holdMs * 1000) / 1000;
      recorder.record({ key, at: HOUR0 + i * 400, holdMs: rounded, ttlMs: 10_000, outcome: 'released' });
      const pattern = key.replace(/\d+$/, '{id}');
      (truth.get(pattern) ?? truth.set(pattern, []).get(pattern)!).push(Math.round(rounded * 1000));
    }
    await recorder.close();
    const analysis = analyze([path]);
    for (const p of analysis.patterns) {
      const sorted = truth.get(p.pattern)!.sort((a, b) => a - b);
      expect(p.count).toBe(sorted.length);
      for (const [percentile, got] of [[50, p.holdMs.p50], [90, p.holdMs.p90], [99, p.holdMs.p99], [99.9, p.holdMs.p999]] as const) {
        const exact = nearestRank(sorted, percentile) / 1000;
        expect(got).toBeGreaterThanOrEqual(exact);
        expect(got).toBeLessThanOrEqual(exact * 1.001 + 0.001);
      }
    }
  });
});

describe('the raw-row budget', () => {
  it('keeps every failed lock, the slowest holds of each pattern-hour, and a uniform sample', async () => {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path, rawSlowestPerHour: 10, rawUniformPerHour: 50 });
    const random = lcg(3);
    const failures: Outcome[] = ['expired', 'not_acquired', 'error', 'lost'];
    const holds = new Map<number, number[]>();
    let failed = 0;
    for (let i = 0; i < 40_000; i++) {
      const hour = HOUR0 + (i % 2) * BUCKET_MS;
      const outcome: Outcome = i % 997 === 0 ? failures[failed++ % 4]! : 'released';
      const holdMs = outcome === 'not_acquired' ? undefined : Math.round(random() * 100_000) / 1000;
      const sample: LockSample = { key: `order:lock:product:${i % 50}`, at: hour + (i % 1000), holdMs, ttlMs: 5000, outcome, threw: i % 1999 === 0 };
      recorder.record(sample);
      if (holdMs !== undefined) (holds.get(hour) ?? holds.set(hour, []).get(hour)!).push(Math.round(holdMs * 1000));
    }
    const stats = await recorder.close();
    const abnormal = queryDb<{ n: number }>(path, "SELECT count(*) AS n FROM samples WHERE outcome <> 'released' OR threw = 1")[0]!.n;
    expect(abnormal).toBe(failed + Math.ceil(40_000 / 1999) - 1); // i = 0 is both failed and threw: one row
    for (const [hour, values] of holds) {
      const slowest = values.sort((a, b) => b - a).slice(0, 10);
      const kept = queryDb<{ hold_us: number }>(path, 'SELECT hold_us FROM samples WHERE ts_ms >= ? AND ts_ms < ? ORDER BY hold_us DESC LIMIT 10', hour, hour + BUCKET_MS);
      expect(kept.map((r) => r.hold_us)).toEqual(slowest);
    }
    const raw = countRows(path, 'raw_samples');
    expect(raw).toBe(stats.rawWritten);
    expect(raw).toBeLessThan(2 * (50 + 10 * 12) + abnormal); // two pattern-hours: far fewer rows than 40,000 locks
    expect(rollupTotal(path)).toBe(40_000);
  });

  it('stops raw rows at maxDatabaseBytes while the counts keep rising, and says so in stats', async () => {
    const path = dbPath();
    const warnings: RecorderWarning[] = [];
    const recorder = new SqliteRecorder({ path, rawSampleRate: 1, maxDatabaseBytes: 1024 * 1024, flushIntervalMs: 20, onWarning: (w) => warnings.push(w) });
    let recorded = 0;
    for (let round = 0; round < 12; round++) {
      for (let i = 0; i < 10_000; i++, recorded++) {
        recorder.record({ key: `order:lock:product:${recorded}:${'x'.repeat(40)}`, at: HOUR0 + recorded, holdMs: 3, ttlMs: 3000, outcome: 'released' });
      }
      await recorder.flush();
    }
    const stats = await recorder.close();
    expect(stats).toMatchObject({ recorded, written: recorded, dropped: 0 });
    expect(stats.rawDropped).toBeGreaterThan(0);
    expect(stats.rawWritten + stats.rawDropped).toBe(recorded);
    expect(rollupTotal(path)).toBe(recorded);
    const pages = queryDb<{ page_count: number }>(path, 'PRAGMA page_count')[0]!.page_count;
    expect(pages * 4096).toBeLessThan(1024 * 1024 + 10_000 * 200); // past the limit by at most one batch of raw rows
    expect(warnings.map((w) => w.kind)).toContain('file-full');
    const { stdout } = await runCli(['stats', '--db', path]);
    expect(stdout).toMatch(/raw rows stopped since .*: the file reached maxDatabaseBytes; rollups go on/);
    expect(stdout).toMatch(/raw rows dropped\s+[\d,]+ \(the rollups still count every lock\)/);
  });
});

describe('the bounded file over time', () => {
  it('`ttl-advisor prune --older-than` removes old hours and raw rows, keeps the rest, and refuses bad input', async () => {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path, rawSampleRate: 1 });
    const now = Date.now();
    for (let h = 0; h < 72; h++) {
      for (let i = 0; i < 100; i++) recorder.record({ key: `order:lock:product:${i}`, at: now - h * BUCKET_MS, holdMs: 2, ttlMs: 3000, outcome: 'released' });
    }
    await recorder.close();
    const { code, stdout } = await runCli(['prune', '--older-than', '24h', '--db', path]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/removed data before .* — [\d,]+ raw rows, [\d,]+ rollup rows/);
    const oldest = queryDb<{ b: number }>(path, 'SELECT min(bucket_start_ms) AS b FROM rollups')[0]!.b;
    expect(oldest).toBeGreaterThanOrEqual(now - 25 * BUCKET_MS);
    expect(rollupTotal(path)).toBeGreaterThanOrEqual(2400);
    expect(rollupTotal(path)).toBeLessThanOrEqual(2500);
    expect(queryDb<{ n: number }>(path, 'SELECT count(*) AS n FROM raw_samples WHERE ts_ms < ?', oldest)[0]!.n).toBe(0);

    for (const args of [['prune', '--db', path], ['prune', '--older-than', 'yesterdayish', '--db', path], ['prune', '--older-than', '1d', '--db', join(dir, 'missing.db')]]) {
      const bad = await runCli(args);
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('a recorder with retainMs prunes what is older when it opens the file', async () => {
    const path = dbPath();
    const old = new SqliteRecorder({ path });
    for (let h = 0; h < 10; h++) old.record({ key: 'order:lock:product:1', at: Date.now() - h * BUCKET_MS, holdMs: 2, ttlMs: 3000, outcome: 'released' });
    await old.close();
    const recorder = new SqliteRecorder({ path, retainMs: 3 * BUCKET_MS });
    recorder.record({ key: 'order:lock:product:1', at: Date.now(), holdMs: 2, ttlMs: 3000, outcome: 'released' });
    await recorder.close();
    expect(rollupTotal(path)).toBeGreaterThanOrEqual(4);
    expect(rollupTotal(path)).toBeLessThanOrEqual(5);
  });
});

describe('files of every earlier schema version', () => {
  it.each([1, 2, 3, 4, 5])('a version-%i file is migrated forward by a recorder, keeping its rows, and reports read it', async (version) => {
    const path = dbPath();
    const db = new Database(path);
    db.exec(schemaDdlUpTo(version));
    db.exec("INSERT INTO patterns (pattern) VALUES ('order:lock:product:{id}'); INSERT INTO instances (instance) VALUES ('old-host')");
    db.exec("INSERT INTO series (pattern_id, instance_id, ttl_ms) VALUES (1, 1, 3000); INSERT INTO raw_samples (ts_ms, key, series_id, hold_us, wait_us, flags) VALUES (1, 'order:lock:product:7', 1, 1000, 0, 8)");
    db.pragma(`user_version = ${version}`);
    db.close();
    const recorder = new SqliteRecorder({ path, instance: 'new-host' });
    recorder.record({ key: 'order:lock:product:1', at: HOUR0, holdMs: 1, ttlMs: 3000, outcome: 'released' });
    expect(await recorder.close()).toMatchObject({ written: 1, dropped: 0 });
    expect(queryDb<{ user_version: number }>(path, 'PRAGMA user_version')[0]!.user_version).toBe(SCHEMA_VERSION);
    expect(countRows(path, 'samples')).toBeGreaterThanOrEqual(2);
    expect(queryDb(path, 'SELECT raw_written, raw_dropped, raw_full_ms FROM recorder_stats')).toEqual([{ raw_written: 1, raw_dropped: 0, raw_full_ms: null }]);
    expect(analyze([path]).patterns[0]!.count).toBe(1);
  });
});
