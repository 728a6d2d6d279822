import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { GCProfiler } from 'node:v8';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { LockSample } from '../../src/index.js';
import { Mutex } from 'redis-semaphore';
import Redlock from 'redlock';
import { lib } from './lib.js';
import { RELEASE } from '../../src/lock/scripts.js';
import { formatRate, log, median, round } from './stats.js';

const { RedisStreamSink, SqliteRecorder, withLock } = lib;

/**
 * The baseline: the lock a team would write by hand (SET NX PX, Lua
 * compare-and-delete by EVALSHA), with no measuring and no recording.
 */
async function plainLock(redis: Redis, key: string, fn: () => Promise<void> | void): Promise<void> {
  const token = randomUUID();
  if ((await redis.set(key, token, 'PX', 10_000, 'NX')) !== 'OK') throw new Error('contention in benchmark');
  try {
    await fn();
  } finally {
    await redis.evalsha(RELEASE.sha, 1, key, token);
  }
}

type Variant = 'plain' | 'withLock' | 'recorder' | 'spread' | 'sink' | 'redlock5' | 'semaphore';
/**
 * Measured interleaved, round by round. `spread` is not among them: after it has run, every `withLock` in the
 * process is slower, options built once or not (12,185 instead of 6,911 instructions per bare lock with 64 in
 * flight, cachegrind), which the plain lock is not; so it is measured after them, against the plain lock only.
 */
const VARIANTS: readonly Variant[] = ['plain', 'withLock', 'recorder', 'sink', 'redlock5', 'semaphore'];
const SPREAD_VARIANTS: readonly Variant[] = ['plain', 'spread'];
const LABELS: Record<Variant, string> = {
  plain: 'plain SET NX PX + Lua release',
  withLock: 'withLock',
  recorder: 'withLock + SqliteRecorder',
  spread: '… options spread per call',
  sink: 'withLock + RedisStreamSink',
  redlock5: 'node-redlock 5 using()',
  semaphore: 'redis-semaphore Mutex',
};

/** CPU time of the calling thread (ns), from Linux's scheduler statistics; `undefined` where there are none. */
function threadCpuNs(): number | undefined {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 1)[0]);
  } catch {
    return undefined;
  }
}

export interface Measured {
  opsPerSec: number;
  /** Process CPU per op, every thread (the recorder's writer thread counts too). */
  cpuUsPerOp: number;
  /** CPU of the main thread alone per op: what the service's event loop pays. */
  mainCpuUsPerOp: number;
  /** Bytes allocated on the main thread's heap per op. */
  bytesPerOp: number;
}

/** Throughput, CPU per op (all threads, and the main thread alone) and bytes allocated per op. */
export async function measure(
  concurrency: number,
  durationMs: number,
  op: (worker: number) => Promise<unknown>,
  settle?: () => Promise<unknown>,
): Promise<Measured> {
  let done = 0;
  const stopAt = performance.now() + durationMs;
  const started = performance.now();
  const profiler = new GCProfiler();
  const heap0 = process.memoryUsage().heapUsed;
  profiler.start();
  const cpu0 = process.cpuUsage();
  const main0 = threadCpuNs();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < stopAt) {
        await op(worker);
        done++;
      }
    }),
  );
  const opsPerSec = done / ((performance.now() - started) / 1000);
  const main1 = threadCpuNs();
  const heap1 = process.memoryUsage().heapUsed;
  // Allocated = what is on the heap now − what was + what the collections in between freed.
  let freed = 0;
  for (const gc of profiler.stop()?.statistics ?? []) freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  // The recorder's work for these locks (its writer thread, the sink's sends) belongs to them.
  await settle?.();
  const cpu = process.cpuUsage(cpu0);
  const mainCpuUsPerOp = main0 === undefined || main1 === undefined ? Number.NaN : (main1 - main0) / 1000 / done;
  return { opsPerSec, cpuUsPerOp: (cpu.user + cpu.system) / done, mainCpuUsPerOp, bytesPerOp: (heap1 - heap0 + freed) / done };
}

/**
 * Lock throughput with and without instrumentation, at each concurrency,
 * interleaved round by round (alternating which goes first) so that machine
 * noise hits both alike. Reports the median of the per-round ratios.
 */
