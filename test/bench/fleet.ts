import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { dailyLoad, random } from '../../fixtures/generate.js';
import { RedisStreamSink, StreamCollector } from '../../src/index.js';
import { bucketIndexOf, highestValueAt, lowestValueAt } from '../../src/store/histogram/buckets.js';
import { encodeRollup } from '../../src/store/histogram/codec.js';
import { Histogram } from '../../src/store/histogram/histogram.js';
import { openForWriting } from '../../src/store/schema.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { log, median, round } from './stats.js';

const run = promisify(execFile);
const child = fileURLToPath(new URL('./report-child.ts', import.meta.url));
const INSTANCES = 100;
const PATTERNS = 50;
const HOURS = 48;
const LOCKS_PER_SECOND = 1000; // per instance, over all patterns

/** Standard normal CDF (Abramowitz–Stegun 7.1.26 via erf), enough to shape synthetic histograms. */
function normalCdf(z: number): number {
  const t = 1 / (1 + 0.3275911 * (Math.abs(z) / Math.SQRT2));
  const erf = 1 - (((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t) * Math.exp(-(z * z) / 2);
  return 0.5 * (1 + (z >= 0 ? erf : -erf));
}

/** The histogram of `count` lognormal hold times (µs), by bucket probabilities instead of by drawing every value. */
function lognormalHistogram(count: number, medianUs: number, sigma: number): Histogram {
  const h = new Histogram();
  const lo = bucketIndexOf(Math.max(1, Math.floor(medianUs * Math.exp(-5 * sigma))));
  const hi = bucketIndexOf(Math.ceil(medianUs * Math.exp(5 * sigma)));
  let assigned = 0;
  let modeIndex = lo;
  let modeCount = -1;
  for (let index = lo; index <= hi; index++) {
    const a = normalCdf(Math.log(Math.max(lowestValueAt(index), 0.5) / medianUs) / sigma);
    const b = normalCdf(Math.log((highestValueAt(index) + 1) / medianUs) / sigma);
    const n = Math.floor((b - a) * count);
    if (n > 0) h.record(lowestValueAt(index), n);
    assigned += n;
    if (n > modeCount) [modeIndex, modeCount] = [index, n];
  }
  if (count > assigned) h.record(lowestValueAt(modeIndex), count - assigned);
  return h;
}

function scaled(h: Histogram, factor: number): Histogram {
  const out = new Histogram();
  for (const [index, n] of h.counts) out.record(lowestValueAt(index), n * factor);
  return out;
}

/**
 * A fleet's database: 100 instances × 50 patterns × 48 h of rollups (17.3
 * billion locks), every instance of a pattern with the same shape so the sums
 * over instances can be written directly. Built once and cached.
 */
function fleetDatabase(): { path: string; locks: number } {
  const dir = join(tmpdir(), 'ttl-advisor-bench-cache');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'fleet-v4.db');
  const perHour = (LOCKS_PER_SECOND * 3600) / PATTERNS;
  let locks = 0;
  for (let hour = 0; hour < HOURS; hour++) locks += Math.round(perHour * dailyLoad(hour % 24)) * PATTERNS * INSTANCES;
  if (existsSync(path)) return { path, locks };
  const started = performance.now();
  log(`  synthesizing ${INSTANCES} instances × ${PATTERNS} patterns × ${HOURS} h (${(locks / 1e9).toFixed(1)} billion locks) into ${path}…`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
  const db = openForWriting(path, 5000);
  const rand = random(5);
  const start = Date.UTC(2026, 10, 28);
  db.transaction(() => {
    const instanceIds = Array.from({ length: INSTANCES }, (_, i) => {
      db.prepare('INSERT INTO instances (instance) VALUES (?)').run(`api-${i}:${1000 + i}`);
      return i + 1;
    });
    const insertRollup = db.prepare(
      `INSERT INTO rollups (pattern_id, bucket_start_ms, instance_id, count, released, expired, not_acquired, error, threw,
         hold_sum_us, wait_sum_us, first_ts_ms, last_ts_ms, hists) VALUES (?, ?, ?, ?, ?, 0, 0, 0, 0, ?, 0, ?, ?, ?)`,
    );
    const insertFleet = db.prepare(
      `INSERT INTO fleet_rollups (pattern_id, bucket_start_ms, count, released, expired, not_acquired, error, threw,
         hold_sum_us, wait_sum_us, first_ts_ms, last_ts_ms, hists) VALUES (?, ?, ?, ?, 0, 0, 0, 0, ?, 0, ?, ?, ?)`,
    );
    for (let p = 0; p < PATTERNS; p++) {
      const patternId = Number(db.prepare('INSERT INTO patterns (pattern) VALUES (?)').run(`svc${p}:lock:entity:{id}`).lastInsertRowid);
      const medianUs = 2000 * 1.12 ** p;
      const sigma = 0.25 + (p % 5) * 0.1;
      const ttlMs = [3000, 5000, 10_000, 30_000][p % 4]!;
      for (let hour = 0; hour < HOURS; hour++) {
        const bucket = start + hour * 3_600_000;
        const count = Math.round(perHour * dailyLoad(hour % 24));
        const hold = lognormalHistogram(count, medianUs * (0.9 + 0.2 * rand()), sigma);
        const wait = new Histogram();
        wait.record(0, count);
        const holdSum = Math.round(count * medianUs * Math.exp((sigma * sigma) / 2));
        const blob = encodeRollup(hold, wait, new Map([[ttlMs, count]]));
        for (const instanceId of instanceIds) {
          insertRollup.run(patternId, bucket, instanceId, count, count, holdSum, bucket, bucket + 3_599_999, blob);
        }
        const fleetWait = new Histogram();
        fleetWait.record(0, count * INSTANCES);
        insertFleet.run(
          patternId, bucket, count * INSTANCES, count * INSTANCES, holdSum * INSTANCES, bucket, bucket + 3_599_999,
          encodeRollup(scaled(hold, INSTANCES), fleetWait, new Map([[ttlMs, count * INSTANCES]])),
        );
      }
    }
  }).immediate();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  log(`  built in ${round((performance.now() - started) / 1000, 1)} s, ${round(statSync(path).size / 2 ** 20, 0)} MiB`);
  return { path, locks };
}

/** `report --format json` over the fleet database: wall time and peak RSS, in a fresh process each time. */
export async function benchFleetReport(outDir: string, repeats = 3) {
  const { path, locks } = fleetDatabase();
  const times: number[] = [];
  const processTimes: number[] = [];
  let rss = 0;
  for (let r = 0; r < repeats; r++) {
    const started = performance.now();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', child, '--db', path, '--format', 'json', '--out', outDir, '--quiet']);
    processTimes.push(performance.now() - started);
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as { code: number; ms: number; maxRssMb: number };
    if (result.code !== 0) throw new Error(`report exited ${result.code}`);
    times.push(result.ms);
    rss = Math.max(rss, result.maxRssMb);
  }
  const result = {
    instances: INSTANCES,
    patterns: PATTERNS,
    hours: HOURS,
    locks,
    dbMiB: round(statSync(path).size / 2 ** 20, 0),
    reportJsonMs: round(median(times), 1),
    reportProcessMs: round(median(processTimes), 1),
    peakRssMb: round(rss, 1),
    targets: { reportProcessMs: '≤ 3000', peakRssMb: '≤ 300' },
  };
  log(
    `fleet   report --format json over ${(locks / 1e9).toFixed(1)} billion locks (${INSTANCES} instances × ${PATTERNS} patterns × ${HOURS} h): ${result.reportJsonMs} ms in-process, ${result.reportProcessMs} ms wall with process start (target ≤ 3000); peak RSS ${result.peakRssMb} MB (target ≤ 300)`,
  );
  return result;
}

/** Collector throughput: sink batches from 20 instances, read from the stream into SQLite. */
export async function benchCollector(dir: string) {
  const server = process.env.REDIS_URL ? undefined : await startRedisServer();
  const url = process.env.REDIS_URL ?? server!.url;
  const redis = new Redis(url);
  const stream = `bench:stream:${Date.now()}`;
  try {
    let samples = 0;
    for (let i = 0; i < 20; i++) {
      const sink = new RedisStreamSink(redis, { stream, instance: `api-${i}`, rawSampleRate: 0.01, flushIntervalMs: 3_600_000, maxLen: 10_000_000 });
      const start = Date.UTC(2026, 10, 28);
      for (let batch = 0; batch < 25; batch++) {
        for (let j = 0; j < 2000; j++) {
          const n = batch * 2000 + j;
          sink.record({ key: `svc${n % 50}:lock:entity:${n}`, at: start + n * 50, holdMs: 1 + (n % 97), ttlMs: 3000, outcome: 'released' });
          samples++;
        }
        await sink.flush();
      }
      await sink.close();
    }
    const entries = await redis.xlen(stream);
    const db = join(dir, 'bench-central.db');
    rmSync(db, { force: true });
    const reader = new Redis(url, { maxRetriesPerRequest: null });
    const stop = new AbortController();
    const started = performance.now();
    let done: { entries: number; samples: number } = { entries: 0, samples: 0 };
    const collector = new StreamCollector(reader, { db, stream, batchSize: 200, blockMs: 100, progressIntervalMs: 100, onProgress: (p) => {
      done = p;
      if (p.entries >= entries) stop.abort();
    } });
    const totals = await collector.run(stop.signal);
    const seconds = (performance.now() - started) / 1000;
    reader.disconnect();
    const rawRows = (new Database(db, { readonly: true }).prepare('SELECT count(*) AS n FROM raw_samples').get() as { n: number }).n;
    const result = {
      entries: totals.entries,
      locks: totals.samples,
      rawRows,
      seconds: round(seconds, 2),
      entriesPerSec: round(totals.entries / seconds, 0),
      locksPerSec: round(totals.samples / seconds, 0),
      rawSamplesPerSec: round(rawRows / seconds, 0),
    };
    if (totals.samples !== samples) throw new Error(`collector counted ${totals.samples} of ${samples} locks (${done.entries})`);
    log(
      `collect ${result.entries} stream entries (${result.locks} locks, ${result.rawRows} raw samples) in ${result.seconds} s: ${result.entriesPerSec} entries/s, ${result.locksPerSec} locks/s, ${result.rawSamplesPerSec} raw samples/s`,
    );
    return result;
  } finally {
    await redis.del(stream);
    redis.disconnect();
    await server?.stop();
  }
}
