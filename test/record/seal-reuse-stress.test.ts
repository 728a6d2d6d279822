import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteRecorder, type LockSample } from '../../src/index.js';
import { addEncodedRollup, type DecodeTarget } from '../../src/store/histogram/codec.js';
import { PagedHistogram } from '../../src/store/histogram/paged.js';
import { queryDb } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const START = Date.UTC(2026, 0, 1);
const PATTERNS = 40;
const HOURS = 40;

/** A decode target that adds bucket counts into `map`. */
function into(map: Map<number, number>): DecodeTarget {
  return { addAt: (i, c) => void map.set(i, (map.get(i) ?? 0) + c), addSummary: () => undefined };
}

/**
 * Many seals of many pattern-hours through a real writer thread, so the shared seal buffers are reused
 * while the writer is busy. Fails (samples dropped as unreadable, buckets off) when a held buffer is
 * reused, e.g. with SealBuffers always taking its first slot.
 */
describe('seals in reused shared buffers arrive intact', () => {
  it('every hold lands in its bucket across many seals', async () => {
    const path = join(dir, 'stress.db');
    const recorder = new SqliteRecorder({ path, flushIntervalMs: 5 });
    const expected = new Map<string, PagedHistogram>();
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let recorded = 0;
    for (let round = 0; round < 20; round++) {
      const n = 2000 + Math.floor(rnd() * 10000);
      for (let i = 0; i < n; i++) {
        const p = `p${Math.floor(rnd() * PATTERNS)}:{id}`;
        const holdMs = Math.exp(rnd() * 12) / 10;
        const s: LockSample = { key: `k${i}`, pattern: p, at: START + Math.floor(rnd() * HOURS) * 3_600_000 + i, holdMs, ttlMs: 10_000, outcome: 'released' };
        recorder.record(s);
        recorded++;
        let h = expected.get(p);
        if (!h) expected.set(p, (h = new PagedHistogram()));
        h.record(Math.round(holdMs * 1000));
      }
      if (round % 3 === 0) await recorder.flush();
      else await new Promise((r) => setImmediate(r));
    }
    expect(await recorder.close()).toMatchObject({ recorded, written: recorded, dropped: 0 });
    const rows = queryDb<{ pattern: string; hists: Buffer }>(path, 'SELECT p.pattern AS pattern, r.hists AS hists FROM rollups r JOIN patterns p ON p.id = r.pattern_id');
    const got = new Map<string, Map<number, number>>();
    for (const row of rows) {
      let b = got.get(row.pattern);
      if (!b) got.set(row.pattern, (b = new Map()));
      addEncodedRollup(row.hists, into(b), into(new Map()), new Map());
    }
    for (const [p, h] of expected) {
      const want = new Map<number, number>();
      h.forEachBucket((i, c) => void want.set(i, c));
      expect(got.get(p), p).toEqual(want);
    }
  }, 240_000);
});
