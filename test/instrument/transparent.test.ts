import { Redis as Redis5 } from 'ioredis';
import { Redis as Redis6 } from 'ioredis6';
import { createClient } from 'redis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { instrument, instrumentationOf, withLock } from '../../src/index.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';

/**
 * Everything else a client does behaves the same through the wrapper: the same
 * slice of each client's API runs on a plain and on an instrumented client (in
 * key spaces of their own), and what each returns, throws or delivers is compared.
 */

const url = inject('redisUrl');
const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

/** What a call returned or threw, with the key space taken out. */
async function outcome(ns: string, run: () => unknown): Promise<unknown> {
  const strip = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x) => (Buffer.isBuffer(x) ? `<buf:${x.toString()}>` : typeof x === 'string' ? x.replaceAll(ns, '#') : x)));
  try {
    return { ok: strip(await run()) };
  } catch (error) {
    return { error: String((error as Error).message).replaceAll(ns, '#') };
  }
}

type IoClient = Redis5;

async function ioredisSlice(redis: IoClient, ns: string): Promise<unknown[]> {
  const k = (name: string) => `${ns}${name}`;
  const results: unknown[] = [];
  const step = async (run: () => unknown) => results.push(await outcome(ns, run));
  await step(() => redis.set(k('s'), 'v'));
  await step(() => redis.get(k('s')));
  await step(() => redis.getBuffer(k('s')));
  await step(() => redis.mget(k('s'), k('missing')));
  await step(() => redis.incr(k('n')));
  await step(() => redis.hset(k('h'), { a: '1', b: '2' }));
  await step(() => redis.hgetall(k('h')));
  await step(() => redis.set(k('nx'), 'v', 'PX', 60_000, 'NX'));
  await step(() => redis.set(k('nx'), 'v', 'PX', 60_000, 'NX'));
  await step(() => redis.pipeline().set(k('p'), '1').incr(k('p')).get(k('p')).exec());
  await step(() => redis.multi().incr(k('m')).incr(k('m')).exec());
  await step(() => new Promise((resolve, reject) => redis.get(k('s'), (e, v) => (e ? reject(e) : resolve(v)))));
  await step(() => redis.lpush(k('s'), 'x'));
  await step(() => redis.evalsha('0'.repeat(40), 0));
  await step(() => redis.eval('return {KEYS[1], ARGV[1], 3}', 1, k('e'), 'arg'));
  await step(() => redis.call('SET', k('c'), 'v', 'NX', 'PX', 1000));
  await step(async () => {
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `${ns}*`, count: 5 })) keys.push(...(batch as string[]));
    return keys.sort();
  });
  await step(async () => {
    const sub = redis.duplicate();
    const message = new Promise((resolve) => sub.on('message', (channel, text) => resolve([channel, text])));
    await sub.subscribe(k('ch'));
    await redis.publish(k('ch'), 'hello');
    const got = await message;
    sub.disconnect();
    return got;
  });
  await step(() => redis.del(k('s'), k('n'), k('h'), k('nx'), k('p'), k('m'), k('c')));
  return results;
}

describe.each([
  ['ioredis 5', Redis5, () => new Redis5(url)],
  ['ioredis 6', Redis6, () => new Redis6(url) as unknown as Redis5],
] as const)('%s through instrument()', (_kind, RedisClass, make) => {
  it('answers, fails and delivers exactly as the plain client does', async () => {
    const plain = make();
    const recorder = new MemoryRecorder();
    const wrapped = instrument(make(), { recorder });
    closers.push(() => plain.disconnect(), () => wrapped.disconnect());
    wrapped.defineCommand('twice', { numberOfKeys: 1, lua: "return redis.call('incrby', KEYS[1], 2)" });
    plain.defineCommand('twice', { numberOfKeys: 1, lua: "return redis.call('incrby', KEYS[1], 2)" });
    const expected = await ioredisSlice(plain, `plain:${_kind}:`);
    const actual = await ioredisSlice(wrapped, `wrapped:${_kind}:`);
    expect(actual).toEqual(expected);
    expect(expected.filter((r) => 'error' in (r as object))).toHaveLength(2); // WRONGTYPE and NOSCRIPT, the rest answered
    expect(recorder.samples).toEqual([]); // SET NX PX then DEL, never a token-checked release: not a lock
    expect(await (wrapped as unknown as { twice(k: string): Promise<number> }).twice(`wrapped:${_kind}:t`)).toBe(2);
    expect(wrapped).toBeInstanceOf(RedisClass);
    const copy = wrapped.duplicate();
    closers.push(() => copy.disconnect());
    expect(instrumentationOf(copy)).toBe(instrumentationOf(wrapped));
    await wrapped.del(`wrapped:${_kind}:t`);
  });
});

