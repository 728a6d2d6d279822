import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { LockSample } from '../../src/index.js';
import { lib } from './lib.js';
import { measure } from './lock-overhead.js';
import { log, median, round } from './stats.js';

const { SqliteRecorder, withLock, RedisLock } = lib;

/**
 * What renewal tracking costs (issue 24), side by side in one run:
 * - the lock: `withLock` with `autoExtend` (a lease log and the shared event-loop
 *   ticker per hold) against the same lock without it, on holds too short to renew;
 *   and `extend()` of a held lock (one renewal recorded per call);
 * - recording: `record()` of a lease sample with 4 renewal gaps against a plain sample.
 * Interleaved rounds; medians of CPU µs per operation and of the per-round ratios.
 */
export async function benchLeases(redis: Redis, dir: string, { rounds = 9, roundMs = 500 } = {}) {
  const plain = { ttlMs: 10_000, retry: { count: 0 } };
  const lease = { ...plain, autoExtend: 3000 };
  const noop = () => undefined;
  const ops = {
    fixed: (worker: number) => withLock(redis, `bench:lease:fixed:${worker}`, noop, plain),
    lease: (worker: number) => withLock(redis, `bench:lease:auto:${worker}`, noop, lease),
  };
  for (const op of Object.values(ops)) await measure(16, 300, op);
  const cpu = { fixed: [] as number[], lease: [] as number[] };
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (['fixed', 'lease'] as const) : (['lease', 'fixed'] as const);
    const got: Record<string, { opsPerSec: number; cpuUsPerOp: number }> = {};
    for (const name of order) got[name] = await measure(16, roundMs, ops[name]);
    cpu.fixed.push(got.fixed!.cpuUsPerOp);
    cpu.lease.push(got.lease!.cpuUsPerOp);
    ratios.push(got.lease!.opsPerSec / got.fixed!.opsPerSec);
  }

  // extend() of one held lock, with a recorder (the renewal is recorded) and without.
  const extendCpu = async (recorded: boolean) => {
    const recorder = recorded ? new SqliteRecorder({ path: join(dir, 'bench-lease-extend.db') }) : undefined;
    const lock = await RedisLock.acquire(redis, `bench:lease:extend:${recorded}`, { ...plain, ...(recorder && { recorder }) });
    const n = 5000;
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await lock.extend();
    const used = process.cpuUsage(cpu0);
    await lock.release();
    await recorder?.close();
    return (used.user + used.system) / n;
  };
  const extendUs = { tracked: [] as number[] };
  for (let r = 0; r < 3; r++) extendUs.tracked.push(await extendCpu(true));
  rmSync(join(dir, 'bench-lease-extend.db'), { force: true });

  // record(): a lease sample (4 gaps) against a plain one, into a SqliteRecorder, 200,000 each, interleaved.
  const recordNs = { plain: [] as number[], lease: [] as number[] };
  const at = Date.now();
  const plainSample: LockSample = { key: 'bull:q:1:lock', at, holdMs: 2100, ttlMs: 1000, outcome: 'released' };
  const leaseSample: LockSample = { ...plainSample, extensions: 4, renewal: { gapsMs: [500, 501, 498, 530], periodMs: 500, minMarginMs: 470, library: 'bullmq' } };
  for (let r = 0; r < 5; r++) {
    for (const [name, sample] of (r % 2 === 0 ? [['plain', plainSample], ['lease', leaseSample]] : [['lease', leaseSample], ['plain', plainSample]]) as [keyof typeof recordNs, LockSample][]) {
      const path = join(dir, `bench-lease-${name}.db`);
      rmSync(path, { force: true });
      const recorder = new SqliteRecorder({ path });
      const n = 200_000;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) recorder.record(sample);
      recordNs[name].push(Number(process.hrtime.bigint() - t0) / n);
      await recorder.close();
      rmSync(path, { force: true });
    }
  }

  const result = {
    withLockCpuUsPerLock: { fixed: round(median(cpu.fixed), 2), autoExtend: round(median(cpu.lease), 2) },
    autoExtendThroughputRatio: round(median(ratios)),
    extendCpuUsPerCall: round(median(extendUs.tracked), 2),
    recordNsPerSample: { plain: round(median(recordNs.plain), 0), lease4Gaps: round(median(recordNs.lease), 0) },
  };
  log(`renewal tracking (median of ${rounds} interleaved rounds, 16 callers, holds too short to renew):`);
  log(`  withLock CPU per lock: ${result.withLockCpuUsPerLock.fixed} µs fixed, ${result.withLockCpuUsPerLock.autoExtend} µs with autoExtend (its timer, the lease log, the event-loop ticker); throughput ratio ${result.autoExtendThroughputRatio}`);
  log(`  extend() of a held lock, renewal recorded: ${result.extendCpuUsPerCall} µs CPU per call`);
  log(`  record(): ${result.recordNsPerSample.plain} ns a plain sample, ${result.recordNsPerSample.lease4Gaps} ns a lease sample with 4 renewal gaps`);
  return result;
}
