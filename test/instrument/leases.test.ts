import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import Redlock from 'redlock';
import { Mutex } from 'redis-semaphore';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { instrument, instrumentationOf, SqliteRecorder, type LockSample } from '../../src/index.js';
import { bullmqStalledKey, bullmqWarning } from '../../src/instrument/bullmq.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Renewed locks (leases) through an instrumented client: node-redlock 5's `using()`,
 * redis-semaphore's refresh and a hand-written PEXPIRE renewal carry `renewal` timings,
 * against a real redis-server. Bounds are wide: the expected figures come from each
 * library's schedule, and a loaded 2-core box makes timers late (never early).
 */

const url = inject('redisUrl');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Blocks this process's event loop for `ms`: what a long synchronous step or a GC pause does to a renewal timer. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}
const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const COMPARE_AND_DELETE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

const dir = tempDir('ttl-advisor-leases-');
const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

/** An instrumented ioredis client recording into memory and into a real SQLite file (which validates each sample). */
function setup(name: string, expiredGraceMs = 5000) {
  const memory = new MemoryRecorder();
  const sqlite = new SqliteRecorder({ path: join(dir, `${name}.db`) });
  const redis = instrument(new Redis(url), { recorder: [memory, sqlite], expiredGraceMs, retryWindowMs: 300 });
  closers.push(() => redis.disconnect(), () => sqlite.close());
  return { memory, sqlite, redis };
}

/** What every renewal record must satisfy, whichever library renewed. */
function expectConsistent(sample: LockSample) {
  const r = sample.renewal!;
  expect(r.gapsMs.length).toBe(sample.extensions);
  expect(r.maxRoundTripMs).toBeGreaterThanOrEqual(0);
  expect(r.maxLoopDelayMs).toBeUndefined(); // instrument cannot see the holder's event loop
  expect(r.periodMs).toBeUndefined(); // neither library's period can be read off its commands
  // The margin at each renewal is at most the TTL in force minus that renewal's gap.
  expect(r.minMarginMs).toBeLessThanOrEqual(sample.ttlMs - Math.max(...r.gapsMs) + 1);
}

