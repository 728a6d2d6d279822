import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { loadTtlPolicy, withLock } from '../../src/index.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';
import { tempDir } from '../helpers/temp.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.disconnect());
const dir = tempDir();

describe('withLock with a policy file', () => {
  it('takes each lock with its pattern’s TTL and records under the policy’s pattern', async () => {
    // Letters only, so the heuristics keep it as part of the pattern.
    const run = randomUUID().replace(/[^a-f]/g, '').slice(0, 8);
    const path = join(dir, 'ttl-advisor.json');
    writeFileSync(
      path,
      JSON.stringify({ locks: { [`t${run}:order:lock:product:{productId}`]: { ttlMs: 7000 } }, defaultTtlMs: 4000 }),
    );
    const policy = loadTtlPolicy(path);
    const recorder = new MemoryRecorder();
    let pttl = 0;
    await withLock(redis, `t${run}:order:lock:product:42`, async () => void (pttl = await redis.pttl(`t${run}:order:lock:product:42`)), {
      policy,
      recorder,
    });
    expect(pttl).toBeGreaterThan(6000);
    expect(pttl).toBeLessThanOrEqual(7000);
    expect(recorder.samples[0]).toMatchObject({ ttlMs: 7000, pattern: `t${run}:order:lock:product:{productId}` });

    // A key the policy does not know gets its default.
    await withLock(redis, `t${run}:cart:lock:9`, async () => void (pttl = await redis.pttl(`t${run}:cart:lock:9`)), { policy, recorder });
    expect(pttl).toBeGreaterThan(3000);
    expect(pttl).toBeLessThanOrEqual(4000);
    expect(recorder.samples[1]).toMatchObject({ ttlMs: 4000 });
    // No entry names it: the recorder learns its pattern from the key.
    expect(recorder.samples[1]!.pattern).toBeUndefined();

    // An explicit ttlMs still wins.
    await withLock(redis, `t${run}:order:lock:product:43`, () => undefined, { policy, ttlMs: 1234, recorder });
    expect(recorder.samples[2]).toMatchObject({ ttlMs: 1234 });
  });

  it('a lease entry renews the lock (renewEveryMs or extendThresholdMs as autoExtend) and caps the hold (maxHoldMs)', async () => {
    const run = randomUUID().replace(/[^a-f]/g, '').slice(0, 8);
    const path = join(dir, 'leases.json');
    writeFileSync(
      path,
      JSON.stringify({
        locks: {
          [`t${run}:job:lock:{jobId}`]: { ttlMs: 300, renewEveryMs: 100, maxHoldMs: 5000 },
          [`t${run}:sync:lock:{name}`]: { ttlMs: 300, extendThresholdMs: 200 },
          [`t${run}:cap:lock:{name}`]: { ttlMs: 300, renewEveryMs: 100, maxHoldMs: 250 },
        },
      }),
    );
    const policy = loadTtlPolicy(path);
    const recorder = new MemoryRecorder();
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // Held for 700 ms, over twice its 300 ms TTL: kept by the entry's renewals.
    await withLock(redis, `t${run}:job:lock:7`, () => sleep(700), { policy, recorder });
    await withLock(redis, `t${run}:sync:lock:a`, () => sleep(700), { policy, recorder });
    const [job, sync] = recorder.samples;
    expect(job).toMatchObject({ outcome: 'released', ttlMs: 300 });
    expect(job!.renewal).toMatchObject({ periodMs: 100, library: 'ttl-advisor' });
    expect(job!.extensions).toBeGreaterThanOrEqual(4);
    // ttlMs − extendThresholdMs: renewed every 100 ms.
    expect(sync!.renewal).toMatchObject({ periodMs: 100 });
    expect(sync!.outcome).toBe('released');
    // A call's own options win over the entry's.
    await withLock(redis, `t${run}:job:lock:8`, () => sleep(10), { policy, recorder, autoExtend: false });
    expect(recorder.samples[2]!.renewal).toBeUndefined();
    // maxHoldMs 250: no renewal past it, so a 700 ms hold loses its 300 ms lock.
    const lost = await withLock(redis, `t${run}:cap:lock:b`, () => sleep(700), { policy, recorder, throwOnLockLost: false }).then(
      () => 'ok',
      (error: Error) => error.name,
    );
    expect(recorder.samples[3]!.outcome).toBe('expired');
    expect(['ok', 'LockLostError']).toContain(lost);
  });
});

