import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { analyze } from '../../src/index.js';
import { warningSentences } from '../../src/report/hint-text.js';
import { runCli } from '../helpers/cli.js';
import { useOwnRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';
import { startWatch } from '../helpers/watch-cli.js';

/**
 * W2b: keys set with a TTL and never deleted fill `--max-open`; from then on every new lock is dropped.
 * The drops must show where a user looks: a notice once, the stop line, `stats`, and the report's
 * data-quality line (a gap of reason `open-limit`, whose hours count lower bounds).
 */

const dir = tempDir();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running: ChildProcess[] = [];
let server: RedisServer;
let redis: Redis;

useOwnRedisServer(async (s, client) => {
  [server, redis] = [s, client];
  await redis.config('SET', 'notify-keyspace-events', 'Kg$x');
});
afterEach(() => {
  for (const p of running.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

async function locks(prefix: string, n: number): Promise<void> {
  const keys = Array.from({ length: n }, (_, i) => `${prefix}:lock:${i}`);
  const take = redis.pipeline();
  for (const key of keys) take.set(key, 't', 'PX', 10_000, 'NX');
  await take.exec();
  await sleep(150);
  const release = redis.pipeline();
  for (const key of keys) release.del(key);
  await release.exec();
}

describe('watch at --max-open', () => {
  it('W2b: once never-released keys fill --max-open, the locks dropped are said once, in the stop line, in stats and in the report', async () => {
    const db = join(dir, 'full.db');
    const w = startWatch(server.url, db, running, '--max-open', '100', '--progress-ms', '60000');
    await w.said('subscribed on 1 node');
    await locks('first', 20); // confirms the pattern while there is room
    await sleep(300);
    // 100 keys set and never deleted (a cache --match also matches): --max-open is full.
    const stale = redis.pipeline();
    for (let i = 0; i < 100; i++) stale.set(`stale:lock:${i}`, 'v', 'PX', 600_000);
    await stale.exec();
    await sleep(300);
    await locks('first', 200);
    await w.said(/100 locks are open at once \(--max-open 100\): new locks are not followed until one ends/);
    await sleep(300);
    // Room again (the 100 deleted: released holds, recorded): the stretch ends with the next lock, which is followed.
    await redis.del(...Array.from({ length: 100 }, (_, i) => `stale:lock:${i}`));
    await sleep(200);
    await locks('first', 10);
    await sleep(500);
    w.proc.kill('SIGTERM');
    expect((await w.exited).code, w.output()).toBe(0);
    expect(w.output().match(/locks are open at once/g)).toHaveLength(1);
    expect(w.output()).toMatch(/stopped: 130 locks recorded .*, 200 taken while --max-open locks were open not recorded \(recorded as gaps\)/);

    const stats = await runCli(['stats', '--db', db]);
    expect(stats.stdout).toMatch(/gaps {13}1 \(1 at --max-open\): 200 lock\(s\) not recorded/);
    const analysis = analyze([db]);
    expect(analysis.gaps).toMatchObject([{ reason: 'open-limit', openHolds: 200, source: '--max-open 100' }]);
    expect(analysis.patterns.find((p) => p.pattern === 'first:lock:{id}')!.incompleteHours).toBeGreaterThanOrEqual(1);
    expect(warningSentences(analysis).join(' ')).toMatch(/took no new one until one ended \(keys set and never deleted\?\); 200 lock\(s\) taken meanwhile were not recorded/);
  }, 60_000);
});