describe('instrument() measures renewed locks', () => {
  it("node-redlock 5 using(): renewals every duration − threshold (~488 ms), library 'redlock', margin left, released", async () => {
    const { memory, sqlite, redis } = setup('redlock');
    const redlock = new Redlock([redis]); // automaticExtensionThreshold: 500 (its default)
    const key = `lease:r5:lock:${randomUUID()}`;
    let aborted = false;
    await redlock.using([key], 1000, async (signal) => {
      await sleep(3500);
      aborted = signal.aborted;
    });
    expect(aborted).toBe(false);
    const samples = memory.samples.filter((s) => s.key === key);
    expect(samples).toHaveLength(1);
    const [sample] = samples;
    expect(sample).toMatchObject({ outcome: 'released', ttlMs: 1000 });
    const r = sample!.renewal!;
    expect(r.library).toBe('redlock');
    expectConsistent(sample!);
    // using() renews when 500 ms of the 1,000 are left, less its 12 ms drift allowance: every ~488 ms.
    // 3.5 s of work: about 7 renewals; fewer only if timers were very late.
    expect(r.gapsMs.length).toBeGreaterThanOrEqual(4);
    expect(r.gapsMs.length).toBeLessThanOrEqual(8);
    // A timer never fires early, but a gap is measured from the command's send, and a script's first send
    // (EVALSHA → NOSCRIPT → EVAL) is one round trip late: ±100 ms for that; late by up to 400 ms on a loaded box.
    // using() times each renewal from when it began the one before, not from that one's send: a send that came
    // late (its process busy between) makes the next gap that much shorter (376 ms once, in CI's fresh clone).
    r.gapsMs.forEach((gap, i) => {
      const previousLate = i === 0 ? 0 : Math.max(0, r.gapsMs[i - 1]! - 488);
      expect(gap, `gaps ${r.gapsMs.join(', ')}`).toBeGreaterThanOrEqual(388 - previousLate);
      expect(gap).toBeLessThan(900);
    });
    expect(median(r.gapsMs)).toBeGreaterThanOrEqual(480);
    expect(median(r.gapsMs)).toBeLessThan(650);
    // ~500 ms were left at each renewal, less its round trip and lateness; never none.
    expect(r.minMarginMs).toBeGreaterThan(0);
    expect(r.maxRoundTripMs!).toBeLessThan(400);
    console.info(`redlock using(): gaps ${r.gapsMs.map((g) => g.toFixed(1)).join(', ')} ms; least margin ${r.minMarginMs.toFixed(1)} ms; slowest round trip ${r.maxRoundTripMs!.toFixed(2)} ms`);
    expect(memory.samples.filter((s) => s.outcome === 'expired')).toEqual([]);
    // The SQLite recorder took the sample (its validation refuses a malformed renewal).
    expect(await sqlite.flush()).toMatchObject({ recorded: 1, written: 1, dropped: 0 });
  });

  it("redis-semaphore Mutex with its default refresh (0.8 × lockTimeout): gaps ≈ refreshInterval, library 'redis-semaphore'", async () => {
    const { memory, sqlite, redis } = setup('semaphore');
    const name = `lease:sem:${randomUUID()}`;
    // lockTimeout 5,000: refreshes every 4,000 ms, leaving 1,000 ms for a late timer on a loaded box (300 ms with
    // lockTimeout 1,500, and 500 ms with 2,500, were not enough once each beside two CPU-bound processes: the library lost its mutex).
    const lockTimeout = 5000;
    const refresh = 0.8 * lockTimeout;
    const mutex = new Mutex(redis, name, { lockTimeout });
    await mutex.acquire();
    await sleep(2.5 * refresh);
    await mutex.release();
    const samples = memory.samples.filter((s) => s.key === `mutex:${name}`);
    expect(samples).toHaveLength(1);
    const [sample] = samples;
    expect(sample).toMatchObject({ outcome: 'released', ttlMs: lockTimeout });
    const r = sample!.renewal!;
    expect(r.library).toBe('redis-semaphore');
    expectConsistent(sample!);
    expect(r.gapsMs.length).toBeGreaterThanOrEqual(2);
    expect(r.gapsMs.length).toBeLessThanOrEqual(3);
    // setInterval(refresh): each refresh ~`refresh` ms after the one before (the first: after the acquire's reply);
    // ±100 ms for the refresh script's first send (EVALSHA → NOSCRIPT → EVAL, one round trip late).
    // Node times an interval's next run from the event loop's time when this run began, which is stale when
    // the process was busy (or waited for a CPU) before the callback ran: a refresh sent that much late makes
    // the next gap that much shorter (918 ms once, in CI's fresh clone). No refresh comes before its time,
    // though: the n-th is sent at least n × `refresh` ms after the acquire (less the loop clock's millisecond).
    // More than `lockTimeout` ms between two: the lock expired.
    let sinceAcquire = 0;
    r.gapsMs.forEach((gap, i) => {
      sinceAcquire += gap;
      expect(sinceAcquire, `gaps ${r.gapsMs.join(', ')}`).toBeGreaterThanOrEqual(refresh * (i + 1) - 5);
      expect(gap, `gaps ${r.gapsMs.join(', ')}`).toBeLessThan(lockTimeout);
    });
    expect(median(r.gapsMs)).toBeGreaterThanOrEqual(refresh - 50);
    expect(r.minMarginMs).toBeGreaterThan(0);
    expect(r.minMarginMs).toBeLessThanOrEqual(lockTimeout - refresh + 10);
    console.info(`redis-semaphore refresh: gaps ${r.gapsMs.map((g) => g.toFixed(1)).join(', ')} ms; least margin ${r.minMarginMs.toFixed(1)} ms; slowest round trip ${r.maxRoundTripMs!.toFixed(2)} ms`);
    expect(await sqlite.flush()).toMatchObject({ recorded: 1, written: 1, dropped: 0 });
  });

  it("a hand-written PEXPIRE renewal: gaps as sent, library 'unknown'; a stall longer than the TTL expires it with no margin", async () => {
    const { memory, sqlite, redis } = setup('pexpire');
    const key = `lease:hw:lock:${randomUUID()}`;
    const token = randomUUID();
    expect(await redis.set(key, token, 'PX', 400, 'NX')).toBe('OK');
    const renew = () => redis.pexpire(key, 400).catch(() => 0);
    const timer = setInterval(renew, 100);
    await sleep(250); // two renewals, 100 ms apart
    block(700); // the renewal due meanwhile cannot be sent; the 400 ms TTL runs out
    await sleep(150); // the late renewal finds the key gone (PEXPIRE answers 0): not a renewal
    clearInterval(timer);
    expect(await redis.eval(COMPARE_AND_DELETE, 1, key, token)).toBe(0);
    const samples = memory.samples.filter((s) => s.key === key);
    expect(samples).toHaveLength(1);
    const [sample] = samples;
    expect(sample!.outcome).toBe('expired');
    const r = sample!.renewal!;
    expect(r.library).toBe('unknown');
    expect(r.gapsMs.length).toBe(sample!.extensions);
    expect(r.gapsMs.length).toBeGreaterThanOrEqual(1);
    for (const gap of r.gapsMs) expect(gap).toBeGreaterThanOrEqual(95);
    // The lock ran out before the renewal that the stall held back: no margin left, by about the stall.
    expect(r.minMarginMs).toBeLessThanOrEqual(0);
    expect(r.minMarginMs).toBeGreaterThan(-2000);
    console.info(`PEXPIRE lease, stalled 700 ms: gaps ${r.gapsMs.map((g) => g.toFixed(1)).join(', ')} ms; least margin ${r.minMarginMs.toFixed(1)} ms`);

    // Control: the same lock, renewed and released in time, has margin left; one never renewed carries no renewal.
    const other = `lease:hw:lock:${randomUUID()}`;
    expect(await redis.set(other, token, 'PX', 400, 'NX')).toBe('OK');
    await sleep(100);
    expect(await redis.pexpire(other, 400)).toBe(1);
    await sleep(100);
    expect(await redis.eval(COMPARE_AND_DELETE, 1, other, token)).toBe(1);
    const plain = `lease:hw:lock:${randomUUID()}`;
    expect(await redis.set(plain, token, 'PX', 400, 'NX')).toBe('OK');
    expect(await redis.eval(COMPARE_AND_DELETE, 1, plain, token)).toBe(1);
    const [renewed] = memory.samples.filter((s) => s.key === other);
    expect(renewed).toMatchObject({ outcome: 'released', extensions: 1 });
    expect(renewed!.renewal!.minMarginMs).toBeGreaterThan(0);
    expect(renewed!.renewal!.gapsMs).toHaveLength(1);
    expect(renewed!.renewal!.gapsMs[0]).toBeGreaterThanOrEqual(95);
    const [unrenewed] = memory.samples.filter((s) => s.key === plain);
    expect(unrenewed).toMatchObject({ outcome: 'released', extensions: 0 });
    expect(unrenewed!.renewal).toBeUndefined();
    expect(await sqlite.flush()).toMatchObject({ recorded: 3, written: 3, dropped: 0 });
  });

  it('a renewed lock never released is expired and censored once its TTL ran out, with no margin left', async () => {
    const { memory, redis } = setup('censored', 300);
    // Connected first: an acquire sent while the client connects waits in its offline queue, stamped when queued, and
    // the margin, a lower bound from that stamp, read −409 ms once beside two CPU-bound processes (the connect took ~550 ms).
    await redis.ping();
    const key = `lease:gone:lock:${randomUUID()}`;
    expect(await redis.set(key, 'crashed', 'PX', 200, 'NX')).toBe('OK');
    await sleep(50);
    expect(await redis.pexpire(key, 200)).toBe(1);
    // …and the holder "crashes". A token-checked release on the pattern makes it a lock.
    const released = `lease:gone:lock:${randomUUID()}`;
    expect(await redis.set(released, 'x', 'PX', 200, 'NX')).toBe('OK');
    expect(await redis.eval(COMPARE_AND_DELETE, 1, released, 'x')).toBe(1);
    await expect.poll(() => memory.samples.find((s) => s.key === key), { timeout: 5000, interval: 50 }).toBeDefined();
    const sample = memory.samples.find((s) => s.key === key)!;
    expect(sample).toMatchObject({ outcome: 'expired', censored: true, extensions: 1 });
    expect(sample.renewal).toMatchObject({ library: 'unknown', minMarginMs: 0 });
    expect(sample.renewal!.gapsMs).toHaveLength(1);
  });
});

