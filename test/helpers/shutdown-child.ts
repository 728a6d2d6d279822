// A service process for the recorder's shutdown and warning behaviour.
// argv: <db path> <mode>
// - drain: 1,000 locks recorded, then on SIGTERM the application's own handler drains:
//   500 more locks finish over ~300 ms, then it exits. Prints `ready` once listening.
// - unwritable: records into a path that cannot be a database, with nobody listening for warnings.
// - unwritable-listened: the same, with an onWarning callback that stays quiet.
import { SqliteRecorder, flushOnShutdown, type LockSample } from '../../src/index.js';

const [path, mode] = process.argv.slice(2) as [string, string];
const sample = (i: number): LockSample => ({ key: `order:lock:product:${i % 20}`, at: Date.now(), holdMs: 2, ttlMs: 5000, outcome: 'released' });

if (mode === 'drain') {
  const recorder = new SqliteRecorder({ path, instance: 'draining', flushIntervalMs: 50 });
  flushOnShutdown(recorder);
  for (let i = 0; i < 1000; i++) recorder.record(sample(i));
  process.once('SIGTERM', () => {
    let finished = 0;
    const timer = setInterval(() => {
      for (let i = 0; i < 50; i++) recorder.record(sample(finished++));
      if (finished >= 500) {
        clearInterval(timer);
        process.exit(0);
      }
    }, 30);
  });
  setInterval(() => undefined, 1000);
  process.stdout.write('ready\n');
} else {
  const recorder = new SqliteRecorder({
    path,
    flushIntervalMs: 20,
    ...(mode === 'unwritable-listened' && { onWarning: () => undefined }),
  });
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 10; i++) recorder.record(sample(i));
    await recorder.flush();
  }
  const stats = await recorder.close();
  process.stdout.write(JSON.stringify(stats) + '\n');
}
