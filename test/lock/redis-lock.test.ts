import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ConfigError,
  LockLostError,
  LockNotAcquiredError,
  LockRedisError,
  RedisLock,
  withLock,
  type LockClient,
  type LockLostEvent,
  type LockOptions,
  type LockSample,
} from '../../src/index.js';
import { fenceKeyOf } from '../../src/lock/client.js';
import { CLIENT_KINDS, connectClient, type ClientKind, type TestClient } from '../helpers/clients.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';

// The lock under test talks through each client users bring; `other` (ioredis) looks at Redis directly.
const other = new Redis(inject('redisUrl'));
afterAll(() => other.disconnect());
const newKey = () => `test:lock:${randomUUID()}`;

/** A client of `kind` for the enclosing describe block, handed to `use` once connected. */
function connectedFor(kind: ClientKind, use: (client: LockClient) => void): void {
  let connection: TestClient | undefined;
  beforeAll(async () => {
    connection = await connectClient(kind, inject('redisUrl'));
    use(connection.client);
  });
  afterAll(() => connection?.close());
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(CLIENT_KINDS)('through %s', (kind) => {
  let redis!: LockClient;
  connectedFor(kind, (client) => (redis = client));

  describe('RedisLock', () => {
    it('takes the lock with a random token and a TTL, and releases only its own token', async () => {
      const key = newKey();
      const lock = await RedisLock.acquire(redis, key, { ttlMs: 5000 });
      const token = lock.token!;
      // tta1.<holder>.<acquire start, base 36>.<128 random bits, base64url>: see src/token.ts
      expect(token).toMatch(/^tta1\.[A-Za-z0-9_-]+\.[0-9a-z]+\.[A-Za-z0-9_-]{22}$/);
      expect(await other.get(key)).toBe(token);
      const pttl = await other.pttl(key);
      expect(pttl).toBeGreaterThan(4000);
      expect(pttl).toBeLessThanOrEqual(5000);
      expect(await lock.release()).toBe(true);
      expect(await other.exists(key)).toBe(0);

      const again = await RedisLock.acquire(redis, key, { ttlMs: 5000 });
      expect(again.token).not.toBe(token);
      await again.release();
    });

    it('fails with LockNotAcquiredError carrying key, attempts and waited time', async () => {
      const key = newKey();
      const holder = await RedisLock.acquire(redis, key, { ttlMs: 5000 });
      const recorder = new MemoryRecorder();
      const error = await RedisLock.acquire(redis, key, { ttlMs: 5000, retry: { count: 3, delayMs: 20, jitterMs: 0 }, recorder }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LockNotAcquiredError);
      const e = error as LockNotAcquiredError;
      expect(e.name).toBe('LockNotAcquiredError');
      expect(e.key).toBe(key);
      expect(e.attempts).toBe(4);
      expect(e.waitedMs).toBeGreaterThanOrEqual(55);
      expect(recorder.samples).toHaveLength(1);
      expect(recorder.samples[0]).toMatchObject({ key, outcome: 'not_acquired', attempts: 4, holdMs: undefined });
      expect(recorder.samples[0]!.waitMs).toBeGreaterThanOrEqual(55);
      await holder.release();
    });

    it('stops retrying at acquireTimeoutMs', async () => {
      const key = newKey();
      const holder = await RedisLock.acquire(redis, key, { ttlMs: 5000 });
      const started = performance.now();
      const error = await RedisLock.acquire(redis, key, {
        ttlMs: 5000,
        retry: { count: 1000, delayMs: 30, jitterMs: 0 },
        acquireTimeoutMs: 200,
      }).catch((e: unknown) => e);
      const elapsed = performance.now() - started;
      expect(error).toBeInstanceOf(LockNotAcquiredError);
      expect(elapsed).toBeGreaterThanOrEqual(190);
      expect(elapsed).toBeLessThan(1500);
      expect((error as LockNotAcquiredError).attempts).toBeLessThan(12);
      await holder.release();
    });

    it('waits for a holder to release, and does not count the wait as hold time', async () => {
      const key = newKey();
      const recorder = new MemoryRecorder();
      const holder = await RedisLock.acquire(redis, key, { ttlMs: 5000 });
      setTimeout(() => void holder.release(), 150);
      await withLock(redis, key, () => sleep(50), { ttlMs: 5000, recorder, retry: { count: 100, delayMs: 10, jitterMs: 5 } });
      const [s] = recorder.samples;
      expect(s).toMatchObject({ outcome: 'released', threw: false });
      expect(s!.waitMs).toBeGreaterThanOrEqual(130);
      expect(s!.attempts).toBeGreaterThan(1);
      expect(s!.holdMs).toBeGreaterThanOrEqual(49);
      // Had the wait been counted, hold would be at least wait + 50 ms.
      expect(s!.holdMs).toBeLessThan(s!.waitMs! + 40);
    });

    it('extends its TTL only while it holds the lock', async () => {
      const key = newKey();
      const lock = await RedisLock.acquire(redis, key, { ttlMs: 1000 });
      expect(await lock.extend(30_000)).toBe(true);
      expect(await other.pttl(key)).toBeGreaterThan(20_000);
      expect(lock.remainingMs).toBeGreaterThan(20_000);
      await other.set(key, 'someone-else');
      expect(await lock.extend(30_000)).toBe(false);
      expect(lock.signal.aborted).toBe(true);
      expect(await lock.release()).toBe(false);
      expect(await other.get(key)).toBe('someone-else');
      await other.del(key);
    });

    it('draws increasing fencing tokens atomically with the lock', async () => {
      const key = newKey();
      const tokens: number[] = [];
      for (let i = 0; i < 3; i++) {
        await withLock(redis, key, (lock) => void tokens.push(lock.fencingToken!), { ttlMs: 1000, fencing: true });
      }
      expect(tokens[1]! - tokens[0]!).toBe(1);
      expect(tokens[2]! - tokens[1]!).toBe(1);
      expect(Number(await other.get(fenceKeyOf(key)))).toBe(tokens[2]);
      // A plain lock draws none.
      await withLock(redis, key, (lock) => expect(lock.fencingToken).toBeUndefined(), { ttlMs: 1000 });
    });

    it('keeps the fence counter in the lock key’s hash slot', () => {
      expect(fenceKeyOf('order:lock:1')).toBe('{order:lock:1}:fence');
      expect(fenceKeyOf('lock:{user1}:cart')).toBe('lock:{user1}:cart:fence');
      // No tag can spell a key that contains "}" without a tag of its own: the counter then sits beside it.
      expect(fenceKeyOf('lock:{}:x')).toBe('lock:{}:x:fence');
      expect(fenceKeyOf('lock:{open')).toBe('{lock:{open}:fence');
    });

    it('reloads its Lua scripts after SCRIPT FLUSH (NOSCRIPT)', async () => {
      const key = newKey();
      const lock = await RedisLock.acquire(redis, key, { ttlMs: 5000, fencing: true });
      await other.script('FLUSH');
      expect(await lock.extend(6000)).toBe(true);
      await other.script('FLUSH');
      expect(await lock.release()).toBe(true);
      await other.script('FLUSH');
      await withLock(redis, key, () => undefined, { ttlMs: 1000, fencing: true });
      // withLock's own release path: EVALSHA answers NOSCRIPT, EVAL releases, and the sample says so.
      const samples: LockSample[] = [];
      for (const fencing of [false, true]) {
        await other.script('FLUSH');
        await withLock(redis, key, () => undefined, { ttlMs: 1000, fencing, recorder: { record: (s) => void samples.push(s) } });
        expect(await other.exists(key)).toBe(0);
      }
      expect(samples.map((s) => s.outcome)).toEqual(['released', 'released']);
    });

    it('reads an options object again when one of its fields changed since the last lock', async () => {
      const key = newKey();
      const samples: LockSample[] = [];
      const options: LockOptions = { ttlMs: 1000, retry: { count: 0, delayMs: 600, jitterMs: 0 }, recorder: { record: (s) => void samples.push(s) } };
      // Three times: the second remembers the resolved options, the third uses them.
      for (let i = 0; i < 3; i++) await withLock(redis, key, () => undefined, options);
      options.ttlMs = 2000;
      await withLock(redis, key, async () => expect(await other.pttl(key)).toBeGreaterThan(1000), options);
      options.retry!.count = 1;
      // Held by another for 250 ms: the second attempt, 600 ms after the first, wins.
      await other.set(key, 'someone else', 'PX', 250);
      await withLock(redis, key, () => undefined, options);
      expect(samples.map((s) => [s.ttlMs, s.attempts])).toEqual([[1000, 1], [1000, 1], [1000, 1], [2000, 1], [2000, 2]]);
      options.ttlMs = 0;
      await expect(withLock(redis, key, () => undefined, options)).rejects.toThrow(/ttlMs/);
    });

    it('supports await using', async () => {
      const key = newKey();
      {
        await using lock = await RedisLock.acquire(redis, key, { ttlMs: 5000 });
        expect(await other.get(key)).toBe(lock.token);
      }
      expect(await other.exists(key)).toBe(0);
    });

    it('commandTimeoutMs 0 leaves timeouts to the client and still locks and releases', async () => {
      const key = newKey();
      const recorder = new MemoryRecorder();
      await withLock(redis, key, async () => expect(await other.exists(key)).toBe(1), { ttlMs: 5000, commandTimeoutMs: 0, recorder, fencing: true });
      expect(await other.exists(key)).toBe(0);
      expect(recorder.samples[0]).toMatchObject({ outcome: 'released' });
    });

    it('validates options at the boundary', async () => {
      await expect(RedisLock.acquire(redis, newKey(), { ttlMs: 0 })).rejects.toThrow('Expected `ttlMs` to be a positive integer, got `0`');
      await expect(RedisLock.acquire(redis, newKey(), {} as never)).rejects.toBeInstanceOf(ConfigError);
      await expect(RedisLock.acquire(redis, newKey(), { ttlMs: 100, retry: { count: -1 } })).rejects.toThrow('`retry.count`');
    });
  });

  describe('withLock', () => {
    it('releases when fn throws, rethrows fn’s error, and records that it threw', async () => {
      const key = newKey();
      const recorder = new MemoryRecorder();
      const boom = new Error('payment failed');
      await expect(withLock(redis, key, () => Promise.reject(boom), { ttlMs: 5000, recorder })).rejects.toBe(boom);
      expect(await other.exists(key)).toBe(0);
      expect(recorder.samples[0]).toMatchObject({ outcome: 'released', threw: true, ttlMs: 5000 });
    });

    it('records one sample per acquisition with the explicit pattern', async () => {
      const key = newKey();
      const recorder = new MemoryRecorder();
      const result = await withLock(redis, key, () => 42, { ttlMs: 3000, recorder, pattern: 'test:lock:{uuid}' });
      expect(result).toBe(42);
      expect(recorder.samples).toHaveLength(1);
      const s = recorder.samples[0]!;
      expect(s).toMatchObject({ key, pattern: 'test:lock:{uuid}', outcome: 'released', attempts: 1, ttlMs: 3000, threw: false });
      expect(Math.abs(s.at - Date.now())).toBeLessThan(5000);
    });

    it('a recorder that throws never breaks the lock', async () => {
      const key = newKey();
      const recorder = {
        record() {
          throw new Error('disk on fire');
        },
      };
      await expect(withLock(redis, key, () => 'ok', { ttlMs: 1000, recorder })).resolves.toBe('ok');
    });

    it('overrun: the TTL runs out mid-section, a second client enters, and nothing passes silently', async () => {
      const key = newKey();
      const recorder = new MemoryRecorder();
      const lost: LockLostEvent[] = [];
      let signal: AbortSignal | undefined;
      let secondEntered = false;

      const first = withLock(
        redis,
        key,
        async (lock) => {
          signal = lock.signal;
          await sleep(500);
        },
        { ttlMs: 200, recorder, onLockLost: (event) => lost.push(event) },
      );
      await sleep(250);
      // The first holder's lock has expired: a second instance gets in while the first still works.
      const second = await RedisLock.acquire(other, key, { ttlMs: 5000, retry: { count: 0 } });
      secondEntered = true;
      expect(signal!.aborted).toBe(true);
      expect(signal!.reason).toBeInstanceOf(LockLostError);

      await first;
      // The first client's release must not delete the second client's lock.
      expect(await other.get(key)).toBe(second.token);
      expect(recorder.samples).toHaveLength(1);
      expect(recorder.samples[0]).toMatchObject({ outcome: 'expired', ttlMs: 200 });
      // Node's timers may fire a fraction of a millisecond early by the monotonic clock.
      expect(recorder.samples[0]!.holdMs).toBeGreaterThanOrEqual(499);
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatchObject({ key, ttlMs: 200 });
      expect(secondEntered).toBe(true);
      expect(await second.release()).toBe(true);
    });

    it('throwOnLockLost turns a lost lock into a LockLostError', async () => {
      const key = newKey();
      const error = await withLock(redis, key, () => sleep(150), { ttlMs: 50, throwOnLockLost: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockLostError);
      // Node's timers may fire a fraction of a millisecond early by the monotonic clock.
      expect((error as LockLostError).heldMs).toBeGreaterThanOrEqual(149);
    });

    it('control: a lock whose TTL covers the section is never lost', async () => {
      const key = newKey();
      const recorder = new MemoryRecorder();
      let aborted = false;
      await withLock(
        redis,
        key,
        async (lock) => {
          await sleep(200);
          aborted = lock.signal.aborted;
        },
        { ttlMs: 2000, recorder },
      );
      expect(aborted).toBe(false);
      expect(recorder.samples[0]!.outcome).toBe('released');
    });
  });
});

// Defects the ported suites of redis-semaphore, node-redlock, python-redis-lock and Redisson found.
describe.each(CLIENT_KINDS)('what the peers’ suites found, through %s', (kind) => {
  let redis!: LockClient;
  connectedFor(kind, (client) => (redis = client));

  it('an extend() in flight when release() runs neither re-arms the expiry nor reports the lock lost', async () => {
    const key = newKey();
    const lost: LockLostEvent[] = [];
    const lock = await RedisLock.acquire(redis, key, { ttlMs: 5000, onLockLost: (e) => lost.push(e) });
    const { signal } = lock;
    const extending = lock.extend(150); // its reply arrives after release() has begun
    expect(await lock.release()).toBe(true);
    await extending;
    await sleep(400); // past the 150 ms the late reply would have armed
    expect(signal.aborted).toBe(false);
    expect(lost).toEqual([]);
    expect(lock.isHeld).toBe(false);
  });

  it('a missing client is a ConfigError at construction, and the lock is not left acquiring', async () => {
    expect(() => new RedisLock(null as never, newKey(), { ttlMs: 1000 })).toThrow(ConfigError);
    expect(() => new RedisLock({} as never, newKey(), { ttlMs: 1000 })).toThrow(/Expected a Redis client/);
    await expect(withLock(undefined as never, newKey(), () => 1, { ttlMs: 1000 })).rejects.toBeInstanceOf(ConfigError);
  });

  it('work stopped by lock.signal surfaces as the LockLostError that stopped it, saying the TTL ran out', async () => {
    const key = newKey();
    const work = (lock: RedisLock) => sleepAbortable(2000, lock.signal);
    const error = await withLock(redis, key, work, { ttlMs: 150, throwOnLockLost: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockLostError);
    const lostError = error as LockLostError;
    expect(lostError.kind).toBe('ttl-ran-out');
    // Less than the TTL after the lock was won: the server started it when SET was sent.
    expect(lostError.message).toMatch(/expired while held: its TTL of 150 ms ran out \d+ ms after the lock was won/);
    expect(lostError.message).not.toMatch(/held \d+ ms with a TTL/);
    // Control: without throwOnLockLost the caller gets fn's own error.
    const plain = await withLock(redis, newKey(), work, { ttlMs: 150 }).catch((e: unknown) => e);
    expect((plain as Error).name).toBe('AbortError');
  });

  it('acquire stops waiting when its AbortSignal aborts', async () => {
    const key = newKey();
    const holder = await RedisLock.acquire(redis, key, { ttlMs: 5000 });
    const recorder = new MemoryRecorder();
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('the client went away')), 120);
    const started = performance.now();
    const error = await RedisLock.acquire(redis, key, { ttlMs: 5000, retry: { count: 1000, delayMs: 50, jitterMs: 0 }, signal: stop.signal, recorder }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe('the client went away');
    expect(performance.now() - started).toBeLessThan(400);
    expect(recorder.samples[0]).toMatchObject({ outcome: 'not_acquired' });
    // Already aborted: no attempt at all.
    const before = await other.get(key);
    await expect(RedisLock.acquire(redis, newKey(), { ttlMs: 5000, signal: AbortSignal.abort() })).rejects.toThrow();
    expect(await other.get(key)).toBe(before);
    await holder.release();
  });

  it('autoExtend keeps a long section’s lock, stops on release, and the sample counts the extensions', async () => {
    const key = newKey();
    const recorder = new MemoryRecorder();
    let aborted = true;
    let intruderGotIn = false;
    await withLock(
      redis,
      key,
      async (lock) => {
        await sleep(1500); // two and a half TTLs
        intruderGotIn = await RedisLock.acquire(other, key, { ttlMs: 1000, retry: { count: 0 } }).then(
          () => true,
          () => false,
        );
        aborted = lock.signal.aborted;
      },
      { ttlMs: 600, autoExtend: true, recorder }, // extended every 200 ms: a busy machine still makes it in time
    );
    expect(intruderGotIn).toBe(false);
    expect(aborted).toBe(false);
    expect(recorder.samples[0]).toMatchObject({ outcome: 'released' });
    expect(recorder.samples[0]!.extensions).toBeGreaterThanOrEqual(5);
    await sleep(250);
    expect(await other.exists(key)).toBe(0); // no extension after the release recreated anything
  });

  it('autoExtend aborts the signal when an extension finds the lock taken, and stops at maxHoldMs', async () => {
    const key = newKey();
    const lost: LockLostEvent[] = [];
    const lock = await RedisLock.acquire(redis, key, { ttlMs: 300, autoExtend: 100, onLockLost: (e) => lost.push(e) });
    await other.set(key, 'someone-else', 'PX', 5000);
    await sleep(250);
    expect(lock.signal.aborted).toBe(true);
    expect(lost).toHaveLength(1);
    expect(await lock.release()).toBe(false);
    await other.del(key);

    // A hung holder: extensions stop at maxHoldMs, then the TTL runs out as usual.
    const recorder = new MemoryRecorder();
    const capped = await withLock(redis, newKey(), async (l) => {
      await sleep(1100);
      return l.signal.aborted;
    }, { ttlMs: 300, autoExtend: 100, maxHoldMs: 500, recorder });
    expect(capped).toBe(true);
    expect(recorder.samples[0]).toMatchObject({ outcome: 'expired' });
    // Four every 100 ms before the 500 ms cap; a fifth when the timers fire a fraction of a ms early (libuv's
    // cached loop time), as a run beside two CPU-bound processes saw. Never more: none is sent past the cap.
    expect(recorder.samples[0]!.extensions).toBeLessThanOrEqual(5);
  });

  it('rejects an autoExtend interval that is not below the TTL', async () => {
    await expect(RedisLock.acquire(redis, newKey(), { ttlMs: 300, autoExtend: 300 })).rejects.toThrow(/`autoExtend`/);
  });
});

function sleepAbortable(ms: number, signal: AbortSignal): Promise<void> {
  return import('node:timers/promises').then(({ setTimeout }) => setTimeout(ms, undefined, { signal }));
}

describe('TTL bounds', () => {
  it('refuses a TTL longer than a Node timer can wait (it would abort the signal at once)', () => {
    const client = { set: async () => 'OK', evalsha: async () => 1, eval: async () => 1 };
    expect(() => new RedisLock(client, 'k', { ttlMs: 2 ** 31 })).toThrow('Expected `ttlMs` to be at most 2147483647, got `2147483648`');
    expect(() => new RedisLock(client, 'k', { ttlMs: 2 ** 31 - 1 })).not.toThrow();
  });
});

describe('lock validity is judged by the monotonic clock when asked', () => {
  it('after a pause longer than the TTL, the lock says it is not held, before any timer has run', async () => {
    const key = newKey();
    const lock = await RedisLock.acquire(other, key, { ttlMs: 200 });
    const { signal } = lock; // asked for early, as a section would, so its timer is armed
    expect(lock.isHeld).toBe(true); // control: before the deadline
    expect(() => lock.assertHeld()).not.toThrow();
    const end = performance.now() + 350;
    while (performance.now() < end) {
      // a long GC pause or a blocked event loop: no timer can run
    }
    expect(lock.isHeld).toBe(false);
    expect(lock.remainingMs).toBe(0);
    expect(lock.signal.aborted).toBe(true); // aborted at this first look, not when the timer gets to run
    expect(signal.aborted).toBe(true);
    expect(() => lock.assertHeld()).toThrow(LockLostError);
    expect(await lock.release()).toBe(false); // Redis expired it meanwhile
  });
});

describe('outcomes say what happened', () => {
  it('a key that vanished before its TTL could have run out is `lost`, not `expired`, and analysis keeps the two apart', async () => {
    const { SqliteRecorder, analyze } = await import('../../src/index.js');
    const { tempDir } = await import('../helpers/temp.js');
    const path = `${tempDir()}/lost.db`;
    const recorder = new SqliteRecorder({ path });
    const lost: LockLostEvent[] = [];
    const key = `vanish:lock:${randomUUID()}`;
    const released = await withLock(other, key, async () => {
      await other.del(key); // someone else deleted it (or Redis restarted without persistence)
      return 'done';
    }, { ttlMs: 5000, recorder, onLockLost: (e) => lost.push(e) });
    expect(released).toBe('done');
    expect(lost).toHaveLength(1);
    await recorder.close();
    const [pattern] = analyze([path]).patterns;
    expect(pattern!.outcomes).toMatchObject({ lost: 1, expired: 0, released: 0 });
    expect(pattern!.verdict).not.toBe('expired');
    expect(pattern!.hints).toContainEqual({ kind: 'lost', lost: 1 });
  });

  it('a release that gets no reply after the TTL ran out is `expired` and calls onLockLost; before, it is an error', async () => {
    const { startRedisServer } = await import('../helpers/redis-server.js');
    const server = await startRedisServer();
    const client = new Redis(server.url);
    const admin = new Redis(server.url);
    try {
      const recorder = new MemoryRecorder();
      const lost: LockLostEvent[] = [];
      const late = await RedisLock.acquire(client, 'slow:lock:1', { ttlMs: 200, commandTimeoutMs: 150, recorder, onLockLost: (e) => lost.push(e) });
      await sleep(250);
      void admin.call('DEBUG', 'SLEEP', '0.4'); // Redis stalls: the release gets no reply in time
      await sleep(20);
      expect(await late.release()).toBe(false);
      expect(recorder.samples.at(-1)).toMatchObject({ outcome: 'expired' });
      expect(lost).toHaveLength(1);
      await sleep(450);

      // Control: the same stall while the TTL still runs is a Redis error, not an expiry.
      const early = await RedisLock.acquire(client, 'slow:lock:2', { ttlMs: 5000, commandTimeoutMs: 150, recorder });
      void admin.call('DEBUG', 'SLEEP', '0.4');
      await sleep(20);
      await expect(early.release()).rejects.toBeInstanceOf(LockRedisError);
      expect(recorder.samples.at(-1)).toMatchObject({ outcome: 'error' });
      await sleep(450);
    } finally {
      client.disconnect();
      admin.disconnect();
      await server.stop();
    }
  });
});
