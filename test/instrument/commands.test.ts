import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import Redlock from 'redlock';
import Redlock4 from 'redlock4';
import { describe, expect, it } from 'vitest';
import { readLockCommand, succeeded, verbOf, type LockCommand } from '../../src/instrument/commands.js';
import { classify, kindOfSha, sha1 } from '../../src/instrument/scripts.js';
import { ACQUIRE_WITH_FENCE, EXTEND, RELEASE } from '../../src/lock/scripts.js';
import { encodeHolder, MIN_TOKEN_LENGTH, newToken, parseToken } from '../../src/token.js';

const now = () => 1_000_000;
/** A command as read, without the key count it derives from its keys (`more`), which the expectations name. */
function read(name: string, ...args: unknown[]) {
  return withoutCount(readLockCommand(verbOf(name)!, args, now));
}

function withoutCount(command: LockCommand | undefined) {
  if (command === undefined) return undefined;
  const { keyCount, ...rest } = command;
  expect(keyCount).toBe(1 + (command.more?.length ?? 0));
  return rest;
}

describe('the scripts of the lock libraries', () => {
  it('knows node-redlock 5 and 4 by the SHA1s they send', () => {
    const client = new Redis({ lazyConnect: true });
    const r5 = new Redlock([client]).scripts;
    expect([kindOfSha(r5.acquireScript.hash), kindOfSha(r5.extendScript.hash), kindOfSha(r5.releaseScript.hash)]).toEqual(['acquire', 'extend', 'release']);
    const r4 = new Redlock4([client]).scripts;
    expect([kindOfSha(r4.lockScript.hash), kindOfSha(r4.extendScript.hash), kindOfSha(r4.unlockScript.hash)]).toEqual(['acquire', 'extend', 'release']);
    // …and would read the same from their texts, were they customized
    for (const s of [r5, r4]) expect(Object.values(s).map((x) => classify(x.value))).toEqual(Object.keys(s).map((k) => ({ acquireScript: 'acquire', lockScript: 'acquire', extendScript: 'extend', releaseScript: 'release', unlockScript: 'release' })[k]));
    client.disconnect();
  });

  it("knows redis-semaphore's Mutex scripts by the SHA1s it sends (read off the installed package)", () => {
    const require = createRequire(import.meta.url);
    const lib = dirname(require.resolve('redis-semaphore'));
    const scriptOf = (file: string) => /createEval\)\(`([\s\S]*?)`, 1\)/.exec(readFileSync(join(lib, file), 'utf8'))![1]!;
    const release = scriptOf('mutex/release.js');
    const refresh = scriptOf('mutex/refresh.js');
    expect([kindOfSha(sha1(release)), kindOfSha(sha1(refresh))]).toEqual(['release', 'extend']);
    expect([classify(release), classify(refresh)]).toEqual(['release', 'extend']);
  });

  it('tells SHA1s sent in turn apart (the last two found are kept), and finds one learnt after it was unknown', () => {
    const client = new Redis({ lazyConnect: true });
    const r5 = new Redlock([client]).scripts;
    client.disconnect();
    const [acquire, extend, release] = [r5.acquireScript.hash, r5.extendScript.hash, r5.releaseScript.hash];
    // Equal texts, other strings (as a client may send them): found by content, not by identity.
    const copy = (sha: string) => sha.split('').join('');
    const sent = [acquire, release, copy(acquire), extend, release, acquire, copy(extend), extend, release];
    expect(sent.map(kindOfSha)).toEqual(['acquire', 'release', 'acquire', 'extend', 'release', 'acquire', 'extend', 'extend', 'release']);
    const mine = `return redis.call('get', KEYS[1]) == ARGV[1] and redis.call('del', KEYS[1]) -- ${Math.random()}`;
    expect([kindOfSha(sha1(mine)), kindOfSha(acquire), kindOfSha(sha1(mine))]).toEqual([undefined, 'acquire', undefined]);
    expect(read('script', 'load', mine)).toBeUndefined(); // SCRIPT LOAD teaches it
    expect([kindOfSha(sha1(mine)), kindOfSha(release), kindOfSha(sha1(mine).toUpperCase()), kindOfSha('f'.repeat(40))]).toEqual(['release', 'release', 'release', undefined]);
  });

  it("reads the seed's and our own scripts by their shape; other scripts are not locks", () => {
    expect(classify(RELEASE.source)).toBe('release');
    expect(classify(EXTEND.source)).toBe('extend');
    expect(classify(ACQUIRE_WITH_FENCE.source)).toBe('acquire');
    expect(classify(`-- release\nif redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('UNLINK', KEYS[1]) end return 0`)).toBe('release');
    expect(classify(`if redis.call("get",KEYS[1]) == ARGV[1] then redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2]) return 1 end return 0`)).toBe('extend');
    // a rate limiter, a counter, a cache fill: not locks
    expect(classify(`local n = redis.call('incr', KEYS[1]) if n == 1 then redis.call('pexpire', KEYS[1], ARGV[1]) end return n`)).toBe('other');
    expect(classify(`return redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])`)).toBe('other');
    expect(classify(`redis.call('del', KEYS[1]) return 1`)).toBe('other');
    // a comment mentioning del is not a delete
    expect(classify(`if redis.call('get', KEYS[1]) == ARGV[1] then -- then del\n return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0`)).toBe('extend');
  });
});

