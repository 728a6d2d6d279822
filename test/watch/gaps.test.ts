import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { analyze, renderJson, renderMarkdown } from '../../src/index.js';
import { warningSentences } from '../../src/report/hint-text.js';
import { openForReading } from '../../src/store/schema.js';
import { useOwnRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';
import { startWatch } from '../helpers/watch-cli.js';

/**
 * Issue 22, item 2: when Redis disconnects the watcher's subscriber (its pubsub
 * output-buffer limit, here made small), the notifications it had queued are
 * gone. The watcher says which limit and what to do, records the gap in the
 * file, and the report marks those hours' counts as lower bounds.
 */

const dir = tempDir();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running: ChildProcess[] = [];
let server: RedisServer;
let redis: Redis;

useOwnRedisServer(async (s, client) => {
  [server, redis] = [s, client];
  await redis.config('SET', 'notify-keyspace-events', 'Kg$x');
});
afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.signalCode === 'SIGSTOP' || p.exitCode === null) p.kill('SIGCONT');
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  }
  await redis.config('SET', 'client-output-buffer-limit', 'pubsub 33554432 8388608 60');
});

function watch(db: string) {
  return startWatch(server.url, db, running, '--progress-ms', '500');
}

/**
 * `n` locks, 2,000 at a time: taken, held `holdMs` (by default long enough for a watcher on a loaded host to read
 * their TTL: at 30 ms, beside two busy loops, all 50 of a pattern were gone first), released; keys long enough to
 * fill buffers fast.
 */
async function locks(prefix: string, n: number, holdMs = 250): Promise<void> {
  const pad = 'x'.repeat(150);
  for (let start = 0; start < n; start += 2000) {
    const keys = Array.from({ length: Math.min(n, start + 2000) - start }, (_, i) => `${prefix}:${pad}:lock:${start + i}`);
    const take = redis.pipeline();
    for (const key of keys) take.set(key, 't', 'PX', 10_000, 'NX');
    await take.exec();
    await sleep(holdMs);
    const release = redis.pipeline();
    for (const key of keys) release.eval('if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0', 1, key, 't');
    await release.exec();
  }
}

function gapsIn(db: string) {
  const file = openForReading(db);
  try {
    return file.prepare('SELECT source, from_ms AS fromMs, to_ms AS toMs, reason, open_holds AS openHolds FROM gaps').all() as {
      source: string;
      fromMs: number;
      toMs: number;
      reason: string;
      openHolds: number;
    }[];
  } finally {
    file.close();
  }
}