describe('node-redis 5 through instrument()', () => {
  it('answers, fails and delivers exactly as the plain client does', async () => {
    const plain = createClient({ url });
    const recorder = new MemoryRecorder();
    const wrapped = instrument(createClient({ url }), { recorder });
    await Promise.all([plain.connect(), wrapped.connect()]);
    closers.push(() => plain.close(), () => wrapped.close());
    type Client = typeof plain;
    const slice = async (redis: Client, ns: string) => {
      const k = (name: string) => `${ns}${name}`;
      const results: unknown[] = [];
      const step = async (run: () => unknown) => results.push(await outcome(ns, run));
      await step(() => redis.set(k('s'), 'v'));
      await step(() => redis.get(k('s')));
      await step(() => redis.mGet([k('s'), k('missing')]));
      await step(() => redis.incr(k('n')));
      await step(() => redis.hSet(k('h'), { a: '1', b: '2' }));
      await step(() => redis.hGetAll(k('h')));
      await step(() => redis.set(k('nx'), 'v', { NX: true, PX: 60_000 }));
      await step(() => redis.set(k('nx'), 'v', { NX: true, PX: 60_000 }));
      await step(() => redis.multi().incr(k('m')).incr(k('m')).exec());
      await step(() => redis.multi().set(k('p'), '1').incr(k('p')).execAsPipeline());
      await step(() => redis.lPush(k('s'), 'x'));
      await step(() => redis.evalSha('0'.repeat(40), { keys: [] }));
      await step(() => redis.eval('return {KEYS[1], ARGV[1], 3}', { keys: [k('e')], arguments: ['arg'] }));
      await step(() => redis.sendCommand(['SET', k('c'), 'v', 'NX', 'PX', '1000']));
      await step(async () => {
        const keys: string[] = [];
        for await (const batch of redis.scanIterator({ MATCH: `${ns}*`, COUNT: 5 })) keys.push(...batch);
        return keys.sort();
      });
      await step(async () => {
        const sub = redis.duplicate();
        await sub.connect();
        const message = new Promise((resolve) => void sub.subscribe(k('ch'), (text, channel) => resolve([channel, text])));
        await new Promise((r) => setTimeout(r, 50));
        await redis.publish(k('ch'), 'hello');
        const got = await message;
        await sub.close();
        return got;
      });
      await step(() => redis.withTypeMapping({ 36: Buffer }).get(k('s')));
      await step(() => redis.del([k('s'), k('n'), k('h'), k('nx'), k('p'), k('m'), k('c')]));
      return results;
    };
    const expected = await slice(plain, 'plain:nr:');
    const actual = await slice(wrapped, 'wrapped:nr:');
    expect(actual).toEqual(expected);
    expect(expected.filter((r) => 'error' in (r as object))).toHaveLength(2);
    expect(recorder.samples).toEqual([]);
    // node-redis's duplicate() is not connected: nothing to close.
    expect(instrumentationOf(wrapped.duplicate())).toBe(instrumentationOf(wrapped));
  });
});

