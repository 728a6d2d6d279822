// A watcher in a process of its own, as `ttl-advisor watch` runs next to Redis: prints each
// sample's key and hold time as a JSON line, "ready" once subscribed, and on SIGTERM a last
// line `cpu {…}`: the CPU time it used since it was ready, the samples it recorded, its counters.
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
const flush = setInterval(() => out.length && process.stdout.write(out.splice(0).join('')), 100);
const cpu0 = process.cpuUsage();
process.stdout.write('ready\n');
process.once('SIGTERM', async () => {
  const cpu = process.cpuUsage(cpu0);
  const cpuLine = `cpu ${JSON.stringify({ cpuUs: cpu.user + cpu.system, samples, stats: watcher.stats() })}\n`;
  clearInterval(flush);
  await watcher.stop();
  process.stdout.write(out.join('') + cpuLine);
  process.stdout.write('done\n', () => process.exit(0));
});
