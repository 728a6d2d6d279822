import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { built } from '../helpers/built.js';
import { CLIENT_KINDS, type ClientKind } from '../helpers/clients.js';
import { queryDb } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';


/** Starts one worker; resolves `ready` when it waits for the go signal, `done` with its results. */
function startWorker(args: string[]) {
  const proc = spawn(process.execPath, [worker, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  let onReady: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  proc.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes('ready\n')) onReady();
  });
  const done = new Promise<string[]>((resolve, reject) => {
    proc.once('exit', (code) => {
      const line = output.split('\n').find((l) => l.startsWith('results '));
      if (code !== 0 || !line) reject(new Error(`worker exited with ${code}: ${output}`));
      else resolve(JSON.parse(line.slice('results '.length)) as string[]);
    });
  });
  return { ready, done };
}
const worker = built('test/helpers/order-worker.ts');
const url = inject('redisUrl');
const redis = new Redis(url);
afterAll(() => redis.disconnect());
const dir = tempDir();

const WORKERS = 4;
const CONCURRENCY = 25;
const STOCK = 50;

/** 4 service instances × 25 concurrent "create order" calls on a product with 50 in stock. */
async function sellOut(mode: 'locked' | 'unlocked', kind: ClientKind = 'ioredis 5') {
  const runId = randomUUID();
  const db = join(dir, `${mode}-${kind.replace(/\W/g, '')}.db`);
  await redis.set(`incident:${runId}:stock`, STOCK);
  const workers = Array.from({ length: WORKERS }, () => startWorker([url, runId, String(CONCURRENCY), mode, db, kind]));
  await Promise.all(workers.map((w) => w.ready));
  await redis.rpush(`incident:${runId}:go`, ...workers.map(() => 'go'));
  const results = (await Promise.all(workers.map((w) => w.done))).flat();
  return {
    db,
    results,
    orders: await redis.llen(`incident:${runId}:orders`),
    stock: Number(await redis.get(`incident:${runId}:stock`)),
    lowest: Number((await redis.get(`incident:${runId}:lowest`)) ?? STOCK),
  };
}

describe('the double-order incident', () => {
  it.each(CLIENT_KINDS)('under withLock through %s: exactly 50 orders, stock ends at 0 and never goes negative', async (kind) => {
    const { results, orders, stock, lowest, db } = await sellOut('locked', kind);
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
