import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLock, listLocks } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';
import { CLIENT_KINDS, connectClient } from '../helpers/clients.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

// Its own server: the test counts every key and reads the server's command statistics.
let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url);
  const pipeline = redis.pipeline();
  for (let i = 0; i < 10_000; i++) pipeline.set(`user:profile:${i}`, 'x', 'PX', 600_000);
  // Look like locks by name, but are not: no expiry, or not a string.
  pipeline.set('docs:lock:readme', 'no ttl');
  pipeline.hset('config:lock:settings', 'a', '1');
  pipeline.pexpire('config:lock:settings', 600_000);
  pipeline.set('order:lock:product:1', 'token-a', 'PX', 30_000);
  pipeline.set('order:lock:product:2', 'token-b', 'PX', 5_000);
  pipeline.set('order:lock:product:3', 'token-c', 'PX', 60_000);
  pipeline.set('mail:lock:user:alice', 'token-d', 'PX', 10_000);
  await pipeline.exec();
  await redis.config('RESETSTAT');
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

describe('ttl-advisor locks', () => {
  it.each(CLIENT_KINDS)('finds exactly the live locks, soonest to expire first, with SCAN and never KEYS, through %s', async (kind) => {
    await redis.config('RESETSTAT');
    const connection = await connectClient(kind, server.url);
    const client = connection.client as never;
    const result = await listLocks(client);
    expect(result.locks.map((l) => [l.key, l.token])).toEqual([
      ['order:lock:product:2', 'token-b'],
      ['mail:lock:user:alice', 'token-d'],
      ['order:lock:product:1', 'token-a'],
      ['order:lock:product:3', 'token-c'],
    ]);
    expect(result.locks[0]).toMatchObject({ pattern: 'order:lock:product:{id}' });
    expect(result.locks[0]!.remainingMs).toBeGreaterThan(3000);
    expect(result.locks[0]!.remainingMs).toBeLessThanOrEqual(5000);

    const narrowed = await listLocks(client, { match: 'order:lock:*' });
    expect(narrowed.locks).toHaveLength(3);

    const stats = await redis.info('commandstats');
    expect(stats).toMatch(/cmdstat_scan:calls=\d+/);
    expect(stats).not.toMatch(/cmdstat_keys:/);
    await connection.close();
  });

  it('the CLI takes the URL from --redis or REDIS_URL and never prints a password', async () => {
    const { code, stdout } = await runCli(['locks', '--redis', server.url, '--match', 'order:lock:*']);
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(/^key\s+pattern\s+holder\s+held for\s+expires in$/);
    // A lock not taken by ttl-advisor: its token, and no holder or age to tell.
    expect(stdout).toMatch(/order:lock:product:2\s+order:lock:product:\{id\}\s+token token-b\s+\?\s+[\d.]+ s/);
    expect(stdout).toMatch(/3 live lock\(s\)/);

    const json = await runCli(['locks', '--redis', server.url, '--format', 'json', '--watch', '--iterations', '2', '--interval', '10']);
    const reports = json.stdout.trim().split(/\n(?=\{)/).map((t) => JSON.parse(t));
    expect(reports).toHaveLength(2);
    expect(reports[0].locks).toHaveLength(4);

    const failed = await runCli(['locks', '--redis', 'redis://ops:hunter2@127.0.0.1:1']);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/Cannot connect to Redis at redis:\/\/ops:\*\*\*@127\.0\.0\.1:1/);
    expect(failed.stderr).not.toMatch(/hunter2/);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('who holds a lock', () => {
  it.each(CLIENT_KINDS)('our lock names its holder and its age in the token; `locks` shows them, through %s', async (kind) => {
    const connection = await connectClient(kind, server.url);
    const key = `order:lock:product:held-${kind.replace(/\W/g, '')}`;
    const lock = await RedisLock.acquire(connection.client as never, key, { ttlMs: 30_000, holder: 'checkout-7f9c:4242' });
    try {
      await sleep(300);
      const result = await listLocks(connection.client as never, { match: key });
      expect(result.locks).toHaveLength(1);
      const [live] = result.locks;
      expect(live).toMatchObject({ key, holder: 'checkout-7f9c:4242', token: lock.token });
      expect(Date.now() - live!.acquiredAtMs!).toBeGreaterThanOrEqual(299);
      expect(lock.token).toMatch(/^tta1\.[A-Za-z0-9_-]+\.[0-9a-z]+\.[A-Za-z0-9_-]{22}$/);

      const { code, stdout } = await runCli(['locks', '--redis', server.url, '--match', key]);
      expect(code).toBe(0);
      expect(stdout).toMatch(new RegExp(`${key}\\s+\\S+\\s+checkout-7f9c:4242\\s+[\\d.]+ ms\\s+[\\d.]+ s`));
    } finally {
      await lock.release();
      await connection.close();
    }
  });

  it('tokens stay unique and unguessable, and the default holder is host:pid', async () => {
    const lock = await RedisLock.acquire(redis as never, 'order:lock:product:default-holder', { ttlMs: 10_000 });
    const other = await RedisLock.acquire(redis as never, 'order:lock:product:default-holder-2', { ttlMs: 10_000 });
    try {
      expect(lock.token).not.toBe(other.token);
      const result = await listLocks(redis as never, { match: 'order:lock:product:default-holder' });
      expect(result.locks[0]!.holder).toBe(`${hostname()}:${process.pid}`);
    } finally {
      await lock.release();
      await other.release();
    }
  });
});

describe('keys that are not valid UTF-8', () => {
  it.each(CLIENT_KINDS)('are found, shown with their odd bytes escaped, and given as base64, through %s', async (kind) => {
    const key = Buffer.concat([Buffer.from('binary:lock:'), Buffer.from([0xff, 0xfe]), Buffer.from(':7')]);
    await redis.set(key, 'token-bin', 'PX', 30_000);
    const connection = await connectClient(kind, server.url);
    try {
      const result = await listLocks(connection.client as never, { match: 'binary:lock:*' });
      expect(result.locks).toHaveLength(1);
      expect(result.locks[0]).toMatchObject({ key: 'binary:lock:\\xff\\xfe:7', token: 'token-bin', keyBase64: key.toString('base64') });
    } finally {
      await connection.close();
      await redis.del(key);
    }
  });
});
