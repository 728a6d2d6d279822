import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { withLock, RedisLock } from '../../src/index.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';

// withLock with autoExtend is a lease: its samples carry how the renewals came (see RenewalTimings).
const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.disconnect());
const newKey = () => `test:lease:${randomUUID()}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Blocks this process's event loop for `ms`: what a long synchronous step or a GC pause does to a renewal timer. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('withLock with autoExtend records its renewals', () => {
  it('gaps near the interval, a late renewal as late as the event loop was blocked, margins and round trips', async () => {
    const recorder = new MemoryRecorder();
    await withLock(
      redis,
      newKey(),
      async () => {
        await sleep(900);
        // The renewal due now comes ~250 ms late: the loop is blocked.
        block(250);
        await sleep(700);
      },
      { ttlMs: 1500, autoExtend: 300, recorder },
    );
    const [sample] = recorder.samples;
    expect(sample!.outcome).toBe('released');
    const r = sample!.renewal!;
    expect(r.library).toBe('ttl-advisor');
    expect(r.periodMs).toBe(300);
    expect(r.gapsMs.length).toBe(sample!.extensions);
    expect(r.gapsMs.length).toBeGreaterThanOrEqual(4);
    // Every gap is at least the interval (a timer never fires early); the blocked one is late by about the block.
    for (const gap of r.gapsMs) expect(gap).toBeGreaterThanOrEqual(299);
    const late = Math.max(...r.gapsMs) - 300;
    expect(late).toBeGreaterThanOrEqual(150);
    expect(late).toBeLessThan(1000);
    // The loop monitor saw the block.
    expect(r.maxLoopDelayMs!).toBeGreaterThanOrEqual(200);
    // The margin at the late renewal: the TTL in force (1,500) minus that gap and its round trip.
    expect(r.minMarginMs).toBeGreaterThan(0);
    expect(r.minMarginMs).toBeLessThanOrEqual(1500 - Math.max(...r.gapsMs));
    expect(r.maxRoundTripMs!).toBeGreaterThanOrEqual(0);
    expect(r.maxRoundTripMs!).toBeLessThan(500);
  });

  it('a block longer than the TTL loses the lease: expired, no margin left', async () => {
    const recorder = new MemoryRecorder();
    const key = newKey();
    await withLock(
      redis,
      key,
      async () => {
        await sleep(50);
        block(700); // the renewal due at 100 ms cannot run; the 400 ms TTL runs out
        await sleep(20);
      },
      { ttlMs: 400, autoExtend: 100, recorder },
    ).catch(() => undefined);
    const [sample] = recorder.samples;
    expect(sample!.outcome).toBe('expired');
    expect(sample!.renewal!.minMarginMs).toBeLessThanOrEqual(0);
  });

  it('a lock never extended carries no renewal; manual extend() makes one without a period', async () => {
    const recorder = new MemoryRecorder();
    await withLock(redis, newKey(), () => sleep(10), { ttlMs: 1000, recorder });
    expect(recorder.samples[0]!.renewal).toBeUndefined();

    const lock = await RedisLock.acquire(redis, newKey(), { ttlMs: 1000, recorder });
    await sleep(100);
    await lock.extend();
    await sleep(100);
    await lock.extend(2000);
    await lock.release();
    const r = recorder.samples[1]!.renewal!;
    expect(r.periodMs).toBeUndefined();
    expect(r.maxLoopDelayMs).toBeUndefined();
    expect(r.gapsMs).toHaveLength(2);
    expect(r.gapsMs[0]!).toBeGreaterThanOrEqual(99);
    // The second renewal came ~100 ms after the first, with ~900 ms of its 1,000 left.
    expect(r.minMarginMs).toBeGreaterThan(500);
    expect(r.minMarginMs).toBeLessThan(1000);
  });
});
