import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { GCProfiler } from 'node:v8';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { lib } from './lib.js';
import { RELEASE } from '../../src/lock/scripts.js';
import { log, median, round } from './stats.js';

const { OtelRecorder, SqliteRecorder, withLock } = lib;

/** A reader nobody collects from: the SDK still aggregates every measurement as it is recorded. */
class IdleReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * A client that answers at once: what is left of a lock cycle is the lock's own JavaScript
 * (and the promises it awaits), with no socket, no Redis and no scheduling noise.
 */
const instant = {
  set: (_key: string, _token: string, _px: 'PX', _ttlMs: number, _nx: 'NX') => Promise.resolve('OK' as const),
  evalsha: (_sha: string, _numKeys: number, ..._rest: (string | number)[]) => Promise.resolve(1),
  eval: (_script: string, _numKeys: number, ..._rest: (string | number)[]) => Promise.resolve(1),
};

/** The baseline, as a team writes it by hand: a random token, SET NX PX, and the release script. */
async function plainCycle(key: string): Promise<void> {
  const token = randomUUID();
  if ((await instant.set(key, token, 'PX', 10_000, 'NX')) !== 'OK') throw new Error('unexpected');
  try {
    // the critical section: nothing
  } finally {
    await instant.evalsha(RELEASE.sha, 1, key, token);
  }
}

/** CPU ns and bytes allocated per call of `op`, over `n` sequential calls. */
async function perCall(n: number, op: () => Promise<unknown>): Promise<{ ns: number; bytes: number }> {
  const profiler = new GCProfiler();
  const heap0 = process.memoryUsage().heapUsed;
  profiler.start();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await op();
  const cpu = process.cpuUsage(cpu0);
  const heap1 = process.memoryUsage().heapUsed;
  const gcs = profiler.stop()?.statistics ?? [];
  // Allocated = what is on the heap now − what was + what the collections in between freed.
  let freed = 0;
  for (const gc of gcs) freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  return { ns: ((cpu.user + cpu.system) * 1000) / n, bytes: (heap1 - heap0 + freed) / n };
}

/**
 * The lock's own cost per cycle against a client that answers at once: CPU ns and bytes allocated per
 * cycle for a plain lock, bare `withLock` (command timeout on, the default), and `withLock` with options
 * spread per call (`{ ...options, recorder }`), interleaved over rounds. Goal: bare `withLock` within
 * 0.5 µs and 1 KB of the plain cycle.
 */
export async function benchLockMicro(dir: string, { rounds = 15, n = 50_000 } = {}) {
  const options = { ttlMs: 10_000, retry: { count: 0 } };
  const keep = { record: () => undefined };
  const recorded = { ...options, recorder: keep };
  const sqlite = new SqliteRecorder({ path: join(dir, 'bench-micro.db') });
  const provider = new MeterProvider({ readers: [new IdleReader()] });
  const otel = new OtelRecorder({ meter: provider.getMeter('ttl-advisor') });
  const toSqlite = { ...options, recorder: sqlite };
  const toOtel = { ...options, recorder: otel };
  const variants = {
    plain: () => plainCycle('bench:micro:plain'),
    withLock: () => withLock(instant, 'bench:micro:bare', noop, options),
    withLockNoTimeout: () => withLock(instant, 'bench:micro:bare', noop, noTimeout),
    withLockRecorded: () => withLock(instant, 'bench:micro:rec', noop, recorded),
    withLockSpreadPerCall: () => withLock(instant, 'bench:micro:spread', noop, { ...options, recorder: keep }),
    withLockSqlite: () => withLock(instant, 'bench:micro:sqlite', noop, toSqlite),
    withLockOtel: () => withLock(instant, 'bench:micro:otel', noop, toOtel),
  };
  const noTimeout = { ...options, commandTimeoutMs: 0 };
  type Name = keyof typeof variants;
  const names = Object.keys(variants) as Name[];
  for (const name of names) await perCall(n, variants[name]); // warm up
  const ns = Object.fromEntries(names.map((v) => [v, [] as number[]])) as Record<Name, number[]>;
  const bytes = Object.fromEntries(names.map((v) => [v, [] as number[]])) as Record<Name, number[]>;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length]!;
      const m = await perCall(n, variants[name]);
      ns[name].push(m.ns);
      bytes[name].push(m.bytes);
    }
  }
  const summary = (values: number[]) => ({ median: round(median(values), 0), min: round(Math.min(...values), 0), max: round(Math.max(...values), 0) });
  const result = Object.fromEntries(names.map((v) => [v, { cpuNs: summary(ns[v]), bytes: summary(bytes[v]) }])) as Record<Name, { cpuNs: ReturnType<typeof summary>; bytes: ReturnType<typeof summary> }>;
  const diffNs = ns.withLock.map((v, i) => v - ns.plain[i]!);
  const diffBytes = bytes.withLock.map((v, i) => v - bytes.plain[i]!);
  log(`lock cycle against a client that answers at once (median of ${rounds} interleaved rounds of ${n}; min–max):`);
  for (const v of names) {
    const { cpuNs, bytes: b } = result[v];
    log(`  ${v.padEnd(22)} ${String(cpuNs.median).padStart(6)} ns (${cpuNs.min}–${cpuNs.max})  ${String(b.median).padStart(6)} B (${b.min}–${b.max})`);
  }
  const overNs = round(median(diffNs), 0);
  const overBytes = round(median(diffBytes), 0);
  log(`  bare withLock over plain: ${overNs} ns and ${overBytes} B per cycle (goal ≤ 500 ns and ≤ 1024 B)`);
  // What each recorder adds to a lock, main thread (SQLite's writer thread is not in it: see the replay figure).
  const recording = (name: Name) => round(median(ns[name].map((v, i) => v - ns.withLock[i]!)), 0);
  const recordingNs = { sqlite: recording('withLockSqlite'), otel: recording('withLockOtel') };
  log(`  recording per lock, main thread: SqliteRecorder ${recordingNs.sqlite} ns, OtelRecorder (SDK, explicit buckets) ${recordingNs.otel} ns`);
  await sqlite.close();
  await provider.shutdown();
  return {
    rounds,
    callsPerRound: n,
    perCycle: result,
    withLockOverPlain: { cpuNs: overNs, bytes: overBytes, goal: { cpuNs: 500, bytes: 1024 } },
    recordingNs,
  };
}

function noop(): void {}