export async function benchLockOverhead(redis: Redis, dir: string, { rounds = 11, roundMs = 600 } = {}) {
  const path = join(dir, 'bench-lock.db');
  rmSync(path, { force: true });
  const recorder = new SqliteRecorder({ path });
  const sink = new RedisStreamSink(redis, { stream: `bench:sink:${Date.now()}`, maxLen: 1000 });
  // The peers as their users run them, without recording: retries off, as for ours.
  const redlock = new Redlock([redis], { retryCount: 0 });
  await redis.script('LOAD', RELEASE.source);
  const noop = () => undefined;
  // Options built once, as a user should: a spread per call gives every object a fresh hidden class in
  // Node 20's V8, and every read of the lock's options then misses its inline cache (6–7 µs per lock).
  const options = { ttlMs: 10_000, retry: { count: 0 } };
  const recorded = { ...options, recorder };
  const sunk = { ...options, recorder: sink };
  const spreadRecorder = new SqliteRecorder({ path: join(dir, 'bench-lock-spread.db') });
  const ops: Record<Variant, (worker: number) => Promise<void>> = {
    plain: (worker) => plainLock(redis, `bench:plain:product:${worker}`, noop),
    withLock: (worker) => withLock(redis, `bench:bare:product:${worker}`, noop, options),
    recorder: (worker) => withLock(redis, `bench:inst:product:${worker}`, noop, recorded),
    // The shape to avoid, for the README: a fresh object per call defeats V8's inline caches.
    spread: (worker) => withLock(redis, `bench:spread:product:${worker}`, noop, { ...options, recorder: spreadRecorder }),
    sink: (worker) => withLock(redis, `bench:sink:product:${worker}`, noop, sunk),
    redlock5: (worker) => redlock.using([`bench:redlock:product:${worker}`], 10_000, async () => undefined),
    semaphore: async (worker) => {
      const mutex = new Mutex(redis, `bench:semaphore:product:${worker}`, { lockTimeout: 10_000, acquireAttemptsLimit: 1 });
      await mutex.acquire();
      await mutex.release();
    },
  };
  const settles: Partial<Record<Variant, () => Promise<unknown>>> = {
    recorder: () => recorder.flush(),
    spread: () => spreadRecorder.flush(),
    sink: () => sink.flush(),
  };
  const results = [];
  // The same-options variants at both concurrencies first, then the spread-per-call shape (see VARIANTS).
  for (const variants of [VARIANTS, SPREAD_VARIANTS]) for (const concurrency of [1, 64]) {
    const recorded = variants.includes('recorder');
    // Warm up every path (JIT, connection, scripts).
    for (const variant of variants) await measure(concurrency, 300, ops[variant]);
    const series = () => Object.fromEntries(variants.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
    const rates = series();
    const cpu = series();
    const mainCpu = series();
    const bytes = series();
    const ratios = series();
    const extraCpu: number[] = [];
    const extraMainCpu: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Rotate the order so that no variant always runs first or last.
      const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
      const r = {} as Record<Variant, Measured>;
      for (const variant of order) r[variant] = await measure(concurrency, roundMs, ops[variant], settles[variant]);
      for (const v of variants) {
        rates[v].push(r[v].opsPerSec);
        cpu[v].push(r[v].cpuUsPerOp);
        mainCpu[v].push(r[v].mainCpuUsPerOp);
        bytes[v].push(r[v].bytesPerOp);
        ratios[v].push(r[v].opsPerSec / r.plain.opsPerSec);
      }
      if (!recorded) continue;
      extraCpu.push(r.recorder.cpuUsPerOp - r.withLock.cpuUsPerOp);
      extraMainCpu.push(r.recorder.mainCpuUsPerOp - r.plain.mainCpuUsPerOp);
    }
    const per = <T>(f: (v: Variant) => T) => Object.fromEntries(variants.map((v) => [v, f(v)])) as Record<Variant, T>;
    const result = {
      concurrency,
      variants,
      opsPerSec: per((v) => round(median(rates[v]), 0)),
      /** Median over rounds of each variant's throughput over the plain lock's, measured side by side; and the spread. */
      ratioToPlain: per((v) => round(median(ratios[v]))),
      ratioSpread: per((v) => [round(Math.min(...ratios[v])), round(Math.max(...ratios[v]))]),
      cpuUsPerOp: per((v) => round(median(cpu[v]), 1)),
      mainThreadCpuUsPerOp: per((v) => round(median(mainCpu[v]), 2)),
      mainThreadCpuSpread: per((v) => [round(Math.min(...mainCpu[v]), 2), round(Math.max(...mainCpu[v]), 2)]),
      bytesPerOp: per((v) => round(median(bytes[v]), 0)),
      ...(recorded && {
        recordingCpuUsPerOp: round(median(extraCpu), 2),
        /** Main-thread CPU per lock of recorded withLock over the plain lock (round by round). */
        recordedOverPlainMainCpuUs: round(median(extraMainCpu), 2),
      }),
      targets: { recorderRatio: '≥ 0.95 and ahead of redlock5 and semaphore', recordingCpuUsPerOp: '≤ 2' },
    };
    log(`lock throughput c=${concurrency}, ratio to the plain lock (median of ${rounds} interleaved rounds, min–max):`);
    for (const v of variants) {
      const [lo, hi] = result.ratioSpread[v];
      log(
        `  ${LABELS[v].padEnd(32)} ${formatRate(result.opsPerSec[v]).padStart(10)}  ratio ${result.ratioToPlain[v]} (${lo}–${hi})` +
          `  main thread ${result.mainThreadCpuUsPerOp[v]} µs/lock, ${result.bytesPerOp[v]} B/lock; all threads ${result.cpuUsPerOp[v]} µs/lock`,
      );
    }
    if (recorded) {
      log(`  recorded withLock over the plain lock, main thread: ${result.recordedOverPlainMainCpuUs} µs/lock`);
      log(`  recording's CPU per lock (recorder − bare withLock, all threads): ${result.recordingCpuUsPerOp} µs (target ≤ 2)`);
    }
    results.push(result);
  }
  const stats = await recorder.close();
  await spreadRecorder.close();
  const sinkStats = await sink.close();
  const replay = await recordingCostByReplay(redis, dir);
  await redis.del(sink.stream);
  log(`  during the run: SqliteRecorder counted ${stats.written} locks (${stats.dropped} dropped); RedisStreamSink sent ${sinkStats.written} (${sinkStats.dropped} dropped)`);
  return { rounds, roundMs, results, recorder: stats, sink: sinkStats, recordingCpuUsPerLockByReplay: replay };
}

