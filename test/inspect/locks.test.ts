import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listLocks } from '../../src/index.js';
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
    expect(stdout.split('\n')[0]).toMatch(/^key\s+pattern\s+holder token\s+expires in$/);
    expect(stdout).toMatch(/order:lock:product:2\s+order:lock:product:\{id\}\s+token-b\s+[\d.]+ s/);
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
