import Database from 'better-sqlite3';
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SqliteRecorder, analyze, type LockSample, type RecorderWarning } from '../../src/index.js';
import { Histogram } from '../../src/store/histogram/histogram.js';
import { SCHEMA_VERSION } from '../../src/store/format.js';
import { built } from '../helpers/built.js';
import { countRows, queryDb, rollupTotal } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let n = 0;
const dbPath = () => join(dir, `samples-${n++}.db`);
const child = built('test/helpers/recorder-child.ts');
const run = promisify(execFile);

function sample(i: number, overrides: Partial<LockSample> = {}): LockSample {
  return {
    key: `order:lock:product:${i % 10}`,
    at: Date.UTC(2026, 0, 1) + i * 1000,
    holdMs: (i % 200) + 0.5,
    waitMs: i % 3,
    attempts: 1 + (i % 2),
    ttlMs: 10_000,
    outcome: 'released',
    ...overrides,
  };
}

describe('SqliteRecorder', () => {
  it('with rawSampleRate 1, writes every sample as a raw row and into rollups, nothing lost on close', async () => {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path, instance: 'test-1', flushBatchSize: 700, rawSampleRate: 1 });
    const outcomes = ['released', 'expired', 'not_acquired', 'error'] as const;
    for (let i = 0; i < 5000; i++) {
      const outcome = outcomes[i % 4]!;
      recorder.record(sample(i, { outcome, holdMs: outcome === 'not_acquired' ? undefined : (i % 200) + 0.5, threw: i % 5 === 0 }));
    }
    const stats = await recorder.close();
    expect(stats).toMatchObject({ recorded: 5000, written: 5000, rawWritten: 5000, dropped: 0, pending: 0 });

    expect(countRows(path, 'samples')).toBe(5000);
    expect(rollupTotal(path)).toBe(5000);
    // One instance: its rows are the sums over instances, and no copy of them is kept (schema 10).
    expect(countRows(path, 'fleet_rollups')).toBe(0);
    expect(queryDb(path, "SELECT i.instance FROM meta m JOIN instances i ON i.id = m.value WHERE m.name = 'sole_instance_id'")).toEqual([{ instance: 'test-1' }]);
    const byOutcome = queryDb<{ outcome: string; n: number }>(path, 'SELECT outcome, count(*) AS n FROM samples GROUP BY outcome ORDER BY outcome');
    expect(byOutcome).toEqual([
      { outcome: 'error', n: 1250 },
      { outcome: 'expired', n: 1250 },
      { outcome: 'not_acquired', n: 1250 },
      { outcome: 'released', n: 1250 },
    ]);
    const sums = queryDb<Record<string, number>>(
      path,
      'SELECT sum(released) r, sum(expired) e, sum(not_acquired) na, sum(error) er, sum(threw) t FROM rollups',
    )[0];
    expect(sums).toEqual({ r: 1250, e: 1250, na: 1250, er: 1250, t: 1000 });

    // Rollup histograms agree with the raw rows they summarize.
    const raw = queryDb<{ hold_us: number }>(path, "SELECT hold_us FROM samples WHERE pattern = 'order:lock:product:{id}' AND hold_us IS NOT NULL");
    const merged = new Histogram();
    for (const row of queryDb<{ hists: Buffer }>(path, 'SELECT hists FROM rollups')) merged.addEncoded(row.hists);
    expect(merged.totalCount).toBe(raw.length);
    expect(merged.maxValue).toBe(Math.max(...raw.map((r) => r.hold_us)));
    const holdSum = queryDb<{ s: number }>(path, 'SELECT sum(hold_sum_us) s FROM rollups')[0]!.s;
    expect(holdSum).toBe(raw.reduce((a, r) => a + r.hold_us, 0));
  });

  it('stores the public schema: the samples view, integer µs, user_version', async () => {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path, instance: 'api-7' });
    recorder.record({ key: 'order:lock:product:7', holdMs: 12.5, ttlMs: 10_000, outcome: 'released', at: 1_767_225_600_123 });
    await recorder.close();
    expect(queryDb(path, 'SELECT * FROM samples')).toEqual([
      {
        ts_ms: 1_767_225_600_123,
        key: 'order:lock:product:7',
        pattern: 'order:lock:product:{id}',
        hold_us: 12_500,
        wait_us: 0,
        attempts: 1,
        ttl_ms: 10_000,
        outcome: 'released',
        threw: 0,
        instance: 'api-7',
        extensions: 0,
        censored: 0,
      },
    ]);
    expect(queryDb<{ user_version: number }>(path, 'PRAGMA user_version')[0]!.user_version).toBe(SCHEMA_VERSION);
    expect(queryDb<{ journal_mode: string }>(path, 'PRAGMA journal_mode')[0]!.journal_mode).toBe('wal');
    const rollup = queryDb<{ bucket_start_ms: number; first_ts_ms: number }>(path, 'SELECT bucket_start_ms, first_ts_ms FROM rollups')[0]!;
    expect(rollup.bucket_start_ms).toBe(1_767_225_600_000);
  });

  it('records how often locks were extended, per raw row and per rollup, and the analysis says so', async () => {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path, instance: 'api-8' });
    const at = 1_767_225_600_000;
    for (let i = 0; i < 10; i++) {
      recorder.record({ key: `job:lock:${i}`, holdMs: 50, ttlMs: 1000, outcome: 'released', at: at + i, extensions: i < 3 ? i + 1 : 0 });
    }
    await recorder.close();
    expect(queryDb<{ e: number }>(path, 'SELECT extensions AS e FROM samples ORDER BY ts_ms').map((r) => r.e)).toEqual([1, 2, 3, 0, 0, 0, 0, 0, 0, 0]);
    expect(queryDb(path, 'SELECT extended, extensions FROM rollups')).toEqual([{ extended: 3, extensions: 6 }]);
    expect(queryDb(path, 'SELECT extended, extensions FROM fleet_rollups')).toEqual([]); // one instance: its rows are the sums
    const [pattern] = analyze([path]).patterns;
    expect(pattern).toMatchObject({ extended: 3, extensions: 6 });
    expect(pattern!.hints).toContainEqual({ kind: 'extended', extended: 3, extensions: 6, count: 10 });
  });

  it('keeps a sampled fraction of raw rows while rollups count every lock', async () => {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path, rawSampleRate: 0.1, rawFailedPerHour: 0, rawSlowestPerHour: 0, rawUniformPerHour: 0 });
    for (let i = 0; i < 20_000; i++) recorder.record(sample(i));
    const stats = await recorder.close();
    expect(rollupTotal(path)).toBe(20_000);
    const raw = countRows(path, 'raw_samples');
    expect(raw).toBe(stats.rawWritten);
    expect(raw).toBeGreaterThan(1500);
    expect(raw).toBeLessThan(2500);
  });

  it('an explicit pattern and templates win over the heuristics', async () => {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path, patterns: ['mail:lock:{userId}'] });
    recorder.record({ ...sample(1), key: 'mail:lock:alice' });
    recorder.record({ ...sample(2), key: 'order:lock:product:9', pattern: 'orders' });
    recorder.record({ ...sample(3), key: 'stock:lock:9' });
    await recorder.close();
    const patterns = queryDb<{ pattern: string }>(path, 'SELECT pattern FROM patterns ORDER BY pattern').map((r) => r.pattern);
    expect(patterns).toEqual(['mail:lock:{userId}', 'orders', 'stock:lock:{id}']);
  });

  it('caps distinct patterns, sending the overflow to {other}', async () => {
    const path = dbPath();
    const warnings: RecorderWarning[] = [];
    const recorder = new SqliteRecorder({ path, maxPatterns: 3, onWarning: (w) => warnings.push(w) });
    for (let i = 0; i < 10; i++) recorder.record({ ...sample(i), key: `lock:kind${String.fromCharCode(97 + i)}:1` });
    const stats = await recorder.close();
    expect(countRows(path, 'patterns')).toBe(4);
    expect(queryDb<{ n: number }>(path, "SELECT count(*) n FROM samples WHERE pattern = '{other}'")[0]!.n).toBe(7);
    expect(stats.patternOverflow).toBe(7);
    expect(warnings.map((w) => w.kind)).toEqual(['pattern-overflow']);
  });

  it('bounds memory: raw rows beyond maxPendingRawRows are dropped and counted, while the rollups count every lock', async () => {
    const path = dbPath();
    const warnings: RecorderWarning[] = [];
    const recorder = new SqliteRecorder({ path, maxPendingRawRows: 100, rawSampleRate: 1, flushBatchSize: 1000, onWarning: (w) => warnings.push(w) });
    for (let i = 0; i < 1000; i++) recorder.record(sample(i));
    expect(recorder.stats()).toMatchObject({ recorded: 1000, pending: 1000, dropped: 0, rawDropped: 900 });
    const stats = await recorder.close();
    expect(stats).toMatchObject({ written: 1000, dropped: 0, rawWritten: 100, rawDropped: 900 });
    expect(queryDb<{ n: number }>(path, 'SELECT sum(count) AS n FROM rollups')[0]!.n).toBe(1000);
    expect(queryDb<{ n: number }>(path, 'SELECT count(*) AS n FROM raw_samples')[0]!.n).toBe(100);
    expect(warnings.map((w) => w.kind)).toEqual(['buffer-full']);
  });

  it('drops and counts invalid samples without throwing', async () => {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path });
    expect(() => {
      recorder.record({ ...sample(1), outcome: 'toString' as never });
      recorder.record({ ...sample(2), key: 42 as never });
      recorder.record({ ...sample(3), at: Number.NaN });
      recorder.record(null as never);
      recorder.record(sample(4));
    }).not.toThrow();
    const stats = await recorder.close();
    expect(stats).toMatchObject({ recorded: 5, written: 1, dropped: 4 });
  });

  it('survives an unwritable path: no throw, samples dropped and counted, one warning', async () => {
    const warnings: RecorderWarning[] = [];
    const recorder = new SqliteRecorder({ path: join(dir, 'no/such/dir/samples.db'), onWarning: (w) => warnings.push(w) });
    for (let i = 0; i < 300; i++) recorder.record(sample(i));
    await recorder.flush();
    for (let i = 0; i < 300; i++) recorder.record(sample(i));
    const stats = await recorder.close();
    expect(stats).toMatchObject({ recorded: 600, written: 0, dropped: 600, pending: 0 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.kind).toBe('open-failed');
  });

  it('leaves a file that is not SQLite exactly as it was', async () => {
    const path = join(dir, 'notes.db');
    const content = 'these are my notes, not a database\n'.repeat(200);
    writeFileSync(path, content);
    const warnings: RecorderWarning[] = [];
    const recorder = new SqliteRecorder({ path });
    recorder.on('warning', (w: RecorderWarning) => warnings.push(w));
    for (let i = 0; i < 10; i++) recorder.record(sample(i));
    const stats = await recorder.close();
    expect(stats).toMatchObject({ written: 0, dropped: 10 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/not a database/);
    expect(readFileSync(path, 'utf8')).toBe(content);
  });

  it('refuses to write into a database of a newer schema version', async () => {
    const path = dbPath();
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const warnings: RecorderWarning[] = [];
    const recorder = new SqliteRecorder({ path, onWarning: (w) => warnings.push(w) });
    recorder.record(sample(1));
    const stats = await recorder.close();
    expect(stats.dropped).toBe(1);
    expect(warnings[0]!.message).toMatch(/newer than this ttl-advisor/);
  });

  it('waits for another writer holding the lock, then writes', async () => {
    const path = dbPath();
    const first = new SqliteRecorder({ path });
    first.record(sample(0));
    await first.close();

    const blocker = new Database(path);
    blocker.exec('BEGIN EXCLUSIVE');
    const recorder = new SqliteRecorder({ path, busyTimeoutMs: 10, flushTimeoutMs: 10_000 });
    recorder.record(sample(1));
    const flushed = recorder.flush();
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Still waiting for the write lock: nothing written, nothing dropped.
    expect(recorder.stats()).toMatchObject({ written: 0, pending: 1, dropped: 0 });
    blocker.exec('COMMIT');
    blocker.close();
    await flushed;
    const stats = await recorder.close();
    expect(stats).toMatchObject({ written: 1, pending: 0, dropped: 0 });
    expect(rollupTotal(path)).toBe(2);
  });

  it('a throwing warning listener does not reach the caller', async () => {
    const recorder = new SqliteRecorder({
      path: join(dir, 'missing/dir/x.db'),
      onWarning: () => {
        throw new Error('listener bug');
      },
    });
    recorder.record(sample(1));
    await expect(recorder.close()).resolves.toMatchObject({ dropped: 1 });
  });

  it('counts samples recorded after close as dropped', async () => {
    const recorder = new SqliteRecorder({ path: dbPath() });
    await recorder.close();
    recorder.record(sample(1));
    expect(recorder.stats()).toMatchObject({ recorded: 1, dropped: 1 });
  });

  it('validates its options with a message naming the option', () => {
    expect(() => new SqliteRecorder({ path: '' })).toThrow('Expected `path` to be a non-empty string');
    expect(() => new SqliteRecorder({ path: 'x.db', rawSampleRate: 2 })).toThrow('Expected `rawSampleRate` to be a number from 0 to 1, got `2`');
    expect(() => new SqliteRecorder({ path: 'x.db', flushBatchSize: 0 })).toThrow('Expected `flushBatchSize` to be a positive integer, got `0`');
  });

  it('two processes record into one file at once', async () => {
    const path = dbPath();
    const results = await Promise.all(
      ['writer-a', 'writer-b'].map((instance) => run(process.execPath, [child, path, instance, '20000', 'close'])),
    );
    for (const { stdout } of results) expect(JSON.parse(stdout)).toMatchObject({ written: 20_000, dropped: 0 });
    expect(countRows(path, 'raw_samples')).toBe(40_000);
    expect(rollupTotal(path)).toBe(40_000);
    const perInstance = queryDb<{ instance: string; n: number }>(path, 'SELECT instance, count(*) n FROM samples GROUP BY instance ORDER BY instance');
    expect(perInstance).toEqual([
      { instance: 'writer-a', n: 20_000 },
      { instance: 'writer-b', n: 20_000 },
    ]);
  });

  it('a process that gets SIGTERM writes all its buffered samples first', async () => {
    const path = dbPath();
    const proc = spawn(process.execPath, [child, path, 'terminated', '7000', 'wait-for-signal'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      proc.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
      proc.once('exit', (code) => reject(new Error(`child exited early with ${code}`)));
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.once('exit', (_code, signal) => resolve(signal)));
    proc.kill('SIGTERM');
    // The default action still runs after the flush: the process dies of SIGTERM.
    expect(await exited).toBe('SIGTERM');
    expect(countRows(path, 'raw_samples')).toBe(7000);
    expect(rollupTotal(path)).toBe(7000);
  });
});

const shutdownChild = built('test/helpers/shutdown-child.ts');

describe('SqliteRecorder: never silent, and cooperating with a graceful shutdown', () => {
  it('with nobody listening, each kind of failure is printed once through process warnings', async () => {
    const notADirectory = join(dir, 'not-a-directory');
    writeFileSync(notADirectory, 'x');
    const path = join(notADirectory, 'samples.db');
    const quiet = await run(process.execPath, [shutdownChild, path, 'unwritable']);
    expect(JSON.parse(quiet.stdout)).toMatchObject({ recorded: 30, written: 0, dropped: 30 });
    const lines = quiet.stderr.split('\n').filter((l) => l.includes('TtlAdvisorWarning'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/TtlAdvisorWarning: ttl-advisor: Cannot open samples database .*samples\.db/);
    // Control: someone listens, so nothing is printed.
    const listened = await run(process.execPath, [shutdownChild, path, 'unwritable-listened']);
    expect(listened.stderr).not.toMatch(/TtlAdvisorWarning/);
  });

  it('locks that finish during the application’s own drain after SIGTERM are recorded, and the counters on disk are the true ones', async () => {
    const path = dbPath();
    const proc = spawn(process.execPath, [shutdownChild, path, 'drain'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      proc.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
      proc.once('exit', (code) => reject(new Error(`child exited early with ${code}`)));
    });
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0); // the application's drain decided when to exit
    expect(rollupTotal(path)).toBe(1500);
    expect(queryDb(path, 'SELECT recorded, written, dropped FROM recorder_stats')).toEqual([{ recorded: 1500, written: 1500, dropped: 0 }]);
  });
});
