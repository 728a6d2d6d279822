import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analyze/analyze.js';
import { decodeStreamBatch, encodeStreamBatch } from '../../src/fleet/stream-entry.js';
import { SqliteRecorder } from '../../src/record/sqlite-recorder.js';
import { RedisStreamSink } from '../../src/fleet/stream-sink.js';
import { mergeDatabases } from '../../src/store/merge.js';
import { pruneOlderThan } from '../../src/store/prune.js';
import { openForWriting, schemaDdlUpTo } from '../../src/store/schema.js';
import { SampleWriter } from '../../src/store/writer.js';
import type { ObservationGap } from '../../src/sample/sample.js';
import { queryDb } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';

/** Issue 22, item 2: a gap in what a watcher saw travels like a sample does — recorder, stream, collector, merge, prune. */

const dir = tempDir();
const HOUR = 3_600_000;
const t0 = Date.UTC(2026, 11, 1, 10);
const gap: ObservationGap = { source: '10.0.0.7:6379', fromMs: t0 + 59 * 60_000, toMs: t0 + 62 * 60_000, reason: 'output-buffer-limit', openHolds: 12 };

function lock(key: string, at: number) {
  return { key, at, holdMs: 5, waitMs: null, ttlMs: 1000, outcome: 'released' as const };
}

describe('gaps in what was seen, stored (item 2)', () => {
  it('item 2: a recorder stores a gap; the report marks the two hours it touches for the patterns its instance recorded, and no other', async () => {
    const db = join(dir, 'recorded.db');
    const watcher = new SqliteRecorder({ path: db, instance: 'watcher' });
    for (let i = 0; i < 10; i++) watcher.record(lock(`seen:lock:${i}`, t0 + i * 20 * 60_000)); // 10:00 … 13:00
    watcher.recordGap(gap);
    watcher.recordGap({ ...gap, fromMs: -5 }); // malformed: refused, warned once
    await watcher.close();
    const other = new SqliteRecorder({ path: db, instance: 'service' });
    other.record(lock('own:lock:1', t0 + 30 * 60_000));
    await other.close();

    expect(queryDb(db, 'SELECT source, from_ms AS fromMs, to_ms AS toMs, reason, open_holds AS openHolds FROM gaps')).toEqual([
      { source: gap.source, fromMs: gap.fromMs, toMs: gap.toMs, reason: gap.reason, openHolds: 12 },
    ]);
    const analysis = analyze([db]);
    expect(analysis.gaps).toEqual([{ instance: 'watcher', ...gap }]);
    const byName = new Map(analysis.patterns.map((p) => [p.pattern, p]));
    expect(byName.get('seen:lock:{id}')!.incompleteHours).toBe(2); // 10:59 → 11:02 touches 10:00 and 11:00
    expect(byName.get('seen:lock:{id}')!.hourly.filter((h) => h.incomplete).map((h) => h.hourStartMs)).toEqual([t0, t0 + HOUR]);
    // Control: a pattern only another instance recorded is not marked.
    expect(byName.get('own:lock:{id}')!.incompleteHours).toBe(0);
    expect(byName.get('own:lock:{id}')!.hints.map((h) => h.kind)).not.toContain('incomplete');
    expect(byName.get('seen:lock:{id}')!.hints).toContainEqual({ kind: 'incomplete', hours: 2 });
  });

  it('item 2: a gap survives the stream entry, is stored once however often delivered, and keeps its longest extent', () => {
    const fields = encodeStreamBatch({ instance: 'w', epoch: 'e', seq: 1, rollups: [], raw: [], gaps: [[gap.source, gap.fromMs, gap.toMs, gap.reason, gap.openHolds]] });
    const batch = decodeStreamBatch(fields);
    expect(batch.gaps).toEqual([[gap.source, gap.fromMs, gap.toMs, gap.reason, 12]]);
    expect(() => decodeStreamBatch(fields.map((f) => f.replace('"g":[[', '"g":[["x"],[')))).toThrow(/malformed gap/);
    const db = openForWriting(join(dir, 'collected.db'), 1000);
    try {
      const writer = new SampleWriter(db, { instance: 'collector', maxPatterns: 100 });
      writer.apply([batch, batch]);
      writer.apply([{ instance: 'w', rollups: [], raw: [], gaps: [[gap.source, gap.fromMs, gap.toMs + 5000, gap.reason, 3]] }]);
      expect(db.prepare('SELECT to_ms AS toMs, open_holds AS openHolds FROM gaps').all()).toEqual([{ toMs: gap.toMs + 5000, openHolds: 12 }]);
    } finally {
      db.close();
    }
  });

  it('item 2: a stream sink sends a gap in its next entry', async () => {
    const sent: string[][] = [];
    const client = { xadd: async (...args: (string | number)[]) => (sent.push(args.map(String)), '1-0') };
    const sink = new RedisStreamSink(client as never, { instance: 'watcher', flushIntervalMs: 60_000 });
    sink.recordGap(gap);
    await sink.close();
    const data = sent.map((args) => JSON.parse(args[args.indexOf('data') + 1]!) as { g?: unknown });
    expect(data.flatMap((d) => d.g ?? [])).toEqual([[gap.source, gap.fromMs, gap.toMs, gap.reason, 12]]);
  });

  it('item 2: merge carries gaps with their instance; prune drops those that ended before the cutoff; an older file gains the table', () => {
    const a = join(dir, 'a.db');
    const writer = openForWriting(a, 1000);
    new SampleWriter(writer, { instance: 'w', maxPatterns: 10 }).apply([
      { instance: 'w', rollups: [], raw: [], gaps: [[gap.source, gap.fromMs, gap.toMs, gap.reason, 1], [gap.source, t0 - 5 * HOUR, t0 - 4 * HOUR, 'connection-lost', 0]] },
    ]);
    writer.close();
    const merged = join(dir, 'merged.db');
    mergeDatabases(merged, [a]);
    expect(queryDb(merged, 'SELECT i.instance, count(*) AS n FROM gaps g JOIN instances i ON i.id = g.instance_id GROUP BY 1')).toEqual([{ instance: 'w', n: 2 }]);
    const db = openForWriting(merged, 1000);
    expect(pruneOlderThan(db, merged, t0 - HOUR).gaps).toBe(1);
    db.close();
    expect(queryDb(merged, 'SELECT reason FROM gaps')).toEqual([{ reason: 'output-buffer-limit' }]);

    const old = join(dir, 'v6.db');
    const raw = new Database(old);
    raw.exec(schemaDdlUpTo(6));
    raw.pragma('user_version = 6');
    raw.close();
    openForWriting(old, 1000).close();
    expect(queryDb(old, "SELECT name FROM sqlite_master WHERE name = 'gaps'")).toEqual([{ name: 'gaps' }]);
  });
});
