import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze, SqliteRecorder, type LockSample } from '../../src/index.js';
import { refusalOf } from '../../src/sample/check-sample.js';
import { decodeStreamBatch, encodeStreamBatch } from '../../src/fleet/stream-entry.js';
import { addEncodedRollup, encodeRollup, isReadableRollup } from '../../src/store/histogram/codec.js';
import { DenseHistogram, Histogram } from '../../src/store/histogram/histogram.js';
import { mergeDatabases } from '../../src/store/merge.js';
import { openForWriting, schemaDdlUpTo } from '../../src/store/schema.js';
import { SCHEMA_VERSION } from '../../src/store/format.js';
import { queryDb } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Censored holds through the store: a hold whose end was not seen is kept in
 * its own histogram at the end of a rollup's blob and marked in its raw row,
 * and every path a file's data takes (merge, the stream entry, a migration
 * from version 7) keeps it censored.
 */

const dir = tempDir();
const AT = Date.UTC(2026, 10, 30, 10);

function hist(...valuesUs: number[]): Histogram {
  const h = new Histogram();
  for (const v of valuesUs) h.record(v);
  return h;
}

async function recordFile(name: string): Promise<string> {
  const path = join(dir, name);
  const recorder = new SqliteRecorder({ path, instance: name });
  for (let i = 0; i < 90; i++) recorder.record({ key: `job:lock:${i}`, at: AT + i, holdMs: 10 + i, ttlMs: 500, outcome: 'released' });
  const censored: LockSample = { key: 'job:lock:x', at: AT, holdMs: 500, ttlMs: 500, outcome: 'expired', censored: true, waitMs: null };
  for (let i = 0; i < 10; i++) recorder.record({ ...censored, key: `job:lock:${100 + i}` });
  await recorder.close();
  return path;
}

describe('censored holds in the store', () => {
  it('the codec: a fourth part only when some hold is censored; blobs without it read as none', () => {
    const plain = encodeRollup(hist(1000, 2000), hist(), new Map([[500, 2]]));
    const withCensored = encodeRollup(hist(1000, 2000), hist(), new Map([[500, 3]]), hist(500_000));
    expect(withCensored.length).toBeGreaterThan(plain.length);
    expect(encodeRollup(hist(1000), hist(), new Map(), hist())).toEqual(encodeRollup(hist(1000), hist(), new Map()));
    for (const blob of [plain, withCensored]) expect(isReadableRollup(blob)).toBe(true);
    const censored = new DenseHistogram();
    addEncodedRollup(withCensored, new DenseHistogram(), new DenseHistogram(), new Map(), censored);
    expect([censored.totalCount, censored.maxValue]).toEqual([1, 500_000]);
    // A damaged fourth part is a damaged row, not a silent zero.
    expect(isReadableRollup(Buffer.concat([plain, Buffer.from([1, 5])]))).toBe(false);
  });

  it('a recorder keeps them apart, the raw rows mark them, and the analysis reads them as lower bounds', async () => {
    const path = await recordFile('recorded.db');
    const [p] = analyze([path]).patterns;
    expect(p).toMatchObject({ count: 100, holdCount: 100, censored: 10, outcomes: { expired: 10 } });
    // 10 of 100 at 500 ms: the p99 falls on them; with more than 1 % censored it has no upper bound.
    expect(p!.holdMs.p99).toBeCloseTo(500, 0);
    expect(p!.holdLowerBound).toEqual({ p50: false, p90: false, p99: true, p999: true, max: true, mean: true });
    expect(p!.p99CeilingMs).toBeNull();
    // Censored holds are not read as the expirations' true holds.
    expect(p!.expiredHoldsMs).toEqual([]);
    expect(queryDb<{ n: number }>(path, "SELECT count(*) n FROM samples WHERE censored = 1 AND outcome = 'expired'")[0]!.n).toBe(10);
  });

  it('merge keeps them censored', async () => {
    const a = await recordFile('a.db');
    const b = await recordFile('b.db');
    const out = join(dir, 'merged.db');
    mergeDatabases(out, [a, b]);
    const [p] = analyze([out]).patterns;
    expect(p).toMatchObject({ count: 200, censored: 20 });
    expect(queryDb<{ n: number }>(out, 'SELECT count(*) n FROM samples WHERE censored = 1')[0]!.n).toBe(20);
  });

  it('a stream entry carries the censored raw rows (and reads entries of sinks that had no such field)', () => {
    const raw: [number, string, string, number, number, number, number, number, number, number] = [AT, 'job:lock:1', 'job:lock:{id}', 500_000, -1, 500, 1 | 8, 0, 0, 1];
    const fields = encodeStreamBatch({ instance: 'w', epoch: 'e', seq: 1, rollups: [], raw: [raw] });
    expect(decodeStreamBatch(fields).raw).toEqual([raw]);
    const older = fields.map((f, i) => (fields[i - 1] === 'data' ? f.replace(',0,0,1]]', ',0,0]]') : f));
    expect(decodeStreamBatch(older).raw[0]![9]).toBe(0);
  });

  it('a version 7 file migrates: its raw rows read as not censored', () => {
    const path = join(dir, 'v7.db');
    const old = new Database(path);
    old.exec(schemaDdlUpTo(7));
    old.pragma('user_version = 7');
    old.close();
    openForWriting(path, 1000).close();
    expect(queryDb<{ user_version: number }>(path, 'PRAGMA user_version')[0]!.user_version).toBe(SCHEMA_VERSION);
    expect(queryDb<{ name: string }>(path, "SELECT name FROM pragma_table_info('samples')").map((c) => c.name)).toContain('censored');
  });

  it('a malformed censored flag is refused with a reason', () => {
    const refuse = (censored: unknown, holdMs?: number) => refusalOf('k', AT, holdMs, 0, 500, 1, 'expired', undefined, undefined, undefined, censored);
    expect(refuse('yes', 500)).toBe('`censored` must be a boolean');
    expect(refuse(true)).toBe('a `censored` sample needs the `holdMs` it was seen held');
    expect(refuse(true, 500)).toBeUndefined();
    expect(refuse(false)).toBeUndefined();
    const unconfirmed = (value: unknown, outcome = 'expired') => refusalOf('k', AT, 500, 0, 500, 1, outcome, undefined, undefined, undefined, true, value);
    expect(unconfirmed(true)).toBeUndefined();
    expect(unconfirmed(1)).toBe('`unconfirmed` must be a boolean');
    expect(unconfirmed(true, 'released')).toBe('only an `expired` sample can be `unconfirmed` (a pattern never seen released)');
  });
});