describe('ttl-advisor watch: what Redis dropped (item 2)', () => {
  it('item 2: a subscriber Redis cut off at its pubsub output-buffer limit is said plainly, its gap is recorded, and the report marks the counts as lower bounds', async () => {
    await redis.config('SET', 'client-output-buffer-limit', 'pubsub 262144 131072 1');
    const db = join(dir, 'cut.db');
    const w = watch(db);
    await w.said('subscribed on 1 node');
    await locks('before', 50); // seen: confirms the pattern
    await sleep(300);
    const before = Date.now();
    // The watcher stops reading (as a starved process does); Redis queues its notifications until the limit.
    w.proc.kill('SIGSTOP');
    await locks('during', 30_000, 30); // the watcher is stopped: Redis only has to queue them
    w.proc.kill('SIGCONT');
    await w.said(/pubsub output-buffer limit \(client-output-buffer-limit pubsub 262144 131072 1\)/, 30_000);
    const cutSeen = Date.now();
    await w.said(/back on 127\.0\.0\.1:\d+: [\d.]+ s of notifications were not seen \(recorded as a gap\)/, 30_000);
    await locks('after', 50);
    await sleep(500);
    w.proc.kill('SIGTERM');
    expect((await w.exited).code, w.output()).toBe(0);
    expect(w.output()).toMatch(/Raise the limit \(CONFIG SET client-output-buffer-limit "pubsub 256mb 64mb 60"/);

    const [gap, ...more] = gapsIn(db);
    expect(more).toEqual([]);
    expect(gap).toMatchObject({ source: `127.0.0.1:${server.port}`, reason: 'output-buffer-limit' });
    // From the last notification read to when it was back. The last read can fall in the flood: what the kernel
    // still held of Redis's output is read after SIGCONT, so on a loaded machine (a flood of 30,000 locks taking
    // over 5 s) it comes well after `before` — but never after the watcher said it was cut off.
    expect(gap!.fromMs).toBeGreaterThanOrEqual(before - 1000);
    expect(gap!.fromMs).toBeLessThanOrEqual(cutSeen);
    expect(gap!.toMs).toBeGreaterThan(gap!.fromMs);

    const analysis = analyze([db]);
    // Every pattern the watcher recorded has its counts marked as lower bounds for the hour(s) of the gap.
    for (const pattern of analysis.patterns) {
      expect(pattern.incompleteHours).toBeGreaterThanOrEqual(1);
      expect(pattern.hourly.some((h) => h.incomplete)).toBe(true);
    }
    expect(renderMarkdown(analysis)).toMatch(/\| ≥ [\d,]+ \|/);
    const said = warningSentences(analysis).join(' ');
    expect(said).toMatch(/Not every lock was seen: `ttl-advisor watch` lost sight of locks 1 time\(s\)/);
    expect(said).toMatch(/Redis closed the watcher's notification connection \(its pubsub output-buffer limit/);
    // The locks taken while the watcher was stopped are not invented: their pattern is not there at all.
    expect(analysis.patterns.map((p) => p.pattern.split(':')[0]).sort()).toEqual(['after', 'before']);
    const json = JSON.parse(renderJson(analysis)) as { gaps: { reason: string }[]; patterns: { incompleteHours: number }[] };
    expect(json.gaps).toMatchObject([{ reason: 'output-buffer-limit' }]);
    expect(json.patterns[0]!.incompleteHours).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('W1: the gap of a watcher Redis dropped runs from the last notification it had read when it fell behind to the resubscription, covering every lock it lost', async () => {
    await redis.config('SET', 'client-output-buffer-limit', 'pubsub 262144 131072 1');
    const db = join(dir, 'behind.db');
    const w = watch(db);
    await w.said('subscribed on 1 node');
    await locks('before', 50);
    await sleep(600); // the subscriber's PINGs come back: everything so far is known read
    const stalled = Date.now();
    // Falls behind (a starved process): what the kernel holds of the flood is read after it resumes, seconds late,
    // and the rest Redis discards at its limit. Arrival times would start the gap after the flood, not before it.
    w.proc.kill('SIGSTOP');
    await locks('during', 30_000, 30);
    const floodEnded = Date.now();
    await sleep(500);
    w.proc.kill('SIGCONT');
    await w.said(/back on 127\.0\.0\.1:\d+: [\d.]+ s of notifications were not seen/, 30_000);
    w.proc.kill('SIGTERM');
    expect((await w.exited).code, w.output()).toBe(0);
    const [gap, ...more] = gapsIn(db);
    expect(more).toEqual([]);
    // From the last PING answered before the stall (sent at most a few of its 250 ms periods earlier).
    expect(gap!.fromMs).toBeLessThanOrEqual(stalled);
    expect(gap!.fromMs).toBeGreaterThanOrEqual(stalled - 2000);
    expect(gap!.toMs).toBeGreaterThan(floodEnded);
    // The hours it touches are marked: their counts are lower bounds.
    const analysis = analyze([db]);
    expect(analysis.patterns.every((p) => p.incompleteHours >= 1)).toBe(true);
  }, 120_000);

  it('item 2 (control): a watcher that keeps up under the default limit records every lock and no gap', async () => {
    const db = join(dir, 'kept-up.db');
    const w = watch(db);
    await w.said('subscribed on 1 node');
    await locks('steady', 3000);
    await sleep(1000);
    w.proc.kill('SIGTERM');
    expect((await w.exited).code, w.output()).toBe(0);
    expect(gapsIn(db)).toEqual([]);
    const analysis = analyze([db]);
    expect(analysis.patterns.map((p) => [p.count, p.incompleteHours])).toEqual([[3000, 0]]);
    expect(analysis.gaps).toEqual([]);
    expect(renderMarkdown(analysis)).not.toMatch(/≥/);
  }, 120_000);
});