describe('reading commands', () => {
  it('reads SET NX with a TTL in every spelling as an acquire, SET XX as an extend', () => {
    const acquire = { op: 'acquire', key: 'k', token: 't', byScript: false };
    expect(read('set', 'k', 't', 'PX', 100, 'NX')).toEqual({ ...acquire, ttlMs: 100 });
    expect(read('SET', 'k', 't', 'NX', 'EX', '3')).toEqual({ ...acquire, ttlMs: 3000 });
    expect(read('set', Buffer.from('k'), Buffer.from('t'), 'nx', 'px', '250')).toEqual({ ...acquire, ttlMs: 250 });
    expect(read('set', 'k', 't', 'NX', 'PXAT', 1_000_500)).toEqual({ ...acquire, ttlMs: 500 });
    expect(read('set', 'k', 't', 'XX', 'PX', 100)).toEqual({ op: 'extend', key: 'k', token: 't', ttlMs: 100 });
  });

  it('leaves alone what is not the lock protocol', () => {
    expect(read('set', 'k', 'v')).toBeUndefined();
    expect(read('set', 'k', 'v', 'NX')).toBeUndefined(); // no TTL: not a lock anyone could size
    expect(read('set', 'k', 'v', 'PX', 100)).toBeUndefined();
    expect(read('set', 'k', 'v', 'NX', 'PX', 100, 'GET')).toBeUndefined();
    expect(read('set', 'k', 'v', 'NX', 'PX', 'soon')).toBeUndefined();
    expect(read('set', 'k', 'v', 'NX', 'PXAT', 999_000)).toBeUndefined(); // already in the past
    expect(verbOf('get')).toBeUndefined();
    expect(verbOf('hset')).toBeUndefined();
    expect(verbOf(undefined)).toBeUndefined();
    // Names and options in lower or upper case, as clients send them; a mixed case is not read (it never was).
    expect([verbOf('evalsha'), verbOf('EVALSHA'), verbOf('unlink'), verbOf('PEXPIRE'), verbOf('script')]).toEqual(['evalsha', 'evalsha', 'del', 'pexpire', 'script']);
    expect([verbOf('Set'), verbOf('sets'), verbOf('evalsha_ro'), verbOf('pexpireat')]).toEqual([undefined, undefined, undefined, undefined]);
    expect(read('set', 'k', 't', 'Nx', 'PX', 100)).toBeUndefined();
    expect(read('set', 'k', 't', 'NX', 'pX', 100)).toBeUndefined();
    expect(read('set', 'k', 't', 'NX', 'PXat', 1_000_500)).toBeUndefined();
    expect(read('set', 'k', 't', 'nx', 'exat', 1001)).toMatchObject({ op: 'acquire', ttlMs: 1000 });
  });

  it("skips our own lock's tokens: RedisLock records its locks itself", () => {
    const token = newToken(encodeHolder('host:1'), Date.UTC(2026, 11, 5));
    expect(read('set', 'k', token, 'NX', 'PX', 100)).toBeUndefined();
    expect(read('eval', RELEASE.source, 1, 'k', token)).toBeUndefined();
    // The shortest a token of ours can be (no holder, the epoch itself) is still ours.
    const shortest = newToken('', 0);
    expect(shortest).toHaveLength(MIN_TOKEN_LENGTH);
    expect(parseToken(shortest)).toEqual({ holder: '', acquiredAtMs: 0 });
    expect(read('set', 'k', shortest, 'NX', 'PX', 100)).toBeUndefined();
    // Shorter than any of ours (a UUID is 36 characters): another lock's, whatever it starts with.
    expect(read('set', 'k', 'tta1.x.0.y', 'NX', 'PX', 100)).toMatchObject({ op: 'acquire', token: 'tta1.x.0.y' });
    expect(read('set', 'k', randomUUID(), 'NX', 'PX', 100)).toMatchObject({ op: 'acquire' });
  });

  it('reads scripts by SHA1 or text, with keys and ARGV; unknown SHA1s stay for the tracker to match', () => {
    expect(read('eval', RELEASE.source, '1', 'k', 't')).toEqual({ op: 'release', key: 'k', token: 't' });
    // once seen as text, its SHA1 is known
    expect(read('evalsha', RELEASE.sha, 1, 'k', 't')).toEqual({ op: 'release', key: 'k', token: 't' });
    expect(read('evalsha', EXTEND.sha, 1, 'k', 't', 500)).toMatchObject({ op: 'script' });
    expect(read('eval', EXTEND.source, 1, 'k', 't', 500)).toEqual({ op: 'extend', key: 'k', token: 't', ttlMs: 500 });
    expect(read('evalsha', EXTEND.sha, 1, 'k', 't', 500)).toEqual({ op: 'extend', key: 'k', token: 't', ttlMs: 500 });
    const unknown = 'f'.repeat(40);
    expect(read('evalsha', unknown, 2, 'a', 'b', 't')).toEqual({ op: 'script', key: 'a', more: ['b'], token: 't' });
    expect(read('evalsha', unknown, 1, 'a', 't', '500')).toEqual({ op: 'script', key: 'a', token: 't', ttlMs: 500 });
    // Neither a release nor an extend: a third ARGV, or a second that is no TTL.
    expect([read('evalsha', unknown, 1, 'a', 't', 500, 'x'), read('evalsha', unknown, 1, 'a', 't', '5s')]).toEqual([undefined, undefined]);
    // SCRIPT LOAD teaches a SHA1 too
    const custom = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return -1`;
    expect(read('evalsha', sha1(custom), 1, 'k', 't')).toMatchObject({ op: 'script' });
    read('script', 'LOAD', custom);
    expect(read('evalsha', sha1(custom), 1, 'k', 't')).toEqual({ op: 'release', key: 'k', token: 't' });
    expect(read('eval', 'return 1', 0)).toBeUndefined();
  });

  it('reads a script in place after the command name, as node-redis sends it (`args[0]` its name)', () => {
    const nodeRedis = (...args: unknown[]) => withoutCount(readLockCommand(verbOf(args[0])!, args, now, 1));
    expect(nodeRedis('EVALSHA', RELEASE.sha, '3', 'a', 'b', 'c', 't')).toEqual({ op: 'release', key: 'a', more: ['b', 'c'], token: 't' });
    expect(nodeRedis('EVALSHA', EXTEND.sha, '1', 'k', 't', '500')).toEqual({ op: 'extend', key: 'k', token: 't', ttlMs: 500 });
    expect(nodeRedis('EVALSHA', 'f'.repeat(40), '1', 'a', 't')).toEqual({ op: 'script', key: 'a', token: 't' });
    // Too few arguments for its key count, or none: not a lock's.
    expect([nodeRedis('EVALSHA', RELEASE.sha, '2', 'a', 't'), nodeRedis('EVALSHA', RELEASE.sha, '0', 't')]).toEqual([undefined, undefined]);
    expect(read('unlink', 'a')).toEqual({ op: 'release', key: 'a', token: undefined });
    expect(read('unlink', 'a')!.more).toBeUndefined();
  });

  it('reads PEXPIRE/EXPIRE as an extend and DEL/UNLINK as an untokened release', () => {
    expect(read('pexpire', 'k', 500)).toEqual({ op: 'extend', key: 'k', token: undefined, ttlMs: 500 });
    expect(read('EXPIRE', 'k', '2')).toEqual({ op: 'extend', key: 'k', token: undefined, ttlMs: 2000 });
    expect(read('unlink', 'a', 'b')).toEqual({ op: 'release', key: 'a', more: ['b'], token: undefined });
  });

  it('tells success from failure in every reply type', () => {
    expect(succeeded('OK', 1)).toBe(true);
    expect(succeeded(Buffer.from('OK'), 1)).toBe(true);
    expect(succeeded(null, 1)).toBe(false);
    expect(succeeded(1, 1)).toBe(true);
    expect(succeeded('1', 1)).toBe(true);
    expect(succeeded(0, 1)).toBe(false);
    expect(succeeded(2, 3)).toBe(false);
    expect(succeeded(3, 3)).toBe(true);
  });
});
