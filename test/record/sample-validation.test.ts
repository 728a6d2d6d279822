import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteRecorder, analyze, type LockSample, type RecorderWarning } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';
import { queryDb, rollupTotal } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';
import Database from 'better-sqlite3';

const dir = tempDir();
let n = 0;
const dbPath = () => join(dir, `validation-${n++}.db`);
const at = Date.UTC(2026, 10, 28, 10);
const good = (i: number): LockSample => ({ key: `order:lock:product:${i % 7}`, at: at + i, holdMs: 1 + (i % 90), ttlMs: 3000, outcome: 'released' });

function recorderWithWarnings(path: string) {
  const warnings: RecorderWarning[] = [];
  const recorder = new SqliteRecorder({ path, onWarning: (w) => warnings.push(w) });
  return { recorder, warnings };
}

describe('a recorder validates each sample once, in record()', () => {
  it('a sample whose getter throws, or a Proxy, is dropped alone: its batch of 5,000 is written', async () => {
    const path = dbPath();
    const { recorder, warnings } = recorderWithWarnings(path);
    for (let i = 0; i < 5000; i++) {
      recorder.record(good(i));
      if (i === 2500) {
        recorder.record({ ...good(i), get holdMs(): number { throw new Error('getter exploded'); } });
        recorder.record(new Proxy(good(i), { get: () => { throw new Error('proxy exploded'); } }));
      }
    }
    expect(await recorder.close()).toMatchObject({ recorded: 5002, written: 5000, dropped: 2 });
    expect(rollupTotal(path)).toBe(5000);
    expect(warnings.filter((w) => w.kind === 'invalid-sample')).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/reading the sample threw: getter exploded/);
  });

  it('refuses numbers out of range — a TTL of 1e300, nanosecond timestamps — and the file stays readable', async () => {
    const path = dbPath();
    const { recorder, warnings } = recorderWithWarnings(path);
    for (let i = 0; i < 400; i++) recorder.record(good(i));
    recorder.record({ ...good(1), ttlMs: 1e300 });
    recorder.record({ ...good(2), at: at * 1e6 }); // nanoseconds
    recorder.record({ ...good(3), holdMs: Number.NaN });
    recorder.record({ ...good(4), waitMs: -5 });
    expect(await recorder.close()).toMatchObject({ recorded: 404, written: 400, dropped: 4 });
    expect(warnings[0]!.message).toMatch(/`ttlMs` out of range: 1e\+300/);
    const report = await runCli(['report', '--db', path, '--out', join(dir, 'out'), '--format', 'json']);
    expect(report.code, report.stderr).toBe(0);
    expect((await runCli(['stats', '--db', path])).code).toBe(0);
  });

  it('caps an explicit pattern like a derived one', async () => {
    const path = dbPath();
    const { recorder } = recorderWithWarnings(path);
    recorder.record({ ...good(1), pattern: '🔒'.repeat(1_000_000) });
    await recorder.close();
    const { pattern } = queryDb<{ pattern: string }>(path, 'SELECT pattern FROM patterns')[0]!;
    expect([...pattern].length).toBe(200);
    expect(pattern.endsWith('🔒…')).toBe(true);
  });

  it('one unreadable rollup row neither fails the report nor blocks later batches for its hour', async () => {
    const path = dbPath();
    const first = recorderWithWarnings(path);
    for (let i = 0; i < 700; i++) first.recorder.record(good(i));
    first.recorder.record({ ...good(1), key: 'mail:lock:user:1' });
    await first.recorder.close();
    const db = new Database(path);
    db.prepare("UPDATE rollups SET hists = x'01ff' WHERE pattern_id = (SELECT id FROM patterns WHERE pattern = 'mail:lock:user:{id}')").run();
    db.prepare("UPDATE fleet_rollups SET hists = x'01ff' WHERE pattern_id = (SELECT id FROM patterns WHERE pattern = 'mail:lock:user:{id}')").run();
    db.close();

    const analysis = analyze([path]);
    expect(analysis.patterns.map((p) => [p.pattern, p.count])).toEqual([['order:lock:product:{id}', 700]]);
    expect(analysis.warnings).toContainEqual({ kind: 'unreadable-rows', rows: 1, patterns: ['mail:lock:user:{id}'] });

    // Recording into that pattern-hour again replaces the damaged row and says so.
    const second = recorderWithWarnings(path);
    for (let i = 0; i < 3; i++) second.recorder.record({ ...good(i), key: 'mail:lock:user:2' });
    expect(await second.recorder.close()).toMatchObject({ written: 3, dropped: 0 });
    expect(second.warnings.map((w) => w.kind)).toEqual(['unreadable-rollup']);
    expect(analyze([path]).patterns.find((p) => p.pattern === 'mail:lock:user:{id}')?.count).toBe(3);
  });
});

describe('the samples file deleted or replaced while recording', () => {
  it('is noticed: the recorder warns and writes the later samples into a new file at the path', async () => {
    const { rmSync, renameSync } = await import('node:fs');
    for (const how of ['deleted', 'replaced'] as const) {
      const path = dbPath();
      const { recorder, warnings } = recorderWithWarnings(path);
      for (let i = 0; i < 5000; i++) recorder.record(good(i));
      await recorder.flush();
      if (how === 'deleted') for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
      else {
        renameSync(path, `${path}.old`); // log rotation, say: another file now takes the name
        const other = new SqliteRecorder({ path, instance: 'other' });
        other.record(good(1));
        await other.close();
      }
      for (let i = 0; i < 3000; i++) recorder.record(good(i));
      const stats = await recorder.close();
      expect(stats, how).toMatchObject({ recorded: 8000, dropped: 0 });
      expect(warnings.map((w) => w.kind), how).toContain('file-replaced');
      // The later samples are on disk at the path (before: counted as written, nowhere to be found).
      const atPath = queryDb<{ instance: string; n: number }>(path, 'SELECT i.instance, sum(r.count) AS n FROM rollups r JOIN instances i ON i.id = r.instance_id GROUP BY i.instance');
      expect(atPath.find((r) => r.instance !== 'other')?.n, how).toBe(3000);
    }
  });
});

describe('a file locked by another writer past flushTimeoutMs at close', () => {
  it('drops what it could not write with a warning, and the counters equal what is on disk', async () => {
    const path = dbPath();
    const first = new SqliteRecorder({ path });
    first.record(good(1));
    await first.close(); // the file exists, with one sample
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE'); // another process's long write transaction
    const warnings: RecorderWarning[] = [];
    const recorder = new SqliteRecorder({ path, flushTimeoutMs: 600, busyTimeoutMs: 50, onWarning: (w) => warnings.push(w) });
    for (let i = 0; i < 30_000; i++) recorder.record(good(i));
    const stats = await recorder.close();
    holder.exec('ROLLBACK');
    holder.close();
    expect(stats).toMatchObject({ recorded: 30_000, written: 0, dropped: 30_000, pending: 0 });
    expect(warnings.map((w) => w.message).join(' ')).toMatch(/stayed locked by another writer past the recorder's flushTimeoutMs|\d+ sample\(s\) not confirmed by the writer/);
    expect(rollupTotal(path)).toBe(1); // only the first recorder's sample: nothing counted as dropped reached the disk
  });
});
