import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listLocks, RedisLock, withLock } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js';

let cluster: RedisCluster;
let client: Cluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
  client = new Cluster(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
});
afterAll(async () => {
  client?.disconnect();
  await cluster?.stop();
});

describe('on a Redis Cluster', () => {
  it('locks, fences and records through an ioredis Cluster client', async () => {
    const recorder = new MemoryRecorder();
    const tokens: number[] = [];
    // Keys in many slots; one with a hash tag of its own.
    const keys = [...Array.from({ length: 20 }, (_, i) => `order:lock:product:${i}`), 'cart:{user7}:lock'];
    for (const key of keys) {
      await withLock(client, key, (lock) => void tokens.push(lock.fencingToken!), { ttlMs: 5000, fencing: true, recorder });
    }
    expect(tokens.every((t) => t === 1)).toBe(true);
    expect(recorder.samples.map((s) => s.outcome)).toEqual(keys.map(() => 'released'));
  });

  it('finds the live locks on every master', async () => {
    const held = await Promise.all(Array.from({ length: 30 }, (_, i) => RedisLock.acquire(client, `mail:lock:user:${i}`, { ttlMs: 60_000 })));
    const masters = client.nodes('master');
    const perMaster = await Promise.all(masters.map(async (node) => (await node.scan('0', 'MATCH', 'mail:lock:*', 'COUNT', 1000))[1].length));
    expect(perMaster.filter((n) => n > 0).length).toBeGreaterThan(1); // the locks really are spread out

    const result = await listLocks(client, { match: 'mail:lock:*' });
    expect(result.locks.map((l) => l.key).sort()).toEqual(held.map((l) => l.key).sort());

    const cli = await runCli(['locks', '--redis', `redis://127.0.0.1:${cluster.ports[0]}`, '--match', 'mail:lock:*', '--format', 'json']);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout).locks).toHaveLength(30);
    await Promise.all(held.map((l) => l.release()));
  });
});
