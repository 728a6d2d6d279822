// A watcher in a process of its own, as `ttl-advisor watch` runs next to Redis: prints each
// sample's key and hold time as a JSON line, and "ready" once subscribed. argv: <redis url>
import { KeyspaceWatcher } from '../../dist/index.js';

const out = [];
const watcher = await KeyspaceWatcher.start({
  url: process.argv[2],
  configure: true,
  recorder: { record: (s) => out.push(`${JSON.stringify([s.key, s.holdMs])}\n`) },
  onNotice: (message) => out.push(`notice: ${message.replace(/\n/g, ' ')}\n`),
});
const flush = setInterval(() => out.length && process.stdout.write(out.splice(0).join('')), 100);
process.stdout.write('ready\n');
process.once('SIGTERM', async () => {
  clearInterval(flush);
  await watcher.stop();
  process.stdout.write(out.join(''));
  process.stdout.write('done\n', () => process.exit(0));
});
