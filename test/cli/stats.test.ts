import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteRecorder } from '../../src/index.js';
import { SCHEMA_VERSION } from '../../src/store/format.js';
import { SCHEMA_V1_DDL } from '../../src/store/schema.js';
import { DEMO_STORIES, generateDatabase } from '../../fixtures/generate.js';
import { queryDb } from '../helpers/db.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();

describe('ttl-advisor stats', () => {
  it('shows what a recorder wrote, including the samples it dropped', async () => {
    const path = join(dir, 'live.db');
    const recorder = new SqliteRecorder({ path, instance: 'api-1', rawSampleRate: 1, onWarning: () => undefined });
    const now = Date.now();
    for (let i = 0; i < 1500; i++) {
      // Every third sample is invalid (a negative TTL): dropped and counted.
      const ttlMs = i % 3 === 2 ? -1 : 3000;
      recorder.record({ key: `order:lock:product:${i}`, at: now - (i % 3) * 3_600_000, holdMs: 5, ttlMs, outcome: 'released' });
    }
    await recorder.close();

    const { code, stdout } = await runCli(['stats', '--db', path, '--format', 'json']);
    expect(code).toBe(0);
    const [stats] = JSON.parse(stdout).databases;
    expect(stats).toMatchObject({ schemaVersion: SCHEMA_VERSION, rawRows: 1000, samples: 1000, patterns: 1, instances: 1, dropped: 500 });
    expect(stats.recorders).toEqual([expect.objectContaining({ instance: 'api-1', recorded: 1500, written: 1000, dropped: 500 })]);
    expect(stats.recentHours.reduce((a: number, h: { samples: number }) => a + h.samples, 0)).toBe(1000);
    expect(stats.bytes).toBeGreaterThan(0);

    const text = await runCli(['stats', '--db', path]);
    expect(text.stdout).toMatch(/samples\s+1,000 \(1,000 raw rows, \d+ rollup rows\)/);
    expect(text.stdout).toMatch(/dropped\s+500/);
  });

  it('says why a file has no drop counts: a version before them, or no recorder wrote it (the demo generator)', async () => {
    const old = join(dir, 'v1-counts.db');
    const v1 = new Database(old);
    v1.exec(SCHEMA_V1_DDL);
    v1.pragma('user_version = 1');
    v1.close();
    expect((await runCli(['stats', '--db', old])).stdout).toMatch(/dropped\s+0 \(not recorded by this file’s version\)/);

    const generated = join(dir, 'generated.db');
    generateDatabase({ path: generated, patterns: Object.fromEntries(Object.entries(DEMO_STORIES).slice(0, 1)) });
    const { code, stdout } = await runCli(['stats', '--db', generated]);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`schema version\\s+${SCHEMA_VERSION}\n`));
    expect(stdout).toMatch(/dropped\s+0 \(no recorder’s counters: no recorder wrote this file\)/);
  });

  it('migrates a version-1 file forward when a recorder writes to it, keeping its rows', async () => {
    const path = join(dir, 'v1.db');
    const db = new Database(path);
    db.exec(SCHEMA_V1_DDL);
    db.exec("INSERT INTO patterns (pattern) VALUES ('old:{id}'); INSERT INTO instances (instance) VALUES ('old-host')");
    db.pragma('user_version = 1');
    db.close();

    const before = await runCli(['stats', '--db', path, '--format', 'json']);
    expect(JSON.parse(before.stdout).databases[0]).toMatchObject({ schemaVersion: 1, patterns: 1, recorders: [] });

    const recorder = new SqliteRecorder({ path, instance: 'new-host' });
    recorder.record({ key: 'order:lock:product:1', at: Date.now(), holdMs: 1, ttlMs: 3000, outcome: 'released' });
    await recorder.close();
    expect(queryDb<{ user_version: number }>(path, 'PRAGMA user_version')[0]!.user_version).toBe(SCHEMA_VERSION);
    expect(queryDb<{ pattern: string }>(path, 'SELECT pattern FROM patterns ORDER BY id').map((r) => r.pattern)).toEqual([
      'old:{id}',
      'order:lock:product:{id}',
    ]);
    expect(queryDb(path, 'SELECT recorded, written, dropped FROM recorder_stats')).toEqual([{ recorded: 1, written: 1, dropped: 0 }]);
  });

  it('a missing database: one line, exit 2', async () => {
    const { code, stderr } = await runCli(['stats', '--db', join(dir, 'nope.db')]);
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});
