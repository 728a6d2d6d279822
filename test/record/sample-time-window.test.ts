import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { RedisStreamSink, SqliteRecorder, analyze, type LockSample, type RecorderWarning } from '../../src/index.js';
import type { PatternAnalysis } from '../../src/analyze/summarize.js';
import { MAX_CHART_HOURS, hourlySpec } from '../../src/report/charts.js';
import { refusalOf } from '../../src/sample/check-sample.js';
import { runCli } from '../helpers/cli.js';
import { rollupTotal } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';

// Issue 22, item 13: `at: Date.now() / 1000` was accepted; one such row made `report` take 31 s, 1.4 GB and a 56-year chart.
const dir = tempDir();
let n = 0;
const dbPath = () => join(dir, `window-${n++}.db`);
const HOUR = 3_600_000;
const now = Date.now();
const sample = (i: number, at = now - (i % 48) * HOUR): LockSample => ({ key: `order:lock:product:${i}`, at, holdMs: 1 + (i % 50), ttlMs: 3000, outcome: 'released' });
const atRefusal = (at: number) => refusalOf('k', at, 1, 0, 3000, 1, 'released', undefined, undefined, undefined);

type ChartValues = { hour: number; series: string; ms: number | null }[];
const chartValues = (p: PatternAnalysis) => (hourlySpec(p) as unknown as { layer: { data: { values: ChartValues } }[] }).layer[0]!.data.values;
const chartTitle = (p: PatternAnalysis) => (hourlySpec(p) as unknown as { title: { text: string } }).title.text;

describe('item 13: `at` outside 2000-01-01 … now + 1 day is refused like any invalid sample', () => {
  it('item 13: refusalOf names the likely unit, and the window’s edges are inside', () => {
    expect(atRefusal(now / 1000)).toMatch(/`at` must be epoch milliseconds from 2000-01-01 to a day from now, got [\d.]+ \(seconds\?/);
    expect(atRefusal(now * 1000)).toMatch(/micro- or nanoseconds\?/);
    expect(atRefusal(Date.UTC(2000, 0, 1) - 1)).toBeDefined();
    expect(atRefusal(now + 25 * HOUR)).toBeDefined();
    expect(atRefusal(Number.NaN)).toMatch(/got NaN$/);
    // The control: what is inside the window passes.
    expect(atRefusal(Date.UTC(2000, 0, 1))).toBeUndefined();
    expect(atRefusal(now + 23 * HOUR)).toBeUndefined();
    expect(atRefusal(now)).toBeUndefined();
  });

  it('item 13: SqliteRecorder drops and counts a timestamp in seconds, warns once, and writes the rest', async () => {
    const path = dbPath();
    const warnings: RecorderWarning[] = [];
    const recorder = new SqliteRecorder({ path, onWarning: (w) => warnings.push(w) });
    for (let i = 0; i < 100; i++) recorder.record(sample(i));
    recorder.record(sample(1, Date.now() / 1000));
    recorder.record(sample(2, Date.now() + 3 * 24 * HOUR));
    recorder.record(sample(3, Date.UTC(1999, 11, 31, 23)));
    expect(await recorder.close()).toMatchObject({ recorded: 103, written: 100, dropped: 3 });
    expect(rollupTotal(path)).toBe(100);
    expect(warnings.map((w) => w.kind)).toEqual(['invalid-sample']);
    expect(warnings[0]!.message).toMatch(/Dropped an invalid sample: `at` must be epoch milliseconds .*\(seconds\?/);
  });

  it('item 13: RedisStreamSink refuses it the same way (one aggregator for both)', async () => {
    // Closed by the test itself: an afterAll called inside the test left the connection open past the file's end.
    const redis = new Redis(inject('redisUrl'));
    try {
      const warnings: string[] = [];
      const stream = `test:item13:${Date.now()}`;
      const sink = new RedisStreamSink(redis, { stream, flushIntervalMs: 60_000, onWarning: (w) => warnings.push(w.message) });
      sink.record(sample(1, Date.now() / 1000));
      sink.record(sample(2));
      expect(await sink.close()).toMatchObject({ recorded: 2, written: 1, dropped: 1 });
      expect(warnings[0]).toMatch(/seconds\?/);
      await redis.del(stream);
    } finally {
      redis.disconnect();
    }
  });
});

describe('item 13: a stray row already in a file does not stretch the hourly chart over decades', () => {
  /** A file of two days of samples, plus one rollup row of a sample stamped in seconds (January 1970), as old recorders wrote it. */
  async function fileWithStrayRow(stray: boolean): Promise<string> {
    const path = dbPath();
    const recorder = new SqliteRecorder({ path, instance: 'api-1' });
    for (let i = 0; i < 2000; i++) recorder.record(sample(i));
    await recorder.close();
    if (stray) {
      const seconds = Math.floor(now / 1000);
      const db = new Database(path);
      for (const table of ['rollups', 'fleet_rollups']) {
        db.exec(`CREATE TEMP TABLE t AS SELECT * FROM ${table} LIMIT 1;
                 UPDATE t SET bucket_start_ms = ${seconds - (seconds % HOUR)}, first_ts_ms = ${seconds}, last_ts_ms = ${seconds};
                 INSERT INTO ${table} SELECT * FROM t; DROP TABLE t;`);
      }
      db.close();
    }
    return path;
  }

  it('item 13: the chart holds the latest hours only, says how many it left out, and the report is fast', async () => {
    const path = await fileWithStrayRow(true);
    const [p] = analyze([path]).patterns;
    expect(p!.hourly.length).toBe(49); // the stray hour is still data: counted, listed in JSON
    expect(new Date(p!.hourly[0]!.hourStartMs).getUTCFullYear()).toBe(1970);
    const values = chartValues(p!);
    const hours = values.map((v) => v.hour);
    expect(values.length).toBeLessThanOrEqual(2 * (MAX_CHART_HOURS + 1)); // it was 2 × 490,000 hours
    expect(Math.max(...hours) - Math.min(...hours)).toBeLessThanOrEqual(48 * HOUR);
    expect(chartTitle(p!)).toMatch(/the last 62 days \(1 earlier hour with data not shown\)/);

    const out = join(dir, `report-${n++}`);
    const started = performance.now();
    const { code, stderr } = await runCli(['report', '--db', path, '--out', out]);
    const tookMs = performance.now() - started;
    expect(code, stderr).toBe(0);
    expect(tookMs).toBeLessThan(15_000); // 31–53 s before
    expect(readFileSync(join(out, 'ttl-report.html'), 'utf8')).toMatch(/1 earlier hour with data not shown/);
  });

  it('item 13: the control — without the stray row the chart is every hour of the data, gaps included, and nothing is left out', async () => {
    const [p] = analyze([await fileWithStrayRow(false)]).patterns;
    const values = chartValues(p!);
    expect(values.filter((v) => v.series === 'p99')).toHaveLength(48);
    expect(chartTitle(p!)).toBe('Hold time per hour (UTC) against the TTL');
    // A chart spanning more than the bound is cut to it; one within it is whole.
    const wide = { ...p!, hourly: [{ ...p!.hourly[0]!, hourStartMs: p!.hourly[0]!.hourStartMs - (MAX_CHART_HOURS + 5) * HOUR }, ...p!.hourly] };
    expect(chartValues(wide).filter((v) => v.series === 'p99')).toHaveLength(48);
    const within = { ...p!, hourly: [{ ...p!.hourly[0]!, hourStartMs: p!.hourly[0]!.hourStartMs - 100 * HOUR }, ...p!.hourly] };
    expect(chartValues(within).filter((v) => v.series === 'p99')).toHaveLength(148);
  });
});