describe('node-redlock over three Redis servers', () => {
  it('counts each renewal round once, not once per server that answered it', async () => {
    const servers = [await startRedisServer(), await startRedisServer()];
    const memory = new MemoryRecorder();
    const clients = [url, ...servers.map((s) => s.url)].map((u) => instrument(new Redis(u), { recorder: memory }));
    try {
      const key = `lease:quorum:lock:${randomUUID()}`;
      await new Redlock(clients).using([key], 1000, () => sleep(1300));
      const samples = memory.samples.filter((s) => s.key === key);
      expect(samples).toHaveLength(1);
      const [sample] = samples;
      expect(sample!.outcome).toBe('released');
      // Renewals at ~488 and ~976 ms, each sent to three servers: two rounds, not six replies.
      expect(sample!.extensions).toBeGreaterThanOrEqual(1);
      expect(sample!.extensions).toBeLessThanOrEqual(3);
      expect(sample!.renewal!.gapsMs).toHaveLength(sample!.extensions!);
      for (const gap of sample!.renewal!.gapsMs) expect(gap).toBeGreaterThanOrEqual(388); // no ~0 ms gap of a second server's reply
      expect(sample!.renewal!.library).toBe('redlock');
    } finally {
      instrumentationOf(clients[0]!)?.close();
      for (const client of clients) client.disconnect();
      for (const server of servers) await server.stop();
    }
  });
});

