// One service instance with node-redlock 5 on an instrumented ioredis client:
// `locks` using() calls spread over 5 keys, with `concurrency` in flight at once,
// recorded into a shared SQLite file. Prints how many it ran.
// argv: <redis url> <run id> <locks> <concurrency> <samples db>
import { Redis } from 'ioredis';
import Redlock from 'redlock';
import { SqliteRecorder, instrument, instrumentationOf } from '../../src/index.js';

const [url, runId, locksText, concurrencyText, dbPath] = process.argv.slice(2);
const recorder = new SqliteRecorder({ path: dbPath!, busyTimeoutMs: 2000, instance: `worker-${process.pid}` });
const redis = instrument(new Redis(url!), { recorder });
const redlock = new Redlock([redis], { retryCount: -1, retryDelay: 10, retryJitter: 10 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

process.stdout.write('ready\n');
await redis.duplicate().brpop(`contention:${runId}:go`, 30);

let next = 0;
let ran = 0;
const total = Number(locksText);
await Promise.all(
  Array.from({ length: Number(concurrencyText) }, async () => {
    while (next < total) {
      const key = `stock:lock:item:${runId}-${next++ % 5}`;
      await redlock.using([key], 2000, async () => sleep(1 + Math.random() * 4));
      ran++;
    }
  }),
);
const stats = instrumentationOf(redis)!.stats();
await recorder.close();
process.stdout.write(`results ${JSON.stringify({ ran, stats })}\n`);
redis.disconnect();
process.exit(0);
