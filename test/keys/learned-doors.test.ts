import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisStreamSink, SqliteRecorder, StreamCollector, analyze, instrument, withLock, type LockSample } from '../../src/index.js';
import { KEY_KINDS, corpus, seeded } from '../helpers/key-corpus.js';
import { useOwnRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';
import { startWatch } from '../helpers/watch-cli.js';

/**
 * Patterns learned through each door, against a real redis-server: the same keys (every kind of the
 * corpus, enough distinct ids that each id position is learned) taken by our `withLock`, by a
 * hand-written lock through `instrument`, and seen by `watch` from another process; and samples of
 * two services that learned in different orders, through Redis streams and `collect`.
 */

const dir = tempDir();
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;
const running: ChildProcess[] = [];
let server: RedisServer;
let redis: Redis;

useOwnRedisServer((s, client) => void ([server, redis] = [s, client]));
afterEach(() => {
  for (const p of running.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

/** Keys of every kind: 40 distinct ids per kind of id (a position is learned past 32), each job 3 times. */
function keysOfEveryKind(seed: number): { kind: number; key: string }[] {
  const r = seeded(seed);
  const keys: { kind: number; key: string }[] = [];
  KEY_KINDS.forEach((kind, k) => {
    const job = kind.name.startsWith('job');
    for (let i = 0; i < (job ? 3 : 40); i++) keys.push({ kind: k, key: kind.key(r) });
  });
  // Interleaved, as a service's traffic comes.
  return keys.sort(() => r() - 0.5);
}

/** Every kind's pattern holds exactly the locks taken on its keys; nothing under {other}. */
function expectEveryKindApart(db: string, keys: readonly { kind: number }[]): void {
  const analysis = analyze([db]);
  const counts = new Map(analysis.patterns.map((p) => [p.pattern, p.count]));
  const expected = new Map<string, number>();
  for (const { kind } of keys) expected.set(KEY_KINDS[kind]!.pattern, (expected.get(KEY_KINDS[kind]!.pattern) ?? 0) + 1);
  expect(Object.fromEntries(counts)).toEqual(Object.fromEntries(expected));
  expect(analysis.unattributed).toBeUndefined();
}

describe('patterns learned through every door', () => {
  it('withLock: our own lock, each kind of key under its pattern', async () => {
    const keys = keysOfEveryKind(1);
    const path = join(dir, 'with-lock.db');
    const recorder = new SqliteRecorder({ path, instance: 'with-lock' });
    for (const { key } of keys) await withLock(redis, key, () => undefined, { ttlMs: 5000, recorder });
    await recorder.close();
    expectEveryKindApart(path, keys);
  });

  it('instrument: a hand-written SET NX PX and compare-and-delete, seen through the client', async () => {
    const keys = keysOfEveryKind(2);
    const path = join(dir, 'instrument.db');
    const recorder = new SqliteRecorder({ path, instance: 'instrument' });
    const client = instrument(new Redis(server.url), { recorder });
    for (const { key } of keys) {
      const token = randomBytes(16).toString('hex');
      expect(await client.set(key, token, 'PX', 5000, 'NX')).toBe('OK');
      expect(await client.eval(RELEASE, 1, key, token)).toBe(1);
    }
    client.disconnect();
    await recorder.close();
    expectEveryKindApart(path, keys);
  });

  it('watch: locks of another process, seen through keyspace notifications', async () => {
    const keys = keysOfEveryKind(3);
    const path = join(dir, 'watch.db');
    const w = startWatch(server.url, path, running, '--configure', '--progress-ms', '500');
    await w.said('subscribed on 1 node');
    for (const { key } of keys) {
      const token = randomBytes(16).toString('hex');
      await redis.set(key, token, 'PX', 5000, 'NX');
      // Held a little, as a critical section is: the watcher reads its TTL meanwhile.
      await new Promise((r) => setTimeout(r, 2));
      await redis.eval(RELEASE, 1, key, token);
    }
    await new Promise((r) => setTimeout(r, 500));
    w.proc.kill('SIGTERM');
    expect((await w.exited).code, w.output()).toBe(0);
    expectEveryKindApart(path, keys);
  });

  it('collect: two services that learned in different orders, through Redis streams, into one file', async () => {
    const locks = corpus(6000, 5);
    const stream = `learned-${Date.now()}`;
    const at = Date.UTC(2026, 10, 1);
    const sample = (i: number): LockSample => ({ key: locks[i]!.key, at: at + i * 1000, holdMs: locks[i]!.holdMs, waitMs: 0, attempts: 1, ttlMs: 30_000, outcome: 'released' });
    const a = new RedisStreamSink(redis, { stream, instance: 'api-1', flushIntervalMs: 60_000 });
    const b = new RedisStreamSink(redis, { stream, instance: 'api-2', flushIntervalMs: 60_000 });
    for (let i = 0; i < 3000; i++) a.record(sample(i));
    for (let i = locks.length - 1; i >= 3000; i--) b.record(sample(i));
    await a.close();
    await b.close();
    const db = join(dir, 'collected.db');
    const stop = new AbortController();
    const collector = new StreamCollector(redis as never, { stream, db, blockMs: 100, progressIntervalMs: 60_000 });
    const done = collector.run(stop.signal);
    const deadline = Date.now() + 30_000;
    const total = () => {
      try {
        return analyze([db]).patterns.reduce((n, p) => n + p.count, 0);
      } catch {
        return 0;
      }
    };
    while (total() < locks.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    stop.abort();
    await done;
    expectEveryKindApart(db, locks);
  });
});