/**
 * What recording adds per lock, without the noise of two throughput runs:
 * the samples 20,000 real locks produced, kept by a recorder that only keeps
 * them, then replayed into a SqliteRecorder ten times over (record() and close(), its
 * writer thread included: process CPU counts every thread).
 */
async function recordingCostByReplay(redis: Redis, dir: string): Promise<number> {
  const samples: LockSample[] = [];
  const keep = { record: (sample: LockSample) => void samples.push(sample) };
  await Promise.all(
    Array.from({ length: 64 }, async (_, worker) => {
      for (let i = 0; i < 20_000 / 64; i++) await withLock(redis, `bench:replay:product:${worker}`, () => undefined, { ttlMs: 10_000, recorder: keep });
    }),
  );
  const costs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const path = join(dir, `bench-replay-${r}.db`);
    const recorder = new SqliteRecorder({ path });
    recorder.record(samples[0]!);
    await recorder.flush(); // the writer thread started and the file opened: not a per-lock cost
    const cpu0 = process.cpuUsage();
    for (let pass = 0; pass < 10; pass++) for (const sample of samples) recorder.record(sample);
    await recorder.close();
    const cpu = process.cpuUsage(cpu0);
    costs.push((cpu.user + cpu.system) / (10 * samples.length));
    rmSync(path, { force: true });
  }
  const cost = round(median(costs), 2);
  log(`  recording's CPU per lock, by replaying ${samples.length} real locks' samples into a SqliteRecorder (record() + writer thread): ${cost} µs (target ≤ 2)`);
  return cost;
}
