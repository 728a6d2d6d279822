import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
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
