import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { KeyspaceWatcher } from '../../src/index.js';
import { openForWriting } from '../../src/store/schema.js';
import { SCHEMA_VERSION } from '../../src/store/format.js';
import { built } from '../helpers/built.js';
import { runCli } from '../helpers/cli.js';
import { MemoryRecorder } from '../helpers/memory-recorder.js';
import { useOwnRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Issue 22, watch: keys that are not UTF-8 (item 4), a --db that cannot be
 * recorded into (item 12), and options that cannot be right (item 15).
 */

const cli = built('src/cli/main.ts');
const dir = tempDir();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let server: RedisServer;
let redis: Redis;

useOwnRedisServer(async (s, client) => {
  [server, redis] = [s, client];
  await redis.config('SET', 'notify-keyspace-events', 'KA');
});

/** `ttl-advisor watch …` that must refuse at once: its exit code and its stderr lines. */
async function refused(...args: string[]): Promise<{ code: number; lines: string[] }> {
  const { code, stderr } = await runCli(['watch', '--redis', server.url, ...args]);
  return { code, lines: stderr.trim().split('\n') };
}

describe('watch: keys that are not valid UTF-8', () => {
  it('item 4: a key holding 0xff is recorded, PTTL read with its exact bytes; two keys that decode alike stay two', async () => {
    const a = Buffer.concat([Buffer.from('bin:lock:'), Buffer.from([0xff, 0x01])]);
    const b = Buffer.concat([Buffer.from('bin:lock:'), Buffer.from([0xfe, 0x01])]);
    expect(a.toString('utf8')).toBe(b.toString('utf8')); // both 'bin:lock:\ufffd\u0001'
    const recorder = new MemoryRecorder();
    const watcher = await KeyspaceWatcher.start({ url: server.url, recorder, match: 'bin:lock:*' });
    try {
      await redis.set(a, 'x', 'PX', 5000, 'NX');
      await redis.set(b, 'y', 'PX', 7000, 'NX');
      // Control: the name decoded and encoded again is another key, which has no TTL to read.
      expect(await redis.pttl(Buffer.from(a.toString('utf8')))).toBe(-2);
      expect(await redis.pttl(a)).toBeGreaterThan(4000);
      await sleep(30);
      await redis.del(a);
      await sleep(30);
      await redis.del(b);
      await sleep(100);
    } finally {
      await watcher.stop();
    }
    const samples = recorder.samples.map((s) => ({ key: s.key, outcome: s.outcome, extensions: s.extensions }));
    expect(samples).toEqual([
      { key: 'bin:lock:\ufffd\u0001', outcome: 'released', extensions: 0 },
      { key: 'bin:lock:\ufffd\u0001', outcome: 'released', extensions: 0 },
    ]);
    // Each key's own TTL, read by its exact bytes (a loaded host reads it a little late: 6,980 of 7,000 at load 13).
    const ttls = recorder.samples.map((s) => s.ttlMs!);
    expect(ttls[0]).toBeGreaterThan(4900);
    expect(ttls[0]).toBeLessThanOrEqual(5000);
    expect(ttls[1]).toBeGreaterThan(6900);
    expect(ttls[1]).toBeLessThanOrEqual(7000);
    expect(recorder.samples[0]!.holdMs).toBeGreaterThanOrEqual(25);
    expect(recorder.samples[1]!.holdMs).toBeGreaterThanOrEqual(55);
    expect(watcher.stats()).toMatchObject({ unknownTtl: 0, notLocks: 0, open: 0 });
  });
});

describe('watch: --db checked before anything is subscribed', () => {
  it('item 12: a directory, a text file, a newer database, a missing folder: one line, exit 2, Redis untouched', async () => {
    writeFileSync(join(dir, 'notes.txt'), 'not a database\n');
    const newer = join(dir, 'newer.db');
    openForWriting(newer, 1000).close();
    const db = openForWriting(newer, 1000);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    await redis.config('SET', 'notify-keyspace-events', 'xE');
    const cases: [string, RegExp][] = [
      [dir, /^ttl-advisor: .* is a directory, not a samples database$/],
      [join(dir, 'notes.txt'), /^ttl-advisor: .*notes\.txt.* not a .*database/],
      [newer, /^ttl-advisor: .*newer\.db has schema version \d+, newer than this ttl-advisor understands/],
      [join(dir, 'no-such-folder', 'x.db'), /^ttl-advisor: Cannot create .*x\.db: no folder .*no-such-folder$/],
      ['', /^ttl-advisor: Expected --db to be a file path, got ""$/],
    ];
    for (const [path, expected] of cases) {
      // --configure would change the server's setting were the file checked after subscribing.
      const { code, lines } = await refused('--db', path, '--configure');
      expect(code).toBe(2);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(expected);
    }
    expect(((await redis.config('GET', 'notify-keyspace-events')) as string[])[1]).toBe('xE');
    expect(await redis.pubsub('NUMPAT')).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['newer.db', 'notes.txt']);
    // Control: a writable new file passes the check; with the notifications off, the Redis refusal is what stops it.
    const fine = await refused('--db', join(dir, 'fine.db'));
    expect(fine.code).toBe(2);
    expect(fine.lines.at(-1)).toMatch(/Keyspace notifications on .* lack Kg\$/);
    await redis.config('SET', 'notify-keyspace-events', 'KA');
  });

  it('item 12: a read-only file and a read-only folder are refused, and no -wal or -shm is left beside them', () => {
    const ro = join(dir, 'ro');
    mkdirSync(ro);
    openForWriting(join(ro, 'samples.db'), 1000).close();
    chmodSync(join(ro, 'samples.db'), 0o444);
    chmodSync(ro, 0o777);
    const roFolder = join(dir, 'ro-folder');
    mkdirSync(roFolder, { mode: 0o555 });
    chmodSync(dir, 0o755);
    // Root writes whatever the mode bits say: the CLI runs as nobody there, who must be able to reach the CLI
    // and its node_modules (a clone in a private folder, `mktemp -d` or root's home, lets nobody through).
    const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    if (process.getuid?.() === 0) letNobodyThrough(cli);
    const run = (db: string) =>
      spawnSync(process.execPath, [cli, 'watch', '--redis', server.url, '--db', db], { encoding: 'utf8', env: { ...process.env, HOME: dir }, timeout: 30_000, ...asUser });
    const file = run(join(ro, 'samples.db'));
    expect(file.status, file.stderr).toBe(2);
    expect(file.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^ttl-advisor: Cannot record into .*samples\.db: attempt to write a readonly database$/)]);
    expect(readdirSync(ro)).toEqual(['samples.db']);
    const folder = run(join(roFolder, 'new.db'));
    expect(folder.status, folder.stderr).toBe(2);
    expect(folder.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^ttl-advisor: Cannot create .*new\.db: .*ro-folder is not writable \(EACCES\)$/)]);
    // Control: the same user records into a file it may write.
    chmodSync(join(ro, 'samples.db'), 0o666);
    const writable = spawnSync(process.execPath, [cli, 'watch', '--redis', 'redis://127.0.0.1:1', '--db', join(ro, 'samples.db')], {
      encoding: 'utf8',
      env: { ...process.env, HOME: dir },
      timeout: 30_000,
      ...asUser,
    });
    expect(writable.stderr).toMatch(/Cannot connect to Redis at 127\.0\.0\.1:1/);
  });
});

