import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RELEASE } from '../../src/lock/scripts.js';
import { measure } from './lock-overhead.js';
import { formatRate, log, median, round, spread } from './stats.js';
import { accuracyAt } from './watch-accuracy.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `watch`'s accuracy and cost, with the watcher in a process of its own (as it
 * runs). Accuracy (watch-accuracy.ts): 1,500 locks at 4 at once and 3,000 at 16,
 * each hold timed by its client, by Redis's clock and by `watch` (the `set`
 * notification → the `del` one), matched by key. The watcher's CPU per lock, and the lock rate it
 * keeps up with under Redis's default pubsub output-buffer limit. Cost to Redis:
 * lock cycles at 64 at once with notifications off, on with nobody subscribed, and
 * on with a watcher, interleaved.
 *
 * Before/after in one run: `WATCH_BASELINE=<a module exporting KeyspaceWatcher>`
 * (another version, bundled: `esbuild src/watch/watcher.ts --bundle --platform=node
 * --format=esm --outfile=…` in its checkout) runs it beside this one — against the
 * same traffic for accuracy, in the same interleaved rounds for CPU.
 */
const BASELINE = process.env.WATCH_BASELINE;
type Variant = 'current' | 'baseline';
const VARIANTS: readonly Variant[] = BASELINE ? ['current', 'baseline'] : ['current'];

interface WatcherCpu {
  cpuUs: number;
  samples: number;
  gc: { count: number; ms: number; maxMs: number };
  sched?: { runMs: number; waitMs: number };
  stats: { droppedInGaps: number; events: number };
}

