// One service instance of the double-order incident: runs `concurrency` "create order"
// calls at once against the shared stock in Redis, with or without the lock.
// The lock goes through the client kind given; the shop's own commands through ioredis.
// argv: <redis url> <run id> <concurrency> <locked|unlocked> <samples db> <client kind>
import { Redis } from 'ioredis';
import { LockNotAcquiredError, SqliteRecorder, withLock } from '../../src/index.js';
import { connectClient, type ClientKind } from './clients.js';

const [url, runId, concurrencyText, mode, dbPath, kind] = process.argv.slice(2);
const redis = new Redis(url!);
const lockConnection = await connectClient((kind ?? 'ioredis 5') as ClientKind, url!);
const recorder = new SqliteRecorder({ path: dbPath!, busyTimeoutMs: 1000 });
const stockKey = `incident:${runId}:stock`;
const ordersKey = `incident:${runId}:orders`;
const lowestKey = `incident:${runId}:lowest`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Read stock, check it, pay (slow), decrement, create the order: a race without a lock. */
async function createOrder(customer: string): Promise<'ordered' | 'sold-out'> {
  const stock = Number(await redis.get(stockKey));
  if (stock <= 0) return 'sold-out';
  // Paying takes a while: long enough that every instance reads the stock before anyone decrements it.
  await sleep(40 + Math.random() * 40);
  const left = await redis.decr(stockKey);
  await redis.eval("if tonumber(redis.call('get', KEYS[1]) or '1e18') > tonumber(ARGV[1]) then redis.call('set', KEYS[1], ARGV[1]) end", 1, lowestKey, left);
  await redis.rpush(ordersKey, customer);
  return 'ordered';
}

// Start together with the other instances, as a load balancer's traffic would arrive.
process.stdout.write('ready\n');
await redis.brpop(`incident:${runId}:go`, 30);

const results = await Promise.all(
  Array.from({ length: Number(concurrencyText) }, async (_, i) => {
    const customer = `${process.pid}-${i}`;
    if (mode === 'unlocked') return createOrder(customer);
    try {
      return await withLock(lockConnection.client, `order:lock:product:${runId}`, () => createOrder(customer), {
        ttlMs: 5_000,
        recorder,
        retry: { count: 1000, delayMs: 20, jitterMs: 20 },
        acquireTimeoutMs: 60_000,
      });
    } catch (error) {
      if (error instanceof LockNotAcquiredError) return 'not-acquired';
      throw error;
    }
  }),
);
await recorder.close();
redis.disconnect();
await lockConnection.close();
process.stdout.write('results ' + JSON.stringify(results) + '\n');
