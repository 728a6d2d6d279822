import { readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

// A watcher in a process of its own, as `ttl-advisor watch` runs next to Redis: prints each
// sample's key and hold time as a JSON line, "ready" once subscribed, and on SIGTERM a last
// line `cpu {…}`: the CPU time it used since it was ready, the samples it recorded, its garbage
// collections, its main thread's CPU wait (schedstat), its counters.
// argv: <redis url> [module exporting KeyspaceWatcher; default the built package] [--quiet: count samples, print none]
const quiet = process.argv.includes('--quiet');
const [url, module] = process.argv.slice(2).filter((a) => a !== '--quiet');
const { KeyspaceWatcher } = await import(module ?? new URL('../../dist/index.js', import.meta.url).href);

const out = [];
let samples = 0;
const watcher = await KeyspaceWatcher.start({
  url,
  configure: true,
  recorder: {
    record: (s) => {
      samples++;
      if (!quiet) out.push(`${JSON.stringify([s.key, s.holdMs])}\n`);
    },
  },
  onNotice: (message) => out.push(`notice: ${message.replace(/\n/g, ' ')}\n`),
});
// Its garbage collections since it was ready: how many, the time they paused it, the longest pause.
const gc = { count: 0, ms: 0, maxMs: 0 };
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) [gc.count, gc.ms, gc.maxMs] = [gc.count + 1, gc.ms + entry.duration, Math.max(gc.maxMs, entry.duration)];
});
gcObserver.observe({ entryTypes: ['gc'] });
const flush = setInterval(() => out.length && process.stdout.write(out.splice(0).join('')), 100);
// The main thread's time on a CPU and waiting for one (ns), where Linux tells it.
const schedNs = () => {
  try {
    return readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
  } catch {
    return undefined;
  }
};
const sched0 = schedNs();
const cpu0 = process.cpuUsage();
process.stdout.write('ready\n');
process.once('SIGTERM', async () => {
  const cpu = process.cpuUsage(cpu0);
  const sched1 = schedNs();
  const sched = sched0 && sched1 && { runMs: (sched1[0] - sched0[0]) / 1e6, waitMs: (sched1[1] - sched0[1]) / 1e6 };
  const cpuLine = `cpu ${JSON.stringify({ userUs: cpu.user, sysUs: cpu.system, cpuUs: cpu.user + cpu.system, samples, gc, sched, heapUsedMB: Math.round(process.memoryUsage().heapUsed / 1e5) / 10, stats: watcher.stats() })}\n`;
  clearInterval(flush);
  await watcher.stop();
  process.stdout.write(out.join('') + cpuLine);
  process.stdout.write('done\n', () => process.exit(0));
});
