import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analyze/analyze.js';
import { aggregatorFor } from '../../src/record/aggregator.js';
import { BUCKET_MS } from '../../src/store/format.js';
import type { DeltaBatch } from '../../src/store/input.js';
import { mergeDatabases } from '../../src/store/merge.js';
import { openForWriting, schemaDdlUpTo } from '../../src/store/schema.js';
import { databaseStats } from '../../src/store/stats.js';
import { SampleWriter } from '../../src/store/writer.js';
import { countRows, queryDb } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const START = Date.UTC(2026, 0, 1);
let files = 0;

/** Three hours of two patterns as `instance` recorded them: the batches a recorder's seals make. */
function batchesOf(instance: string, seed: number): DeltaBatch[] {
  const aggregator = aggregatorFor(instance, [], {
    maxPatterns: 100,
    budget: { failed: 10, slowest: 3, uniform: 5 },
    rawSampleRate: 0,
    maxPendingRawRows: 10_000,
  });
  let state = seed;
  const random = () => (state = (state * 16_807) % 2_147_483_647) / 2_147_483_647;
  const batches: DeltaBatch[] = [];
  for (let i = 0; i < 3000; i++) {
    const key = i % 2 === 0 ? `order:lock:product:${i}` : `mail:lock:user:${i}`;
    const at = START + Math.floor((i / 3000) * 3 * BUCKET_MS);
    aggregator.fold({ key, at, holdMs: Math.exp(2 + random() * 3), ttlMs: 10_000, outcome: i % 97 === 0 ? 'expired' : 'released' });
    // Several seals: rows are merged as well as created.
    if (i % 700 === 699) batches.push(...aggregator.seal(START + 10 * BUCKET_MS).batches);
  }
  batches.push(...aggregator.seal(START + 10 * BUCKET_MS, true).batches);
  return batches;
}

/** A file written by this version's writer, or as a version-9 writer wrote it: every rollup summed in `fleet_rollups` too. */
function fileOf(version: 9 | 10, ...writes: DeltaBatch[][]): string {
  const path = join(dir, `v${version}-${files++}.db`);
  let db: Database.Database;
  if (version === 10) db = openForWriting(path, 1000);
  else {
    db = new Database(path);
    db.exec(schemaDdlUpTo(9));
    db.prepare("INSERT INTO meta (name, value) VALUES ('bucket_ms', ?)").run(String(BUCKET_MS));
    db.pragma('user_version = 9');
  }
  const writer = new SampleWriter(db, { instance: 'test', maxPatterns: 100 });
  for (const batches of writes) writer.apply(batches);
  db.close();
  return path;
}

function answers(path: string): unknown[] {
  return analyze([path]).patterns.map((p) => [p.pattern, p.count, p.outcomes, p.holdMs.p50, p.holdMs.p99, p.holdMs.max, p.recommendedTtlMs]);
}

function statsOf(path: string): unknown {
  const { samples, rollupRows, patterns, instances, firstMs, lastMs, recentHours } = databaseStats(path);
  return { samples, rollupRows, patterns, instances, firstMs, lastMs, recentHours };
}

const soleInstance = (path: string) => queryDb<{ value: string }>(path, "SELECT value FROM meta WHERE name = 'sole_instance_id'");

describe('fleet_rollups (schema 10): kept only once a file holds rollups of several instances', () => {
  const a = batchesOf('host-a', 7);
  const b = batchesOf('host-b', 11);

  it('a file of one instance keeps no fleet rows, and answers as a version-9 file with them does', () => {
    const now = fileOf(10, a);
    const old = fileOf(9, a);
    expect(countRows(now, 'fleet_rollups')).toBe(0);
    expect(soleInstance(now)).toEqual(queryDb(now, "SELECT CAST(id AS TEXT) AS value FROM instances WHERE instance = 'host-a'"));
    expect(countRows(old, 'fleet_rollups')).toBeGreaterThan(0);
    expect(answers(now)).toEqual(answers(old));
    expect((answers(now)[0] as unknown[]).slice(0, 2)).toEqual(['mail:lock:user:{id}', 1500]);
    expect(statsOf(now)).toEqual(statsOf(old));
    // The control: without the mark, readers take the (empty) fleet_rollups for the sums, and the answers change.
    const db = new Database(now);
    db.exec("DELETE FROM meta WHERE name = 'sole_instance_id'");
    db.close();
    expect(answers(now)).not.toEqual(answers(old));
  });

  it("a second instance's first rollup fills fleet_rollups with the sums, and the file answers as a version-9 file of both", () => {
    const now = fileOf(10, a, b);
    const old = fileOf(9, a, b);
    expect(soleInstance(now)).toEqual([]);
    const sums = 'SELECT pattern_id, bucket_start_ms, sum(count) AS n, sum(hold_sum_us) AS h FROM rollups GROUP BY 1, 2 ORDER BY 1, 2';
    expect(queryDb(now, 'SELECT pattern_id, bucket_start_ms, count AS n, hold_sum_us AS h FROM fleet_rollups ORDER BY 1, 2')).toEqual(queryDb(now, sums));
    expect(queryDb(now, 'SELECT * FROM fleet_rollups ORDER BY 1, 2')).toEqual(queryDb(old, 'SELECT * FROM fleet_rollups ORDER BY 1, 2'));
    expect(answers(now)).toEqual(answers(old));
    expect((answers(now)[0] as unknown[]).slice(0, 2)).toEqual(['mail:lock:user:{id}', 3000]);
  });

  it('migrating a version-9 file drops the copy a single instance kept, and keeps the sums of several; the answers stay', () => {
    const single = fileOf(9, a);
    const several = fileOf(9, a, b);
    const before = [answers(single), answers(several)];
    openForWriting(single, 1000).close();
    openForWriting(several, 1000).close();
    expect(countRows(single, 'fleet_rollups')).toBe(0);
    expect(soleInstance(single)).toHaveLength(1);
    expect(countRows(several, 'fleet_rollups')).toBeGreaterThan(0);
    expect(soleInstance(several)).toEqual([]);
    expect([answers(single), answers(several)]).toEqual(before);
  });

  it('merge sums instances into fleet_rollups, and a merge of one instance keeps none', () => {
    const out = join(dir, 'merged.db');
    mergeDatabases(out, [fileOf(10, a), fileOf(10, b)]);
    expect(countRows(out, 'fleet_rollups')).toBeGreaterThan(0);
    expect(answers(out)).toEqual(answers(fileOf(9, a, b)));
    const alone = join(dir, 'merged-alone.db');
    mergeDatabases(alone, [fileOf(10, a)]);
    expect(countRows(alone, 'fleet_rollups')).toBe(0);
    expect(answers(alone)).toEqual(answers(fileOf(9, a)));
  });

  it('a new rollup row is the delta as sealed, byte for byte (no decode and re-encode)', () => {
    const path = fileOf(10, [{ instance: 'x', rollups: [a[0]!.rollups[0]!], raw: [] }]);
    const [row] = queryDb<{ hists: Buffer }>(path, 'SELECT hists FROM rollups');
    expect(Buffer.from(row!.hists).equals(Buffer.from(a[0]!.rollups[0]!.values[10]))).toBe(true);
  });
});
