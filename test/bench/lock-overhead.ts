import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { RedisStreamSink, SqliteRecorder, withLock } from '../../src/index.js';
import { RELEASE } from '../../src/lock/scripts.js';
import { formatRate, log, median, round } from './stats.js';

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

type Variant = 'plain' | 'withLock' | 'instrumented' | 'lean' | 'sink';
const VARIANTS: readonly Variant[] = ['plain', 'withLock', 'instrumented', 'lean', 'sink'];

/** Ops per second and process CPU µs per op (all threads: the recorder's writer thread counts too). */
async function measure(
  concurrency: number,
  durationMs: number,
  op: (worker: number) => Promise<void>,
  settle?: () => Promise<unknown>,
): Promise<{ opsPerSec: number; cpuUsPerOp: number }> {
  let done = 0;
  const stopAt = performance.now() + durationMs;
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < stopAt) {
        await op(worker);
        done++;
      }
    }),
  );
  const opsPerSec = done / ((performance.now() - started) / 1000);
  // The recorder's work for these locks (its writer thread, the sink's sends) belongs to them.
  await settle?.();
  const cpu = process.cpuUsage(cpu0);
  return { opsPerSec, cpuUsPerOp: (cpu.user + cpu.system) / done };
}

/**
 * Lock throughput with and without instrumentation, at each concurrency,
 * interleaved round by round (alternating which goes first) so that machine
 * noise hits both alike. Reports the median of the per-round ratios.
 */
export async function benchLockOverhead(redis: Redis, dir: string, { rounds = 15, roundMs = 600 } = {}) {
  const path = join(dir, 'bench-lock.db');
  rmSync(path, { force: true });
  const recorder = new SqliteRecorder({ path });
  const sink = new RedisStreamSink(redis, { stream: `bench:sink:${Date.now()}`, maxLen: 1000 });
  await redis.script('LOAD', RELEASE.source);
  const noop = () => undefined;
  const ops: Record<Variant, (worker: number) => Promise<void>> = {
    plain: (worker) => plainLock(redis, `bench:plain:product:${worker}`, noop),
    withLock: (worker) => withLock(redis, `bench:bare:product:${worker}`, noop, { ttlMs: 10_000, retry: { count: 0 } }),
    instrumented: (worker) =>
      withLock(redis, `bench:inst:product:${worker}`, noop, { ttlMs: 10_000, recorder, retry: { count: 0 } }),
    // The same, with command timeouts left to the client (commandTimeoutMs: 0).
    lean: (worker) =>
      withLock(redis, `bench:lean:product:${worker}`, noop, { ttlMs: 10_000, recorder, retry: { count: 0 }, commandTimeoutMs: 0 }),
    sink: (worker) => withLock(redis, `bench:sink:product:${worker}`, noop, { ttlMs: 10_000, recorder: sink, retry: { count: 0 } }),
  };
  const settles: Partial<Record<Variant, () => Promise<unknown>>> = {
    instrumented: () => recorder.flush(),
    lean: () => recorder.flush(),
    sink: () => sink.flush(),
  };
  const results = [];
  for (const concurrency of [1, 64]) {
    // Warm up both paths (JIT, connection, scripts).
    for (const variant of VARIANTS) await measure(concurrency, 300, ops[variant]);
    const rates: Record<Variant, number[]> = { plain: [], withLock: [], instrumented: [], lean: [], sink: [] };
    const cpu: Record<Variant, number[]> = { plain: [], withLock: [], instrumented: [], lean: [], sink: [] };
    const ratios: number[] = [];
    const bareRatios: number[] = [];
    const sinkRatios: number[] = [];
    const leanRatios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Rotate the order so that no variant always runs first or last.
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
      const r: Record<Variant, number> = { plain: 0, withLock: 0, instrumented: 0, lean: 0, sink: 0 };
      for (const variant of order) {
        const m = await measure(concurrency, roundMs, ops[variant], settles[variant]);
        r[variant] = m.opsPerSec;
        cpu[variant].push(m.cpuUsPerOp);
      }
      for (const variant of VARIANTS) rates[variant].push(r[variant]);
      ratios.push(r.instrumented / r.plain);
      bareRatios.push(r.withLock / r.plain);
      sinkRatios.push(r.sink / r.plain);
      leanRatios.push(r.lean / r.plain);
    }
    const result = {
      concurrency,
      plainOpsPerSec: round(median(rates.plain), 0),
      withLockOpsPerSec: round(median(rates.withLock), 0),
      instrumentedOpsPerSec: round(median(rates.instrumented), 0),
      medianRatio: round(median(ratios)),
      withLockWithoutRecorderRatio: round(median(bareRatios)),
      sinkOpsPerSec: round(median(rates.sink), 0),
      leanOpsPerSec: round(median(rates.lean), 0),
      instrumentedWithoutCommandTimeoutsRatio: round(median(leanRatios)),
      withLockRedisStreamSinkRatio: round(median(sinkRatios)),
      ratios: ratios.map((x) => round(x)),
      cpuUsPerOp: Object.fromEntries(VARIANTS.map((v) => [v, round(median(cpu[v]), 1)])),
      target: '≥ 0.95 (medianRatio)',
    };
    log(
      `  client CPU µs/lock (all threads, median): ${VARIANTS.map((v) => `${v} ${result.cpuUsPerOp[v]}`).join(', ')}`,
    );
    log(
      `lock overhead  c=${String(concurrency).padStart(2)}  plain ${formatRate(result.plainOpsPerSec)}  withLock ${formatRate(result.withLockOpsPerSec)}  withLock+SqliteRecorder ${formatRate(result.instrumentedOpsPerSec)}  ratio instrumented/plain ${result.medianRatio} (target ≥ 0.95), without recorder ${result.withLockWithoutRecorderRatio}, with RedisStreamSink ${result.withLockRedisStreamSinkRatio}, recorder with commandTimeoutMs 0 ${result.instrumentedWithoutCommandTimeoutsRatio}`,
    );
    results.push(result);
  }
  const stats = await recorder.close();
  const sinkStats = await sink.close();
  await redis.del(sink.stream);
  log(`  during the run: SqliteRecorder wrote ${stats.written} samples (${stats.dropped} dropped); RedisStreamSink sent ${sinkStats.written} (${sinkStats.dropped} dropped)`);
  return { rounds, roundMs, results, recorder: stats, sink: sinkStats };
}