describe('BullMQ on an instrumented connection', () => {
  it('says once, as a warning, that its job locks are measured by `ttl-advisor watch`; nothing is thrown or recorded', async () => {
    const { Queue, Worker } = await import('bullmq');
    const recorder = new MemoryRecorder();
    const warnings: { kind: string; message: string }[] = [];
    // BullMQ takes an ioredis instance as `connection` (a Worker's must have maxRetriesPerRequest: null).
    const connection = instrument(new Redis(url, { maxRetriesPerRequest: null }), { recorder, onWarning: (w) => warnings.push(w) });
    const name = `tta-${randomUUID().slice(0, 8)}`;
    const queue = new Queue(name, { connection });
    // lockDuration 1,000: a job of 1.3 s has its lock renewed (every 500 ms) inside BullMQ's extendLocks script.
    const worker = new Worker(name, async (job) => sleep(job.data.ms as number), { connection, lockDuration: 1000, concurrency: 2 });
    const failures: unknown[] = [];
    worker.on('failed', (_job, error) => failures.push(error));
    worker.on('error', (error) => failures.push(error));
    try {
      const done = new Promise<void>((resolve) => {
        let completed = 0;
        worker.on('completed', () => ++completed === 4 && resolve());
      });
      await queue.addBulk([1300, 50, 50, 50].map((ms) => ({ name: 'job', data: { ms } })));
      await done;
    } finally {
      await worker.close();
      await queue.close();
      instrumentationOf(connection)?.close();
      connection.disconnect();
    }
    expect(failures).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.kind).toBe('bullmq-scripts');
    expect(warnings[0]!.message).toContain(`bull:${name}:`);
    expect(warnings[0]!.message).toContain("ttl-advisor watch --match 'bull:*:lock'");
    console.info(`BullMQ warning: ${warnings[0]!.message}`);
    // BullMQ's job locks are not recorded as anything (and no plain command of BullMQ's looked like a lock).
    expect(recorder.samples).toEqual([]);
  });

  it('without onWarning, one process warning (TTL_ADVISOR_BULLMQ_SCRIPTS)', async () => {
    const seen: Error[] = [];
    const listener = (w: Error) => (w as Error & { code?: string }).code === 'TTL_ADVISOR_BULLMQ_SCRIPTS' && seen.push(w);
    process.on('warning', listener);
    const redis = instrument(new Redis(url), { recorder: new MemoryRecorder() });
    try {
      // extendLocks' call, as BullMQ sends it (by SHA1: the body is not needed), twice.
      for (let i = 0; i < 2; i++) await redis.evalsha('0'.repeat(40), 1, 'myq:jobs:stalled', 'myq:jobs:', 'x').catch(() => undefined);
      await sleep(20);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.message).toContain("--match 'myq:*:lock'");
    } finally {
      process.off('warning', listener);
      instrumentationOf(redis)?.close();
      redis.disconnect();
    }
  });

  it("recognizes BullMQ's scripts by their keys on the queue's stem, not by a lone `…:stalled` key", () => {
    // moveToActive: its keys share `bull:q:` and ARGV[1] is that stem; extendLock: the job's lock key and the stalled set.
    // Its keys as the reader hands them over: the first, then the others (or undefined for one key).
    const stalledKey = (keys: string[], argv: string[]) => bullmqStalledKey(keys[0]!, keys.length > 1 ? keys.slice(1) : undefined, argv);
    expect(stalledKey(['bull:q:wait', 'bull:q:active', 'bull:q:prioritized', 'bull:q:events', 'bull:q:stalled'], ['bull:q:', '1'])).toBe('bull:q:stalled');
    expect(stalledKey(['bull:q:7:lock', 'bull:q:stalled'], ['token', '30000', '7'])).toBe('bull:q:stalled');
    expect(stalledKey(['bull:q:stalled', 'bull:q:7:lock'], ['token', '30000', '7'])).toBe('bull:q:stalled');
    expect(stalledKey(['{bull}:q:stalled'], ['{bull}:q:', 'tokens', 'ids', '30000'])).toBe('{bull}:q:stalled');
    // ARGV read from an offset, as the reader passes it (after the script, the key count and the keys).
    expect(bullmqStalledKey('bull:q:stalled', undefined, ['sha', 1, 'bull:q:stalled', 'bull:q:'], 3)).toBe('bull:q:stalled');
    expect(bullmqStalledKey('bull:q:stalled', undefined, ['sha', 1, 'bull:q:', 'x'], 3)).toBeUndefined();
    // Control: an application's own keys.
    expect(stalledKey(['app:stalled'], ['app:'])).toBeUndefined();
    expect(stalledKey(['app:jobs:stalled'], ['token', '500'])).toBeUndefined();
    expect(stalledKey(['app:jobs:stalled', 'other:thing'], ['token'])).toBeUndefined();
    expect(bullmqWarning('{bull}:q:stalled')).toContain("--match '{bull}:*:lock'");
    expect(bullmqWarning('jobs[1]:q:stalled')).toContain("--match 'jobs\\[1\\]:*:lock'");
  });
});
