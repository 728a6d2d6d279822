import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockRedisError, SqliteRecorder, withLock } from '../../src/index.js';
import { CLIENT_KINDS, connectClient } from '../helpers/clients.js';
import { rollupTotal } from '../helpers/db.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';

// These tests kill Redis, so they always run against a redis-server of their own.
let server: RedisServer;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
const dir = tempDir();

beforeAll(async () => {
  server = await startRedisServer();
  process.on('unhandledRejection', onUnhandled);
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await server.stop();
});

describe.each(CLIENT_KINDS)('when Redis dies, through %s', (kind) => {
  it('fails clearly within the timeouts, keeps the recorder working, and recovers after a restart', async () => {
    // Connection errors while the server is down are expected; the helper's clients swallow them.
    const { client: redis, close } = await connectClient(kind, server.url);
    const path = join(dir, `failures-${kind.replace(/\W/g, '')}.db`);
    const recorder = new SqliteRecorder({ path });
    const options = { ttlMs: 5000, recorder, commandTimeoutMs: 300, acquireTimeoutMs: 1000 };

    // 1. Killed while the lock is held: the release cannot be confirmed.
    let started = performance.now();
    const whileHeld = await withLock(redis, 'order:lock:product:1', () => server.kill(), options).catch((e: unknown) => e);
    expect(whileHeld).toBeInstanceOf(LockRedisError);
    expect((whileHeld as LockRedisError).operation).toBe('release');
    expect((whileHeld as LockRedisError).cause).toBeInstanceOf(Error);
    expect(performance.now() - started).toBeLessThan(1500);

    // 2. Acquiring while Redis is down.
    started = performance.now();
    const whileAcquiring = await withLock(redis, 'order:lock:product:2', () => 'never', options).catch((e: unknown) => e);
    expect(whileAcquiring).toBeInstanceOf(LockRedisError);
    expect((whileAcquiring as LockRedisError).operation).toBe('acquire');
    expect((whileAcquiring as LockRedisError).message).toMatch(/order:lock:product:2/);
    expect(performance.now() - started).toBeLessThan(1500);

    // 3. The recorder was not disturbed: both failures are samples with outcome `error`.
    const afterFailure = await recorder.flush();
    expect(afterFailure).toMatchObject({ recorded: 2, written: 2, dropped: 0 });

    // 4. Redis comes back: locks work again with the same client.
    await server.start();
    const result = await withLock(redis, 'order:lock:product:3', () => 'ordered', { ...options, acquireTimeoutMs: 10_000, commandTimeoutMs: 5000 });
    expect(result).toBe('ordered');

    const stats = await recorder.close();
    expect(stats).toMatchObject({ recorded: 3, written: 3, dropped: 0 });
    expect(rollupTotal(path)).toBe(3);
    // Give stray replies (the queued orphan release, reconnect errors) a moment to surface.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(unhandled).toEqual([]);
    await close();
  });
});
