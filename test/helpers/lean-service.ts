// A service that only locks and records, as a user would write it: imports the
// package root, takes locks with one recorder, then reports what the process
// loaded. argv: sqlite|sink|otel <redis url> <db path> (otel: SQLite and OpenTelemetry both)
import { createRequire } from 'node:module';
import { Redis } from 'ioredis';
import { OtelRecorder, RedisStreamSink, SqliteRecorder, withLock } from '../../src/index.js';

const [mode, url, path] = process.argv.slice(2) as ['sqlite' | 'sink' | 'otel', string, string];
const redis = new Redis(url);
const recorder = mode === 'sink' ? new RedisStreamSink(redis, { flushIntervalMs: 50 }) : new SqliteRecorder({ path });
const recorders = mode === 'otel' ? [recorder, new OtelRecorder()] : recorder;
for (let i = 0; i < 20; i++) {
  await withLock(redis, `order:lock:product:${i % 3}`, async () => undefined, { ttlMs: 2000, recorder: recorders });
}
const stats = await recorder.close();
await redis.quit();
const report = process.report.getReport() as unknown as { sharedObjects: string[] };
process.stdout.write(
  JSON.stringify({
    written: stats.written,
    sharedObjects: report.sharedObjects,
    commonJs: Object.keys(createRequire(import.meta.url).cache),
  }),
);