/**
 * Lets others traverse (not list) every folder above `path` that refuses them, until the test ends:
 * what a clone in a private folder needs for a process run as nobody to load the CLI.
 */
function letNobodyThrough(path: string): void {
  const changed: [string, number][] = [];
  for (let at = dirname(path); ; at = dirname(at)) {
    const mode = statSync(at).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      chmodSync(at, mode | 0o001);
      changed.push([at, mode]);
    }
    if (dirname(at) === at) break;
  }
  onTestFinished(() => {
    for (const [at, mode] of changed.reverse()) chmodSync(at, mode);
  });
}

describe('watch: options that cannot be right', () => {
  it('item 15: empty --match and --instance, and --db-index negative, fractional, empty or beyond 2^31: one line, exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['--match', ''], /^ttl-advisor: Expected --match to be a Redis glob such as \*lock\*, got ""$/],
      [['--instance', ''], /^ttl-advisor: Expected --instance to be a name, got ""$/],
      [['--instance', '  '], /^ttl-advisor: Expected --instance to be a name, got " {2}"$/],
      [['--stream', ''], /^ttl-advisor: Expected --stream to be a stream key, got ""$/],
      [['--db-index', '-1'], /^ttl-advisor: Expected --db-index to be a database number, got "-1"$/],
      [['--db-index', '1.5'], /^ttl-advisor: Expected --db-index to be a database number, got "1\.5"$/],
      [['--db-index', ''], /^ttl-advisor: Expected --db-index to be a database number, got ""$/],
      [['--db-index', '1e3'], /^ttl-advisor: Expected --db-index to be a database number, got "1e3"$/],
      [['--db-index', '2147483648'], /^ttl-advisor: Expected --db-index to be a database number from 0 to 2147483647, got "2147483648"$/],
      [['--db-index', '99999999999999999999'], /^ttl-advisor: Expected --db-index to be a database number from 0 to 2147483647, got "99999999999999999999"$/],
    ];
    for (const [args, expected] of cases) {
      const { code, lines } = await refused('--db', join(dir, 'options.db'), ...args);
      expect(code, args.join(' ')).toBe(2);
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0]).toMatch(expected);
    }
  });

  it('item 15: a --db-index the server does not have is refused by the server, before it is watched in silence', async () => {
    // Control: 2^31 − 1 passes the option's check; the server (16 databases) refuses it, and 15 is watched.
    const { code, lines } = await refused('--db', join(dir, 'index.db'), '--db-index', '2147483647');
    expect(code).toBe(2);
    expect(lines.filter((l) => !l.startsWith('watching '))).toEqual([
      expect.stringMatching(/^ttl-advisor: Cannot watch database 2147483647 on 127\.0\.0\.1:\d+: ERR DB index is out of range$/),
    ]);
    const recorder = new MemoryRecorder();
    const watcher = await KeyspaceWatcher.start({ url: server.url, recorder, dbIndex: 15 });
    const fifteen = new Redis(`${server.url}/15`);
    try {
      // 6 s: a TTL read up to 50 ms low (the watcher waiting for a CPU on a loaded host) still rounds back to it.
      await fifteen.set('idx:lock:1', 'x', 'PX', 6000, 'NX');
      await sleep(250); // time to read its TTL, on a loaded machine too
      await fifteen.del('idx:lock:1');
      await redis.set('idx:lock:2', 'x', 'PX', 3000, 'NX'); // database 0: not watched
      await redis.del('idx:lock:2');
      await sleep(100);
    } finally {
      fifteen.disconnect();
      await watcher.stop();
    }
    expect(recorder.samples.map((s) => [s.key, s.ttlMs])).toEqual([['idx:lock:1', 6000]]);
  });
});
