import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockRedisError, RedisLock, withLock } from '../../src/index.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

// Clients that are not ioredis or node-redis (wrappers, caches, test doubles) may answer with a thenable that
// calls back inside `then()`, or with nothing at all. withLock watches each command's deadline itself: such a
// client must neither freeze the watchdog, nor record a sample twice, nor end the lock while the section runs.
let server: RedisServer;
let real: Redis;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  server = await startRedisServer();
  real = new Redis(server.url);
  process.on('unhandledRejection', onUnhandled);
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  real.disconnect();
  await server.stop();
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A thenable already settled: it calls back inside `then()`, as no native promise does. */
const answered = (value: unknown) => ({ then: (resolve: (v: unknown) => void) => void resolve(value) });
const refused = (error: Error) => ({ then: (_: unknown, reject: (e: unknown) => void) => void reject(error) });
/** The real client's SET and scripts, with `set` or `evalsha` replaced. */
function clientWith(overrides: { set?: (...args: unknown[]) => unknown; evalsha?: (...args: unknown[]) => unknown }) {
  return {
    set: (...args: unknown[]) => (real.set as (...a: unknown[]) => unknown)(...args),
    evalsha: (...args: unknown[]) => (real.evalsha as (...a: unknown[]) => unknown)(...args),
    eval: (...args: unknown[]) => (real.eval as (...a: unknown[]) => unknown)(...args),
    ...overrides,
  } as unknown as Redis;
}
/** Resolves on the event loop's next turns: a watchdog stuck in its list would never let them come. */
const loopAlive = async () => {
  for (let i = 0; i < 3; i++) await sleep(30);
  return true;
};

describe('withLock with clients that answer inside then()', () => {
  it('SET answered inside then(), a sync section, a real release: released once, and the event loop keeps turning', async () => {
    const recorder = new MemoryRecorder();
    const client = clientWith({ set: (...args: unknown[]) => (void (real.set as (...a: unknown[]) => unknown)(...args), answered('OK')) });
    // The release goes to the real Redis: a timeout no loaded host reaches (100 ms did, at load 13).
    await expect(withLock(client, 'thenable:lock:1', () => 'done', { ttlMs: 5000, commandTimeoutMs: 2000, recorder })).resolves.toBe('done');
    await expect(loopAlive()).resolves.toBe(true);
    expect(recorder.samples.map((s) => s.outcome)).toEqual(['released']);
  });

  it('SET refused inside then(): one error sample, even after the command timeout has passed', async () => {
    const recorder = new MemoryRecorder();
    const client = clientWith({ set: () => refused(new Error('READONLY You cannot write against a read only replica.')) });
    const error = await withLock(client, 'thenable:lock:2', () => 'ran', { ttlMs: 5000, commandTimeoutMs: 100, recorder }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockRedisError);
    await sleep(300);
    expect(recorder.samples.map((s) => s.outcome)).toEqual(['error']);
  });

  it('SET answered inside then() and a section longer than the command timeout: the section is not timed out', async () => {
    const recorder = new MemoryRecorder();
    const client = clientWith({ set: (...args: unknown[]) => (void (real.set as (...a: unknown[]) => unknown)(...args), answered('OK')) });
    let finished = false;
    const section = async () => {
      await sleep(1200);
      finished = true;
      return 'section done';
    };
    await expect(withLock(client, 'thenable:lock:3', section, { ttlMs: 5000, commandTimeoutMs: 1000, recorder })).resolves.toBe('section done');
    expect(finished).toBe(true);
    expect(recorder.samples.map((s) => [s.outcome, s.threw])).toEqual([['released', false]]);
    expect(unhandled).toEqual([]);
  });
});

describe('a release the client answers with no promise', () => {
  for (const commandTimeoutMs of [150, 0]) {
    it(`fails as a Redis error with its sample, never a silent false (commandTimeoutMs ${commandTimeoutMs})`, async () => {
      const client = clientWith({ evalsha: () => undefined });
      const recorder = new MemoryRecorder();
      const lock = await RedisLock.acquire(client, `noreply:lock:${commandTimeoutMs}`, { ttlMs: 5000, commandTimeoutMs, recorder });
      await expect(lock.release()).rejects.toBeInstanceOf(LockRedisError);
      const inSection = new MemoryRecorder();
      const failing = () => {
        throw new Error('boom');
      };
      await expect(withLock(client, `noreply:lock:w${commandTimeoutMs}`, failing, { ttlMs: 5000, commandTimeoutMs, recorder: inSection })).rejects.toThrow('boom');
      expect([...recorder.samples, ...inSection.samples].map((s) => s.outcome)).toEqual(['error', 'error']);
    });
  }
});
