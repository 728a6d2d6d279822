import { KeyspaceWatcher } from '../../src/index.js';

/**
 * A `--configure` watcher with a short lease, for the test that kills it
 * (test/watch/notification-settings.test.ts): argv is the URL and the lease in ms.
 */
const [url, leaseMs] = process.argv.slice(2);
await KeyspaceWatcher.start({ url: url!, recorder: { record: () => undefined }, configure: true, configureLeaseMs: Number(leaseMs) });
process.stdout.write('watching\n');
setInterval(() => undefined, 1 << 30);
