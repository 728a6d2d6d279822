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
    expect(recorder.samples[1]).toMatchObject({ ttlMs: 4000, pattern: `t${run}:cart:lock:{id}` });

    // An explicit ttlMs still wins.
    await withLock(redis, `t${run}:order:lock:product:43`, () => undefined, { policy, ttlMs: 1234, recorder });
    expect(recorder.samples[2]).toMatchObject({ ttlMs: 1234 });
  });
});
