import { randomUUID } from 'node:crypto';
import { Redis, type Cluster } from 'ioredis';
import type { RedisClusterType } from 'redis';
import Redlock from 'redlock';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { instrument, instrumentationOf } from '../../src/index.js';
import { CLIENT_KINDS, connectClient, connectCluster } from '../helpers/clients.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const COMPARE_AND_DELETE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`;
const KEYS = [...Array.from({ length: 20 }, (_, i) => `ship:lock:parcel:${i}`), 'cart:{user7}:lock'];

let cluster: RedisCluster;
let server: RedisServer;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(async () => {
  [cluster, server] = await Promise.all([startRedisCluster(), startRedisServer()]);
  process.on('unhandledRejection', onUnhandled);
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await Promise.all([cluster?.stop(), server?.stop()]);
});

describe('instrument() on a Redis Cluster', () => {
  it.each(CLIENT_KINDS)('records the locks taken on every master through a %s cluster client', async (kind) => {
    const { client, close } = await connectCluster(kind, cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
    const recorder = new MemoryRecorder();
    instrument(client, { recorder });
    const prefix = kind.replace(/\W/g, '');
    if (kind === 'node-redis 5') {
      const c = client as unknown as RedisClusterType;
      for (const key of KEYS) {
        const token = randomUUID();
        expect(await c.set(`${prefix}:${key}`, token, { NX: true, PX: 5000 })).toBe('OK');
        expect(await c.eval(COMPARE_AND_DELETE, { keys: [`${prefix}:${key}`], arguments: [token] })).toBe(1);
      }
    } else {
      const redlock = new Redlock([client as unknown as Cluster]);
      for (const key of KEYS) await redlock.using([`${prefix}:${key}`], 5000, async () => undefined);
    }
    expect(recorder.samples.map((s) => [s.key, s.outcome])).toEqual(KEYS.map((k) => [`${prefix}:${k}`, 'released']));
    instrumentationOf(client)!.close();
    await close();
  });
});

describe('node-redlock over several Redis servers', () => {
  it('clients instrumented with one recorder record each quorum lock once, and a server that lost the vote is no attempt', async () => {
    const other = await startRedisServer();
    const recorder = new MemoryRecorder();
    const a = instrument(new Redis(server.url), { recorder });
    const b = instrument(new Redis(other.url), { recorder });
    const c = instrument(new Redis(inject('redisUrl')), { recorder });
    try {
      const redlock = new Redlock([a, b, c], { retryCount: 0 });
      // One server already has the key: the lock wins on two of three (a quorum) and loses on one.
      await c.set('quorum:lock:0', 'someone-else', 'PX', 60_000);
      for (let i = 0; i < 10; i++) await redlock.using([`quorum:lock:${i}`], 5000, async () => sleep(2));
      await sleep(50);
      expect(recorder.samples.map((s) => [s.key, s.outcome, s.attempts])).toEqual(Array.from({ length: 10 }, (_, i) => [`quorum:lock:${i}`, 'released', 1]));
      expect(instrumentationOf(a)).toBe(instrumentationOf(c));
      instrumentationOf(a)!.close();
      expect(instrumentationOf(b)).toBeUndefined();
    } finally {
      await c.del('quorum:lock:0');
      for (const client of [a, b, c]) client.disconnect();
      await other.stop();
    }
  });
});

describe.each(CLIENT_KINDS)('instrument() when Redis dies, through %s', (kind) => {
  it('a release that fails is an error sample; nothing reaches the process; it records again after a restart', async () => {
    const { client, close } = await connectClient(kind, server.url);
    const recorder = new MemoryRecorder();
    instrument(client, { recorder });
    const redis = client as unknown as { sendCommand?: unknown; call?: unknown };
    const send = (...args: string[]) =>
      typeof redis.call === 'function'
        ? (redis.call as (...a: string[]) => Promise<unknown>)(...args)
        : // node-redis queues commands while disconnected: a command timeout stands in for ioredis's maxRetriesPerRequest
          (redis.sendCommand as (a: string[], o: { timeout: number }) => Promise<unknown>)(args, { timeout: 1000 });
    expect(await send('SET', 'dying:lock:1', 'me', 'NX', 'PX', '5000')).toBe('OK');
    await server.kill();
    await expect(send('EVAL', COMPARE_AND_DELETE, '1', 'dying:lock:1', 'me')).rejects.toThrow();
    expect(recorder.samples.map((s) => s.outcome)).toEqual(['error']);
    await server.start();
    await expect.poll(() => send('PING').catch(() => 'down'), { timeout: 10_000 }).toBe('PONG');
    expect(await send('SET', 'dying:lock:2', 'me', 'NX', 'PX', '5000')).toBe('OK');
    expect(await send('EVAL', COMPARE_AND_DELETE, '1', 'dying:lock:2', 'me')).toBe(1);
    expect(recorder.samples.map((s) => s.outcome)).toEqual(['error', 'released']);
    expect(unhandled).toEqual([]);
    instrumentationOf(client)!.close();
    await close();
  }, 30_000);
});
