// One service instance of a fleet: takes locks for `durationMs`, recording into
// a RedisStreamSink, and survives Redis going away. Prints its counters as JSON.
// argv: <redis url> <instance> <durationMs>
import { Redis } from 'ioredis';
import { LockRedisError, RedisStreamSink, withLock } from '../../src/index.js';

const [url, instance, durationText] = process.argv.slice(2);
const redis = new Redis(url!, { maxRetriesPerRequest: 1 });
redis.on('error', () => undefined);
const sink = new RedisStreamSink(redis, { instance: instance!, flushIntervalMs: 100, rawSampleRate: 1, commandTimeoutMs: 500 });

const stopAt = Date.now() + Number(durationText);
let ok = 0;
let failed = 0;
let n = 0;
while (Date.now() < stopAt) {
  const key = `order:lock:product:${instance}-${n++ % 20}`;
  try {
    await withLock(redis, key, () => new Promise((r) => setTimeout(r, 1)), { ttlMs: 5000, recorder: sink, commandTimeoutMs: 300, acquireTimeoutMs: 600 });
    ok++;
  } catch (error) {
    if (!(error instanceof LockRedisError)) throw error;
    failed++;
    await new Promise((r) => setTimeout(r, 20));
  }
}
// Give Redis a moment if it just came back, then send what is left.
for (let i = 0; i < 20 && sink.stats().pending > 0; i++) await sink.flush();
const stats = await sink.close();
redis.disconnect();
process.stdout.write(JSON.stringify({ instance, ok, failed, ...stats }) + '\n');