describe('instrument() itself', () => {
  it('refuses what it cannot instrument, and a second instrumentation, with a ConfigError', () => {
    const recorder = new MemoryRecorder();
    expect(() => instrument(null as unknown as object, { recorder })).toThrow(/Expected a Redis client/);
    expect(() => instrument({ get() {} }, { recorder })).toThrow(/ioredis `Redis` or `Cluster`, or a node-redis 5 client or cluster/);
    const redis = new Redis5({ lazyConnect: true });
    expect(() => instrument(redis, {} as never)).toThrow(/Expected `recorder`/);
    expect(() => instrument(redis, { recorder, retryWindowMs: -1 })).toThrow(/retryWindowMs/);
    expect(instrumentationOf(redis)).toBeUndefined();
    instrument(redis, { recorder });
    expect(() => instrument(redis, { recorder })).toThrow(/instrumented already/);
    instrumentationOf(redis)!.close();
    expect(Object.prototype.hasOwnProperty.call(redis, 'sendCommand')).toBe(false);
    expect(instrumentationOf(redis)).toBeUndefined();
    redis.disconnect();
  });

  it("our own withLock through an instrumented client is recorded once, by the lock itself", async () => {
    const recorder = new MemoryRecorder();
    const redis = instrument(new Redis5(url), { recorder });
    closers.push(() => redis.disconnect());
    for (let i = 0; i < 5; i++) await withLock(redis, `ours:lock:${i}`, () => undefined, { ttlMs: 2000, recorder });
    expect(recorder.samples.map((s) => [s.key, s.outcome])).toEqual(Array.from({ length: 5 }, (_, i) => [`ours:lock:${i}`, 'released']));
    expect(instrumentationOf(redis)!.stats()).toMatchObject({ acquired: 0, open: 0 });
  });

  it('past maxOpenLocks, further locks are counted untracked and one warning says so', async () => {
    const warnings: string[] = [];
    const recorder = new MemoryRecorder();
    const redis = instrument(new Redis5(url), { recorder, maxOpenLocks: 2, onWarning: (w) => warnings.push(w.kind) });
    closers.push(() => redis.disconnect());
    const release = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
    // A lock cycle first: the pattern is a lock's. (Past the limit, a SET NX on a pattern never seen
    // released is a cache's, most likely: ignored without a warning.)
    await redis.set('full:lock:0', 't', 'PX', 5000, 'NX');
    await redis.eval(release, 1, 'full:lock:0', 't');
    for (const i of [1, 2, 3, 4]) await redis.set(`full:lock:${i}`, 't', 'PX', 5000, 'NX');
    for (const i of [1, 2, 3, 4]) expect(await redis.eval(release, 1, `full:lock:${i}`, 't')).toBe(1);
    expect(recorder.samples.map((s) => s.key)).toEqual(['full:lock:0', 'full:lock:1', 'full:lock:2']);
    expect(instrumentationOf(redis)!.stats()).toMatchObject({ acquired: 3, untracked: 2 });
    expect(warnings).toEqual(['tracking-full']);
  });

  it('a recorder that throws loses its sample, never the reply; closing counts what was still open', async () => {
    const redis = instrument(new Redis5(url), {
      recorder: {
        record() {
          throw new Error('boom');
        },
      },
    });
    closers.push(() => redis.disconnect());
    await redis.set('throwing:lock:1', 't', 'PX', 1000, 'NX');
    expect(await redis.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0", 1, 'throwing:lock:1', 't')).toBe(1);
    await redis.set('throwing:lock:2', 't', 'PX', 1000, 'NX');
    const handle = instrumentationOf(redis)!;
    expect(handle.stats()).toMatchObject({ acquired: 2, open: 1, recorded: { released: 1 } });
    handle.close();
    expect(handle.stats()).toMatchObject({ abandoned: 1, open: 0 });
    await redis.del('throwing:lock:2');
  });
});

describe('a command ioredis sends again', () => {
  const COMPARE_AND_DELETE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`;

  it.each([
    ['ioredis 5', Redis5],
    ['ioredis 6', Redis6 as unknown as typeof Redis5],
  ] as const)('%s: an acquire queued offline and sent again once connected is read once (one attempt, not two)', async (name, Client) => {
    const ns = `resend${name.at(-1)}:lock:`;
    const recorder = new MemoryRecorder();
    const other = new Client(url);
    // The failed attempt is a lock's only once the release below confirms its pattern: a retry window that ran
    // out before that (50 ms did, once, in CI's fresh clone) counts it as a cache's failed SET NX instead.
    const redis = instrument(new Client(url, { lazyConnect: true }), { recorder, retryWindowMs: 1000 });
    closers.push(() => other.quit(), () => redis.quit());
    await other.set(`${ns}1`, 'theirs', 'PX', 10_000, 'NX');
    // Not connected yet: ioredis queues the command, connects, then sends it again from its offline queue.
    expect(await redis.set(`${ns}1`, 'mine', 'PX', 10_000, 'NX')).toBeNull();
    // A token-checked release on the same pattern: the failed attempt above is a lock's.
    expect(await redis.set(`${ns}2`, 'mine', 'PX', 10_000, 'NX')).toBe('OK');
    expect(await redis.eval(COMPARE_AND_DELETE, 1, `${ns}2`, 'mine')).toBe(1);
    // Given up once the retry window ran out with no retry: up to 10 s on a loaded machine.
    for (let waited = 0; waited < 10_000 && !recorder.samples.some((s) => s.outcome === 'not_acquired'); waited += 50) await new Promise((r) => setTimeout(r, 50));
    instrumentationOf(redis)!.close();
    const given = recorder.samples.find((s) => s.outcome === 'not_acquired');
    expect(recorder.samples.map((s) => s.outcome).sort()).toEqual(['not_acquired', 'released']);
    expect(given).toMatchObject({ key: `${ns}1`, attempts: 1 });
  });
});
