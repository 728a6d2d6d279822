// A service instance that records into a RedisStreamSink and is stopped by SIGTERM
// with samples still buffered. argv: <redis url> <stream> <count>
import { Redis } from 'ioredis';
import { RedisStreamSink, flushOnShutdown } from '../../src/index.js';

const [url, stream, countText] = process.argv.slice(2) as [string, string, string];
const redis = new Redis(url);
const sink = new RedisStreamSink(redis, { stream, instance: 'terminated', flushIntervalMs: 60_000, rawSampleRate: 0 });
flushOnShutdown(sink);
const at = Date.UTC(2026, 10, 28, 10);
for (let i = 0; i < Number(countText); i++) {
  sink.record({ key: `order:lock:product:${i % 30}`, at: at + i, holdMs: 3, ttlMs: 5000, outcome: 'released' });
}
process.stdout.write('ready\n');
setInterval(() => undefined, 1000);
