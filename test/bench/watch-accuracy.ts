import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { log, round } from './stats.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How close `watch`'s hold times come, at `concurrency` locks at once, against two references:
 *
 * - the clients' own timing: SET's reply → the release's reply, each stamped where ioredis reads its
 *   chunk off the socket (a listener before its own), as the watcher stamps its notifications. A
 *   stamp taken where `await` resumes is later by whatever else that process ran first; that timing
 *   is reported too, for comparison.
 * - Redis's own: the lock is taken and released by scripts that read Redis's clock (TIME) as they
 *   run, so the hold Redis saw is known to the microsecond, free of any process's scheduling. Its
 *   notifications are the ones `SET … PX NX` and the library's release emit (`set`, `expire`, `del`).
 *
 * Each client stamp and each of Redis's clock readings, and the CPU wait of both processes
 * (schedstat), say which side a difference comes from.
 */
const TAKE = `if redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then local t = redis.call('time'); return t[1] * 1000000 + t[2] end return 0`;
const RELEASE_TIMED = `if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]); local t = redis.call('time'); return t[1] * 1000000 + t[2] end return 0`;

export interface Distribution {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

export function distribution(values: number[]): Distribution {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return { n: 0, p50: NaN, p90: NaN, p99: NaN, max: NaN };
  return { n: s.length, p50: round(quantile(s, 0.5)), p90: round(quantile(s, 0.9)), p99: round(quantile(s, 0.99)), max: round(s.at(-1)!) };
}

const show = (d: Distribution) => `p50 ${d.p50}, p90 ${d.p90}, p99 ${d.p99}, max ${d.max} ms`;

/** The main thread's time on a CPU and waiting for one (ms), from /proc/thread-self/schedstat (Linux; zeros elsewhere). */
export function threadSchedMs(): { runMs: number; waitMs: number } {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return { runMs: run! / 1e6, waitMs: wait! / 1e6 };
  } catch {
    return { runMs: 0, waitMs: 0 };
  }
}

/** A watcher's holds by key, and its schedstat over the run. */
export interface Watched {
  holds: Map<string, number>;
  sched: { runMs: number; waitMs: number } | undefined;
  gc: { count: number; maxMs: number };
}

/**
 * |watch − reference| per hold, in ms, and what exceeds 1 % of the hold (the goal: p99 ≤ 1 ms + 1 %).
 * `reference` holds per key.
 */
function errors(reference: Map<string, number>, watched: Map<string, number>) {
  const abs: number[] = [];
  const beyond: number[] = [];
  for (const [key, held] of reference) {
    const seen = watched.get(key);
    if (seen === undefined) continue;
    abs.push(Math.abs(seen - held));
    beyond.push(Math.abs(seen - held) - 0.01 * held);
  }
  return { abs: distribution(abs), p99BeyondOnePercentMs: distribution(beyond).p99 };
}

/** Runs the locks; `stop` then stops the watchers and hands over what they saw. */
export async function accuracyAt(redis: Redis, concurrency: number, locks: number, variants: readonly string[], watch: () => Promise<() => Promise<Watched[]>>) {
  const stop = await watch();
  const [takeSha, releaseSha] = [(await redis.script('LOAD', TAKE)) as string, (await redis.script('LOAD', RELEASE_TIMED)) as string];
  // The moment the chunk ioredis reads a reply from arrived: this listener runs before ioredis's own.
  let chunkMs = 0;
  const stamp = () => (chunkMs = performance.now());
  redis.stream.prependListener('data', stamp);
  const client = new Map<string, number>();
  const resumed = new Map<string, number>();
  const inRedis = new Map<string, number>();
  let next = 0;
  const sched0 = threadSchedMs();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < locks) {
        const key = `bench:watch:lock:${concurrency}:${next++}`;
        const token = randomUUID();
        const takenUs = (await redis.evalsha(takeSha, 1, key, token, 10_000)) as number;
        const [won, wonResumed] = [chunkMs, performance.now()];
        await sleep(Math.random() * 20);
        const releasedUs = (await redis.evalsha(releaseSha, 1, key, token)) as number;
        client.set(key, chunkMs - won);
        resumed.set(key, performance.now() - wonResumed);
        inRedis.set(key, (releasedUs - takenUs) / 1000);
      }
    }),
  );
  const sched1 = threadSchedMs();
  redis.stream.removeListener('data', stamp);
  await sleep(500);
  const watched = await stop();
  const clientVsRedis = errors(inRedis, client);
  const resumedVsRedis = errors(inRedis, resumed);
  const clientWaitMs = round(sched1.waitMs - sched0.waitMs, 0);
  const clientRunMs = round(sched1.runMs - sched0.runMs, 0);
  log(
    `watch accuracy at ${concurrency} locks at once, ${client.size} locks: the clients' timing (stamped at the socket) against Redis's clock: ${show(clientVsRedis.abs)}; ` +
      `stamped where await resumes: ${show(resumedVsRedis.abs)} (the clients' process waited ${clientWaitMs} ms for a CPU, ran ${clientRunMs} ms)`,
  );
  const byVariant = variants.map((variant, i) => {
    const w = watched[i]!;
    const vsClient = errors(client, w.holds);
    const vsRedis = errors(inRedis, w.holds);
    const sched = w.sched && { waitMs: round(w.sched.waitMs, 0), runMs: round(w.sched.runMs, 0) };
    log(
      `  ${variant}: ${vsClient.abs.n} of ${client.size} matched; |watch − client| ${show(vsClient.abs)} (goal p99 ≤ 1 ms + 1 %: ${vsClient.p99BeyondOnePercentMs} ms beyond 1 %); ` +
        `|watch − Redis| ${show(vsRedis.abs)} (${vsRedis.p99BeyondOnePercentMs} ms beyond 1 %)` +
        (sched ? `; the watcher waited ${sched.waitMs} ms for a CPU, ran ${sched.runMs} ms` : '') +
        `; ${w.gc.count} garbage collections, the longest ${round(w.gc.maxMs, 1)} ms`,
    );
    return { variant, vsClient, vsRedis, watcherGc: { count: w.gc.count, maxMs: round(w.gc.maxMs, 1) }, ...(sched && { watcherSched: sched }) };
  });
  return {
    concurrency,
    locks: client.size,
    clientVsRedis,
    clientResumedVsRedis: resumedVsRedis,
    clientSched: { waitMs: clientWaitMs, runMs: clientRunMs },
    watchers: byVariant,
  };
}
