// A service whose recorder has an `async record()` that rejects, taking locks
// through one door; run in a process of its own, with Node's default
// `--unhandled-rejections=throw`, so that an unhandled rejection ends it as it
// would end the host.
// argv: <door: withLock | instrument | bare> <client: ioredis | node-redis> <redis url>
//   bare: the control — the same recorder called as a door without the guard calls it.
// Prints one JSON line: what the locks returned, the failures counted, the warnings said.
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import Redlock from 'redlock';
import { instrument, instrumentationOf, withLock, type LockClient, type LockSample } from '../../src/index.js';
import { recorderFailures } from '../../src/sample/safe-recorder.js';

const [door, clientKind, url] = process.argv.slice(2) as ['withLock' | 'instrument' | 'bare', 'ioredis' | 'node-redis', string];

const calls: LockSample[] = [];
const recorder = {
  async record(sample: LockSample): Promise<void> {
    calls.push(sample);
    await new Promise((resolve) => setTimeout(resolve, 5)); // as a recorder writing somewhere would
    throw new Error('the metrics backend is down');
  },
};
const warnings: string[] = [];
process.on('warning', (warning) => warnings.push(`${(warning as { code?: string }).code}: ${warning.message}`));

const ns = `rejecting-${door}-${clientKind}-${process.pid}`;
const results: unknown[] = [];
let close: () => Promise<unknown>;
let client: LockClient;
if (clientKind === 'ioredis') {
  const redis = new Redis(url);
  client = redis;
  close = async () => redis.disconnect();
} else {
  const redis = createClient({ url });
  await redis.connect();
  client = redis;
  close = () => redis.close();
}

if (door === 'withLock') {
  for (let i = 0; i < 3; i++) results.push(await withLock(client, `${ns}:lock:${i}`, async () => `section ${i} done`, { ttlMs: 2000, recorder }));
} else if (door === 'instrument') {
  instrument(client as object, { recorder });
  if (clientKind === 'ioredis') {
    // node-redlock, as a service has it
    const redlock = new Redlock([client as Redis], { retryCount: 0 });
    for (let i = 0; i < 3; i++) results.push(await redlock.using([`${ns}:lock:${i}`], 2000, async () => `section ${i} done`));
  } else {
    // a hand-written lock: SET NX PX, then a token-checked release
    const redis = client as ReturnType<typeof createClient>;
    const release = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
    for (let i = 0; i < 3; i++) {
      const key = `${ns}:lock:${i}`;
      results.push(await redis.set(key, `token-${i}`, { NX: true, PX: 2000 }));
      results.push(await redis.eval(release, { keys: [key], arguments: [`token-${i}`] }));
    }
  }
} else {
  // The control: a door that hands the sample to record() and ignores what it returns.
  for (let i = 0; i < 3; i++) {
    void recorder.record({ key: `${ns}:lock:${i}`, at: Date.now(), holdMs: 1, waitMs: 0, ttlMs: 2000, outcome: 'released' });
    results.push(`section ${i} done`);
  }
}

// Long enough for every rejection to have happened, and to have been reported were it unhandled.
await new Promise((resolve) => setTimeout(resolve, 200));
const stats = door === 'instrument' ? instrumentationOf(client as object)!.stats() : undefined;
await close();
process.stdout.write(`${JSON.stringify({ results, recordCalls: calls.length, failures: recorderFailures(recorder), warnings, recorded: stats?.recorded })}\n`);
