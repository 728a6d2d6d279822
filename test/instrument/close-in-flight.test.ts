import { Redis } from 'ioredis';
import Redlock from 'redlock';
import { describe, expect, it } from 'vitest';
import { instrumentationOf, instrument } from '../../src/index.js';
import { CLIENT_KINDS, connectClient, type TestClient } from '../helpers/clients.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';
import { useOwnRedisServer, type RedisServer } from '../helpers/redis-server.js';

/**
 * Issue 22, item 8: `close()` while an acquire's reply is on its way. The server
 * is made to sleep (`DEBUG SLEEP`, from another connection; a private server,
 * so no other test waits on it), a `SET NX PX` is sent behind it, and the
 * instrumentation is closed before the reply comes. Nothing may be recorded for
 * it — before the fix, the late reply opened a hold that the sweep recorded as
 * `expired` once its TTL and grace ran out — and it is counted as abandoned.
 */

const TTL_MS = 200;
const GRACE_MS = 100;
const SLEEP_S = 0.4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

let server: RedisServer;
let admin: Redis;
useOwnRedisServer((s, client) => void ([server, admin] = [s, client]));

type NodeRedis = { set(k: string, v: string, o: object): Promise<unknown>; eval(s: string, o: object): Promise<unknown> };

/** `SET key token NX PX ttl`, as each client spells it. */
function setNx(c: TestClient, key: string, token: string, ttlMs: number): Promise<unknown> {
  return c.kind === 'node-redis 5' ? (c.client as unknown as NodeRedis).set(key, token, { NX: true, PX: ttlMs }) : (c.client as unknown as Redis).set(key, token, 'PX', ttlMs, 'NX');
}

function release(c: TestClient, key: string, token: string): Promise<unknown> {
  return c.kind === 'node-redis 5' ? (c.client as unknown as NodeRedis).eval(RELEASE, { keys: [key], arguments: [token] }) : (c.client as unknown as Redis).eval(RELEASE, 1, key, token);
}

describe.each(CLIENT_KINDS)('item 8 (%s): close() with an acquire in flight', (kind) => {
  const ns = (name: string) => `${name}-${kind.replace(/\W/g, '')}`;

  /** Connects, instruments, and shows the pattern is a lock's (one cycle with a token-checked release). */
  async function instrumented(prefix: string): Promise<{ c: TestClient; recorder: MemoryRecorder }> {
    const c = await connectClient(kind, server.url);
    const recorder = new MemoryRecorder();
    instrument(c.client as object, { recorder, expiredGraceMs: GRACE_MS, retryWindowMs: 100 });
    await setNx(c, `${prefix}:lock:1`, 'warm', 5000);
    expect(await release(c, `${prefix}:lock:1`, 'warm')).toBe(1);
    expect(recorder.samples.map((s) => s.outcome)).toEqual(['released']);
    return { c, recorder };
  }

  /** Sends the acquire while the server sleeps, calls `then` right after sending; its reply and how long it took. */
  async function acquireWhileServerSleeps(c: TestClient, key: string, then: () => void): Promise<{ reply: unknown; tookMs: number }> {
    const asleep = admin.call('DEBUG', 'SLEEP', String(SLEEP_S));
    await sleep(50); // the server is inside DEBUG SLEEP now
    const start = performance.now();
    const pending = setNx(c, key, 'tok', TTL_MS);
    then(); // the command is sent; its reply cannot have come yet
    const reply = await pending;
    await asleep;
    return { reply, tookMs: performance.now() - start };
  }

  it('item 8: nothing is recorded after close, and the unanswered acquire is counted as abandoned', async () => {
    const prefix = ns('inflight');
    const { c, recorder } = await instrumented(prefix);
    const handle = instrumentationOf(c.client as object)!;
    const { reply, tookMs } = await acquireWhileServerSleeps(c, `${prefix}:lock:2`, () => handle.close());
    expect(reply).toBe('OK');
    expect(tookMs).toBeGreaterThan(SLEEP_S * 1000 - 150); // the reply came well after close()
    await sleep(TTL_MS + GRACE_MS + 400); // past the TTL and the grace: when a false `expired` would be recorded
    expect(recorder.samples.map((s) => [s.key, s.outcome])).toEqual([[`${prefix}:lock:1`, 'released']]);
    expect(handle.stats()).toMatchObject({ abandoned: 1, open: 0, waiting: 0, recorded: { expired: 0 } });
    await c.close();
  });

  it('item 8 control: the same acquire, not closed, is recorded as expired after its TTL and grace', async () => {
    const prefix = ns('inflight-control');
    const { c, recorder } = await instrumented(prefix);
    const handle = instrumentationOf(c.client as object)!;
    const { reply } = await acquireWhileServerSleeps(c, `${prefix}:lock:2`, () => undefined);
    expect(reply).toBe('OK');
    await sleep(TTL_MS + GRACE_MS + 400);
    expect(recorder.samples.map((s) => [s.key, s.outcome])).toEqual([
      [`${prefix}:lock:1`, 'released'],
      [`${prefix}:lock:2`, 'expired'],
    ]);
    expect(handle.stats()).toMatchObject({ abandoned: 0 });
    handle.close();
    await c.close();
  });
});

describe('item 8: acquires counted in flight are only those still unanswered', () => {
  it("item 8: node-redlock's acquire answered NOSCRIPT and sent again as EVAL is not left in flight (close abandons nothing)", async () => {
    const recorder = new MemoryRecorder();
    const redis = instrument(new Redis(server.url), { recorder });
    const redlock = new Redlock([redis], { retryCount: 0 });
    for (let i = 0; i < 3; i++) {
      await admin.script('FLUSH'); // every script of the round meets NOSCRIPT first
      const lock = await redlock.acquire([`noscript:lock:${i}`], 5000);
      await lock.release();
    }
    const handle = instrumentationOf(redis)!;
    expect(recorder.samples.map((s) => s.outcome)).toEqual(['released', 'released', 'released']);
    handle.close();
    expect(handle.stats()).toMatchObject({ abandoned: 0, acquired: 3 });
    redis.disconnect();
  });

  it('item 8: an acquire in flight on a lock already waiting (a retry) is that attempt, counted once', async () => {
    const recorder = new MemoryRecorder();
    const redis = instrument(new Redis(server.url), { recorder, retryWindowMs: 5000 });
    await admin.set('retry:lock:1', 'someone', 'PX', 5000);
    expect(await redis.set('retry:lock:1', 'mine', 'PX', 1000, 'NX')).toBeNull(); // waiting now
    const handle = instrumentationOf(redis)!;
    const asleep = admin.call('DEBUG', 'SLEEP', '0.2');
    await sleep(50);
    const retry = redis.set('retry:lock:1', 'mine', 'PX', 1000, 'NX');
    handle.close();
    expect(handle.stats()).toMatchObject({ abandoned: 1, waiting: 0 });
    expect(await retry).toBeNull();
    await asleep;
    await admin.del('retry:lock:1');
    redis.disconnect();
  });
});
