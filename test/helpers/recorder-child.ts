// A separate process that records samples: used to test several writers on one
// file, and that SIGTERM does not lose buffered samples.
// argv: <db path> <instance> <count> <mode: close | wait-for-signal>
import { SqliteRecorder, flushOnShutdown } from '../../src/index.js';

const [path, instance, countText, mode] = process.argv.slice(2);
const count = Number(countText);
const recorder = new SqliteRecorder({ path: path!, instance: instance!, flushIntervalMs: 60_000, busyTimeoutMs: 1000, rawSampleRate: 1 });
flushOnShutdown(recorder);

const start = Date.now();
for (let i = 0; i < count; i++) {
  recorder.record({
    key: `order:lock:product:${i % 50}`,
    at: start + i,
    holdMs: 1 + (i % 100),
    waitMs: 0,
    ttlMs: 10_000,
    outcome: 'released',
  });
  // Spread over several event-loop turns, as a service would.
  if (i % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
}

if (mode === 'close') {
  const stats = await recorder.close();
  process.stdout.write(JSON.stringify(stats) + '\n');
} else {
  process.stdout.write('ready\n');
  setInterval(() => undefined, 1000);
}
