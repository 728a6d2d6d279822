import Database from 'better-sqlite3';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analyze/analyze.js';
import { mergeDatabases } from '../../src/store/merge.js';
import { SCHEMA_VERSION } from '../../src/store/format.js';
import { runCli } from '../helpers/cli.js';
import { countRows, queryDb, rollupTotal } from '../helpers/db.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const a = buildDb(dir, 'host-a.db', { seed: 1, hours: 12, instancePrefix: 'host-a' });
const b = buildDb(dir, 'host-b.db', { seed: 2, hours: 12, instancePrefix: 'host-b' });

describe('merging databases', () => {
  it('adds up rollups and raw rows, and the merged file analyses like the inputs together', () => {
    const out = join(dir, 'merged.db');
    const result = mergeDatabases(out, [a, b]);
    expect(result.inputs).toBe(2);
    expect(rollupTotal(out)).toBe(rollupTotal(a) + rollupTotal(b));
    expect(countRows(out, 'raw_samples')).toBe(countRows(a, 'raw_samples') + countRows(b, 'raw_samples'));
    expect(countRows(out, 'instances')).toBe(6);
    const together = analyze([a, b]).patterns.map((p) => [p.pattern, p.count, p.holdMs.p99, p.recommendedTtlMs]);
    const merged = analyze([out]).patterns.map((p) => [p.pattern, p.count, p.holdMs.p99, p.recommendedTtlMs]);
    expect(merged).toEqual(together);
    expect(queryDb(out, 'SELECT count(*) AS n FROM samples')).toEqual(queryDb(out, 'SELECT count(*) AS n FROM raw_samples'));
  });

  it("carries each recorder's counters, raw-row counts included (stats on the merged file shows what each instance wrote and dropped)", () => {
    const input = buildDb(dir, 'counters.db', { seed: 3, hours: 2, instancePrefix: 'host-c' });
    const c = input;
    const db = new Database(c);
    db.exec(`INSERT OR REPLACE INTO recorder_stats (instance_id, updated_ms, recorded, written, dropped, raw_written, raw_dropped, raw_full_ms)
             SELECT id, 1700000000000, 100, 100, 0, 50, 7, 1700000000000 FROM instances`);
    const before = db.prepare('SELECT count(*) AS n FROM recorder_stats').get() as { n: number };
    db.close();
    expect(before.n).toBeGreaterThan(0);
    const out = join(dir, 'counters-merged.db');
    mergeDatabases(out, [input]);
    const rows = queryDb<{ raw_written: number; raw_dropped: number; raw_full_ms: number }>(out, 'SELECT raw_written, raw_dropped, raw_full_ms FROM recorder_stats');
    expect(rows).toHaveLength(before.n);
    expect(rows.every((r) => r.raw_written === 50 && r.raw_dropped === 7 && r.raw_full_ms === 1700000000000)).toBe(true);
  });

  it('merging the same input twice does not double-count', () => {
    const out = join(dir, 'twice.db');
    mergeDatabases(out, [a, b]);
    const once = [rollupTotal(out), countRows(out, 'raw_samples')];
    mergeDatabases(out, [a]);
    mergeDatabases(out, [b, a]);
    expect([rollupTotal(out), countRows(out, 'raw_samples')]).toEqual(once);
    expect(queryDb(out, 'SELECT sum(count) AS n FROM fleet_rollups')).toEqual(queryDb(out, 'SELECT sum(count) AS n FROM rollups'));
  });

  it('takes inputs of an older schema version', () => {
    const old = buildDb(dir, 'old.db', { seed: 3, hours: 3, instancePrefix: 'old' });
    const db = new Database(old);
    db.exec('DROP TABLE recorder_stats; DROP TABLE stream_batches');
    db.pragma('user_version = 1');
    db.close();
    const out = join(dir, 'with-old.db');
    mergeDatabases(out, [a, old]);
    expect(rollupTotal(out)).toBe(rollupTotal(a) + rollupTotal(old));
    expect(queryDb<{ user_version: number }>(out, 'PRAGMA user_version')[0]!.user_version).toBe(SCHEMA_VERSION);
  });

  it('refuses a newer input before writing anything', async () => {
    const newer = join(dir, 'newer.db');
    const db = new Database(newer);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const out = join(dir, 'never.db');
    const { code, stderr } = await runCli(['merge', out, a, newer]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/newer than this ttl-advisor/);
    expect(existsSync(out)).toBe(false);
  });

  it('the CLI merges and reports what it did', async () => {
    const out = join(dir, 'cli.db');
    const { code, stdout } = await runCli(['merge', out, join(dir, 'host-*.db')]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^merged 2 database\(s\), 6 instance\(s\): \d+ rollup rows, \d+ raw rows into /);
    expect(rollupTotal(out)).toBe(rollupTotal(a) + rollupTotal(b));
  });
});

describe('merge is all or nothing', () => {
  /** A copy of a valid samples file with bytes in its data pages overwritten. */
  function damaged(path: string): string {
    const copy = `${path}.damaged.db`;
    const bytes = readFileSync(path);
    for (let i = 4096 * 2; i < bytes.length - 100; i += 4096) bytes.fill(0xa5, i + 50, i + 90); // every page after the second
    writeFileSync(copy, bytes);
    return copy;
  }

  it('a damaged second input leaves the existing output byte for byte as it was', async () => {
    const a = buildDb(dir, 'aon-a.db', { seed: 11, hours: 4, instancePrefix: 'aon-a' });
    const b = buildDb(dir, 'aon-b.db', { seed: 12, hours: 4, instancePrefix: 'aon-b' });
    const out = join(dir, 'aon-out.db');
    mergeDatabases(out, [a]);
    const before = readFileSync(out);
    const { code, stderr } = await runCli(['merge', out, b, damaged(a)]);
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/is damaged|cannot be read|not a readable/);
    expect(readFileSync(out).equals(before)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.includes('.merging'))).toEqual([]);
  });

  it('a newer output is refused without a byte of it changing, header included', () => {
    const a = buildDb(dir, 'aon-c.db', { seed: 13, hours: 4 });
    const out = join(dir, 'aon-newer.db');
    const db = new Database(out);
    db.exec('CREATE TABLE x (y)');
    db.pragma('user_version = 99');
    db.close();
    const before = readFileSync(out);
    expect(() => mergeDatabases(out, [a])).toThrow(/newer than this ttl-advisor/);
    expect(readFileSync(out).equals(before)).toBe(true);
  });

  it('a bad input with no output yet leaves no output file behind', () => {
    const out = join(dir, 'aon-none.db');
    const notADatabase = join(dir, 'aon-text.db');
    writeFileSync(notADatabase, 'hello, I am not SQLite');
    expect(() => mergeDatabases(out, [notADatabase])).toThrow();
    expect(existsSync(out)).toBe(false);
  });
});