/** Starts a watcher child; resolves once it is subscribed. `quiet`: it counts its samples but prints none. */
async function startWatcher(url: string, variant: Variant = 'current', quiet = false) {
  const args = [join(process.cwd(), 'test/bench/watch-child.mjs'), url, ...(variant === 'baseline' ? [BASELINE!] : []), ...(quiet ? ['--quiet'] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  while (!output.includes('ready\n')) {
    if (child.exitCode !== null) throw new Error(`watcher exited: ${output}`);
    await sleep(20);
  }
  return {
    /** Samples printed so far, and whether Redis cut the watcher off. */
    progress: () => ({ samples: (output.match(/^\[/gm) ?? []).length, cut: /pubsub output-buffer limit/.test(output) }),
    /** Stops it: the holds it recorded by key, and its CPU time since it was ready. */
    async stop(): Promise<{ holds: Map<string, number>; cpu: WatcherCpu }> {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      const holds = new Map<string, number>();
      let cpu: WatcherCpu | undefined;
      for (const line of output.split('\n')) {
        if (line.startsWith('[')) {
          const [key, hold] = JSON.parse(line) as [string, number];
          holds.set(key, hold);
        } else if (line.startsWith('cpu ')) cpu = JSON.parse(line.slice(4)) as WatcherCpu;
      }
      if (!cpu) throw new Error(`watcher said nothing of its CPU: ${output.slice(-500)}`);
      return { holds, cpu };
    },
  };
}

/** The bytes a lock cycle's three notifications (`set`, `expire`, `del`) take in Redis's output buffer for a subscriber of `pattern`. */
function bytesPerLockCycle(pattern: string, key: string): number {
  const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`.length;
  const channel = `__keyspace@0__:${key}`;
  return ['set', 'expire', 'del'].reduce((sum, event) => sum + '*4\r\n'.length + bulk('pmessage') + bulk(pattern) + bulk(channel) + bulk(event), 0);
}

/** The largest output buffer (`omem`, bytes) of a pattern subscriber, from CLIENT LIST. */
async function subscriberOutputBytes(redis: Redis): Promise<number> {
  const list = (await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
  let most = 0;
  for (const line of list.split('\n')) if (/ psub=[1-9]/.test(line)) most = Math.max(most, Number(/ omem=(\d+)/.exec(line)?.[1] ?? 0));
  return most;
}

const PUBSUB_SOFT_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * The lock rate one watcher keeps up with: pipelined lock cycles (2,000 held 20 ms at a time, so their
 * TTLs are read) as fast as Redis takes them for `seconds`, watched by a watcher process on the same 2
 * cores; what it recorded per second, how long it took to catch up, the largest backlog Redis held for it
 * (its output buffer, sampled every 100 ms), and whether Redis cut it off at the default pubsub
 * output-buffer limit (32 MB hard, 8 MB for 60 s). Above the rate it can process, the backlog grows in
 * Redis until the limit cuts the watcher off (and the gap is recorded).
 */
async function keepsUp(redis: Redis, url: string, seconds: number, variant: Variant) {
  const watcher = await startWatcher(url, variant);
  const started = performance.now();
  let taken = 0;
  let peakBacklogBytes = 0;
  const sampling = setInterval(() => void subscriberOutputBytes(redis).then((b) => (peakBacklogBytes = Math.max(peakBacklogBytes, b)), () => undefined), 100);
  while (performance.now() - started < seconds * 1000) {
    const keys = Array.from({ length: 2000 }, (_, i) => `bench:keepup:lock:${variant}:${taken + i}`);
    const take = redis.pipeline();
    for (const key of keys) take.set(key, 't', 'PX', 10_000, 'NX');
    await take.exec();
    await sleep(20);
    const release = redis.pipeline();
    for (const key of keys) release.evalsha(RELEASE.sha, 1, key, 't');
    await release.exec();
    taken += keys.length;
  }
  const floodMs = performance.now() - started;
  // Caught up when every lock is recorded, or when nothing new came for 2 s (a cut-off watcher never will).
  let last = watcher.progress().samples;
  let quietSince = performance.now();
  while (last < taken && performance.now() - quietSince < 2000) {
    await sleep(50);
    const now = watcher.progress().samples;
    if (now !== last) [last, quietSince] = [now, performance.now()];
  }
  clearInterval(sampling);
  const caughtUpMs = performance.now() - started;
  const { cut } = watcher.progress();
  const { cpu } = await watcher.stop();
  const lockBytes = bytesPerLockCycle('__keyspace@*__:*', `bench:keepup:lock:${variant}:${taken}`);
  const result = {
    variant,
    seconds: round(floodMs / 1000, 1),
    locksTakenPerSec: round(taken / (floodMs / 1000), 0),
    recorded: last,
    taken,
    watcherLocksPerSec: round(last / (Math.min(caughtUpMs, last < taken ? quietSince - started : caughtUpMs) / 1000), 0),
    lagAfterFloodMs: round(caughtUpMs - floodMs, 0),
    /** The most Redis held for the watcher at once: the backlog, against the 8 MB soft limit. */
    peakBacklogBytes,
    peakBacklogLocks: Math.round(peakBacklogBytes / lockBytes),
    cutOffByRedis: cut,
    gapHolds: cpu.stats.droppedInGaps,
    cpuUsPerLock: round(cpu.cpuUs / Math.max(1, cpu.samples), 1),
    /** The share of one core the watcher used while it watched the flood. */
    coreShare: round(cpu.cpuUs / 1000 / caughtUpMs, 2),
  };
  log(
    `watch keeps up (${variant}): ${formatRate(result.locksTakenPerSec)} lock cycles for ${result.seconds} s; the watcher recorded ${result.recorded} of ${result.taken} ` +
      `(${formatRate(result.watcherLocksPerSec)}), ${result.lagAfterFloodMs} ms behind at the end, its backlog in Redis at most ${round(peakBacklogBytes / 1024, 0)} KB ` +
      `(${result.peakBacklogLocks} lock cycles; the soft limit is ${PUBSUB_SOFT_LIMIT_BYTES / 1024} KB)` +
      `${cut ? '; Redis cut it off at its pubsub output-buffer limit' : ', never cut off'}; ${result.cpuUsPerLock} µs CPU per lock, ${result.coreShare} of a core`,
  );
  return result;
}

export async function benchWatch(url: string, port: number) {
  const redis = new Redis(url);
  await redis.config('SET', 'notify-keyspace-events', '');
  await redis.script('LOAD', RELEASE.source);
  // Both watchers (with a baseline) watch the same locks at the same time.
  const watchAll = async () => {
    const watchers = await Promise.all(VARIANTS.map((v) => startWatcher(url, v)));
    return async () => (await Promise.all(watchers.map((w) => w.stop()))).map(({ holds, cpu }) => ({ holds, sched: cpu.sched, gc: cpu.gc }));
  };
  const accuracy = [await accuracyAt(redis, 4, 1500, VARIANTS, watchAll), await accuracyAt(redis, 16, 3000, VARIANTS, watchAll)];
  const keepUp = [];
  for (const variant of VARIANTS) keepUp.push(await keepsUp(redis, url, 8, variant));

  // Redis's cost: lock cycles with notifications off vs on (a watcher subscribed); the watcher's CPU per lock
  const cycle = async (worker: number) => {
    const key = `bench:watchcost:lock:${worker}`;
    const token = randomUUID();
    await redis.set(key, token, 'PX', 10_000, 'NX');
    await redis.evalsha(RELEASE.sha, 1, key, token);
  };
  const modes = ['off', 'notified', ...VARIANTS] as const;
  type Mode = (typeof modes)[number];
  const rates = Object.fromEntries(modes.map((m) => [m, [] as number[]])) as Record<Mode, number[]>;
  const ratios = Object.fromEntries(modes.map((m) => [m, [] as number[]])) as Record<Mode, number[]>;
  const cpuUsPerLock = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
  const gcPer1kLocks = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
  const setting = async (on: boolean) => void (await redis.config('SET', 'notify-keyspace-events', on ? 'Kg$x' : ''));
  await measure(64, 300, cycle);
  for (let round = 0; round < 7; round++) {
    const order = modes.map((_, i) => modes[(i + round) % modes.length]!);
    const r = {} as Record<Mode, number>;
    for (const mode of order) {
      await setting(mode !== 'off');
      // a watcher process subscribed, reading PTTL per lock, as `ttl-advisor watch` runs
      const w = mode === 'current' || mode === 'baseline' ? await startWatcher(url, mode, true) : undefined;
      r[mode] = (await measure(64, 600, cycle)).opsPerSec;
      if (w) {
        await sleep(200); // the last notifications, read before it is stopped
        const { cpu } = await w.stop();
        cpuUsPerLock[mode as Variant].push(cpu.cpuUs / Math.max(1, cpu.samples));
        gcPer1kLocks[mode as Variant].push((1000 * cpu.gc.count) / Math.max(1, cpu.samples));
      }
    }
    for (const mode of modes) {
      rates[mode].push(r[mode]);
      ratios[mode].push(r[mode] / r.off);
    }
  }
  const watcherCpu = Object.fromEntries(VARIANTS.map((v) => [v, spread(cpuUsPerLock[v], 1)])) as Record<Variant, ReturnType<typeof spread>>;
  const watcherGc = Object.fromEntries(VARIANTS.map((v) => [v, spread(gcPer1kLocks[v], 1)])) as Record<Variant, ReturnType<typeof spread>>;
  for (const v of VARIANTS) {
    const [c, g] = [watcherCpu[v], watcherGc[v]];
    log(
      `watch CPU (${v}): ${c.median} µs per lock cycle (median of 7 rounds at 64 locks at once, ${c.min}–${c.max}); at most ${formatRate(1e6 / c.median)} on a core of its own; ` +
        `${g.median} garbage collections per 1,000 locks (${g.min}–${g.max})`,
    );
  }
  // redis-benchmark's SET, as the Redis docs measure (when the machine has it)
  let redisBenchmark: { offPerSec: number; onPerSec: number; ratio: number } | undefined;
  try {
    const setRate = () => Number(/"SET","([\d.]+)"/.exec(execFileSync('redis-benchmark', ['-p', String(port), '-t', 'set', '-n', '200000', '-c', '50', '-r', '100000', '--csv'], { encoding: 'utf8' }))?.[1]);
    await setting(false);
    const offPerSec = setRate();
    await redis.config('SET', 'notify-keyspace-events', 'KA');
    const sub = new Redis(url);
    await sub.psubscribe('__keyspace@*__:*');
    const onPerSec = setRate();
    sub.disconnect();
    redisBenchmark = { offPerSec, onPerSec, ratio: round(onPerSec / offPerSec) };
  } catch {
    redisBenchmark = undefined;
  }
  await redis.config('SET', 'notify-keyspace-events', '');
  redis.disconnect();
  const cost = {
    lockCyclesOff: round(median(rates.off), 0),
    lockCyclesNotified: round(median(rates.notified), 0),
    lockCyclesWatched: round(median(rates.current), 0),
    ratioNotified: round(median(ratios.notified)),
    ratioWatched: round(median(ratios.current)),
    ...(BASELINE && { lockCyclesWatchedBaseline: round(median(rates.baseline), 0), ratioWatchedBaseline: round(median(ratios.baseline)) }),
  };
  log(
    `watch cost: lock cycles at c=64 ${formatRate(cost.lockCyclesOff)} with notifications off; ${formatRate(cost.lockCyclesNotified)} on, nobody subscribed (ratio ${cost.ratioNotified}); ` +
      `${formatRate(cost.lockCyclesWatched)} on, a watcher process subscribed on the same 2 cores (ratio ${cost.ratioWatched}` +
      (BASELINE ? `; the baseline watcher ${cost.ratioWatchedBaseline})` : ')') +
      (redisBenchmark ? `; redis-benchmark SET ${formatRate(redisBenchmark.offPerSec)} off, ${formatRate(redisBenchmark.onPerSec)} with every key notified and subscribed: ratio ${redisBenchmark.ratio}` : ''),
  );
  const current = keepUp[0]!;
  const kept = !current.cutOffByRedis && current.gapHolds === 0 && current.recorded === current.taken;
  log(
    kept
      ? `watch keep-up rate: ${formatRate(current.locksTakenPerSec)} lock cycles, the highest rate measured (Redis on the same cores took no more), kept up with no gap; ` +
          `the rate beyond which Redis would cut it off is not reached here: about ${formatRate(1e6 / watcherCpu.current.median)} on a core of its own, from its CPU per lock (an estimate)`
      : `watch keep-up rate: ${formatRate(current.watcherLocksPerSec)} lock cycles, the rate it processed while behind: above it the backlog grows until Redis cuts it off`,
  );
  return { accuracy, keepUp, watcherCpuUsPerLock: watcherCpu, watcherGcPer1kLocks: watcherGc, keepsUpWithNoGap: kept, cost, redisBenchmark };
}
