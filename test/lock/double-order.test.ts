import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { queryDb } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('../helpers/order-worker.ts', import.meta.url));
const url = inject('redisUrl');
const redis = new Redis(url);
afterAll(() => redis.disconnect());
const dir = tempDir();

const WORKERS = 4;
const CONCURRENCY = 25;
const STOCK = 50;

/** 4 service instances × 25 concurrent "create order" calls on a product with 50 in stock. */
async function sellOut(mode: 'locked' | 'unlocked') {
  const runId = randomUUID();
  const db = join(dir, `${mode}.db`);
  await redis.set(`incident:${runId}:stock`, STOCK);
  const outputs = await Promise.all(
    Array.from({ length: WORKERS }, () =>
      run(process.execPath, ['--import', 'tsx', worker, url, runId, String(CONCURRENCY), mode, db]),
    ),
  );
  const results = outputs.flatMap(({ stdout }) => JSON.parse(stdout) as string[]);
  return {
    db,
    results,
    orders: await redis.llen(`incident:${runId}:orders`),
    stock: Number(await redis.get(`incident:${runId}:stock`)),
    lowest: Number((await redis.get(`incident:${runId}:lowest`)) ?? STOCK),
  };
}

describe('the double-order incident', () => {
  it('under withLock: exactly 50 orders, stock ends at 0 and never goes negative', async () => {
    const { results, orders, stock, lowest, db } = await sellOut('locked');
    expect(results).toHaveLength(WORKERS * CONCURRENCY);
    expect(results.filter((r) => r === 'ordered')).toHaveLength(STOCK);
    expect(results.filter((r) => r === 'sold-out')).toHaveLength(WORKERS * CONCURRENCY - STOCK);
    expect(orders).toBe(STOCK);
    expect(stock).toBe(0);
    expect(lowest).toBe(0);
    // Every acquisition of every instance was recorded into the shared file.
    const [row] = queryDb<{ n: number; released: number; instances: number }>(
      db,
      "SELECT sum(count) n, sum(released) released, count(DISTINCT instance_id) instances FROM rollups",
    );
    expect(row).toEqual({ n: WORKERS * CONCURRENCY, released: WORKERS * CONCURRENCY, instances: WORKERS });
  });

  it('control: the same workload without the lock oversells', async () => {
    const { orders, lowest } = await sellOut('unlocked');
    expect(orders).toBeGreaterThan(STOCK);
    expect(lowest).toBeLessThan(0);
  });
});
