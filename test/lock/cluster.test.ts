import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listLocks, RedisLock, withLock } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';
import { CLIENT_KINDS, connectCluster } from '../helpers/clients.js';
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
  it.each(CLIENT_KINDS)('locks, fences and records through a %s cluster client', async (kind) => {
    const { client, close } = await connectCluster(kind, cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
    const recorder = new MemoryRecorder();
    const tokens: number[] = [];
    // Keys in many slots; one with a hash tag of its own.
    const keys = [...Array.from({ length: 20 }, (_, i) => `order:lock:product:${i}`), 'cart:{user7}:lock'];
    for (const key of keys) {
      await withLock(client, key, (lock) => void tokens.push(lock.fencingToken!), { ttlMs: 5000, fencing: true, recorder });
    }
    // Each kind of client draws the next token from the same counters.
    expect(new Set(tokens).size).toBe(1);
    expect(recorder.samples.map((s) => s.outcome)).toEqual(keys.map(() => 'released'));
    await close();
  });

  it.each(CLIENT_KINDS)('finds the live locks on every master, through %s', async (kind) => {
    const connection = await connectCluster(kind, cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
    const held = await Promise.all(Array.from({ length: 30 }, (_, i) => RedisLock.acquire(client, `mail:lock:${kind.replace(/\W/g, '')}:user:${i}`, { ttlMs: 60_000 })));
    const masters = client.nodes('master');
    const perMaster = await Promise.all(masters.map(async (node) => (await node.scan('0', 'MATCH', `mail:lock:${kind.replace(/\W/g, '')}:*`, 'COUNT', 1000))[1].length));
    expect(perMaster.filter((n) => n > 0).length).toBeGreaterThan(1); // the locks really are spread out

    const result = await listLocks(connection.client as never, { match: `mail:lock:${kind.replace(/\W/g, '')}:*` });
    expect(result.locks.map((l) => l.key).sort()).toEqual(held.map((l) => l.key).sort());

    const cli = await runCli(['locks', '--redis', `redis://127.0.0.1:${cluster.ports[0]}`, '--match', `mail:lock:${kind.replace(/\W/g, '')}:*`, '--format', 'json']);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout).locks).toHaveLength(30);
    await Promise.all(held.map((l) => l.release()));
    await connection.close();
  });
});
