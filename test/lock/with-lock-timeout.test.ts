import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockRedisError, withLock } from '../../src/index.js';
import { CommandTimeoutError } from '../../src/deadline.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

// withLock times its commands out itself (not through PendingCommand): a stalled Redis must still fail
// the step the command was sent for, once, with its sample, and the late reply must change nothing.
// A paused Redis stalls every client, so these run against one of their own.
let server: RedisServer;
let client: Redis;
let admin: Redis;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  server = await startRedisServer();
  client = new Redis(server.url);
  admin = new Redis(server.url);
  process.on('unhandledRejection', onUnhandled);
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  client.disconnect();
  admin.disconnect();
  await server.stop();
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Redis answers no client for 600 ms from the moment this resolves (CLIENT PAUSE replies once in force).
const stall = () => admin.call('CLIENT', 'PAUSE', '600');

describe('withLock under a command timeout', () => {
  it('an acquire with no reply in time fails as a Redis error, with one sample, and its late reply is released', async () => {
    const recorder = new MemoryRecorder();
    await stall();
    const started = performance.now();
    let ran = false;
    const error = await withLock(client, 'stall:lock:1', () => (ran = true), { ttlMs: 5000, commandTimeoutMs: 150, recorder }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(550);
    expect(error).toBeInstanceOf(LockRedisError);
    expect((error as LockRedisError).operation).toBe('acquire');
    expect((error as LockRedisError).cause).toBeInstanceOf(CommandTimeoutError);
    expect(ran).toBe(false);
    await sleep(650);
    // The SET reached Redis after the timeout: the release queued for that case deleted it.
    expect(await admin.exists('stall:lock:1')).toBe(0);
    expect(recorder.samples.map((s) => s.outcome)).toEqual(['error']);
    expect(unhandled).toEqual([]);
  });

  it('a release with no reply in time (TTL still running) fails as a Redis error, after the section ran, with one sample', async () => {
    const recorder = new MemoryRecorder();
    const started = performance.now();
    const error = await withLock(client, 'stall:lock:2', async () => {
      await stall();
      return 'done';
    }, { ttlMs: 5000, commandTimeoutMs: 150, recorder }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(550);
    expect(error).toBeInstanceOf(LockRedisError);
    expect((error as LockRedisError).operation).toBe('release');
    expect((error as LockRedisError).cause).toBeInstanceOf(CommandTimeoutError);
    await sleep(650);
    expect(recorder.samples.map((s) => [s.outcome, s.threw])).toEqual([['error', false]]);
    expect(unhandled).toEqual([]);
  });

  it('a section that throws, then a release with no reply in time: the section error, and the sample says it threw', async () => {
    const recorder = new MemoryRecorder();
    const thrown = new Error('out of stock');
    const error = await withLock(client, 'stall:lock:3', async () => {
      await stall();
      throw thrown;
    }, { ttlMs: 5000, commandTimeoutMs: 150, recorder }).catch((e: unknown) => e);
    expect(error).toBe(thrown);
    await sleep(650);
    expect(recorder.samples.map((s) => [s.outcome, s.threw])).toEqual([['error', true]]);
  });

  it('sync and promise-returning sections both give their result, with the lock released', async () => {
    const recorder = new MemoryRecorder();
    expect(await withLock(client, 'stall:lock:4', () => 7, { ttlMs: 5000, recorder })).toBe(7);
    expect(await withLock(client, 'stall:lock:4', async () => 8, { ttlMs: 5000, recorder })).toBe(8);
    const thenable = { then: (resolve: (v: number) => void) => resolve(9) };
    expect(await withLock(client, 'stall:lock:4', () => thenable as unknown as Promise<number>, { ttlMs: 5000, recorder })).toBe(9);
    expect(await withLock(client, 'stall:lock:4', () => null, { ttlMs: 5000, recorder })).toBe(null);
    expect(recorder.samples.map((s) => s.outcome)).toEqual(['released', 'released', 'released', 'released']);
    expect(await admin.exists('stall:lock:4')).toBe(0);
  });
  it('a client that throws or returns no promise makes withLock reject, never throw, hang or leave an unhandled rejection', async () => {
    const answers = { set: () => Promise.resolve('OK'), evalsha: () => Promise.resolve(1), eval: () => Promise.resolve(1) };
    const broken = [
      { ...answers, set: () => { throw new Error('client broke'); } },
      { ...answers, set: () => undefined },
      { ...answers, evalsha: () => undefined },
    ];
    for (const client of broken) {
      let call: Promise<unknown> | undefined;
      expect(() => (call = withLock(client as never, 'broken:lock:1', () => 1, { ttlMs: 1000 }))).not.toThrow();
      const outcome = await Promise.race([call!.then(() => 'resolved', (e: unknown) => e), sleep(500).then(() => 'hung')]);
      expect(outcome).toBeInstanceOf(Error);
    }
    await sleep(20);
    expect(unhandled).toEqual([]);
  });
});
