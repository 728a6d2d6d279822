import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { built } from '../helpers/built.js';
import { startChild, type Child } from '../helpers/child.js';
import { rollupTotal } from '../helpers/db.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Issue 22, item 1: `npx ttl-advisor watch` under SIGTERM leaves no orphan
 * watcher. npm exec runs the command under `sh -c` and does not pass SIGTERM on:
 * npm and the shell end, the watcher runs on with a new parent. Here a wrapper
 * process stands in for them; it is killed with SIGKILL, so nothing at all is
 * passed on, and the watcher must notice by itself.
 */

const cli = built('src/cli/main.ts');
const dir = tempDir();
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;
// The watcher checks its parent every 500 ms, then stops as on SIGTERM; the rest is a loaded machine.
const GONE_WITHIN_MS = 5000;
const running: ChildProcess[] = [];
const watchers: number[] = [];
let server: RedisServer;
let redis: Redis;
let n = 0;

beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url);
});
beforeEach(async () => {
  // A watcher killed by a failed test leaves its --configure lease, which would keep the next from restoring.
  await redis.flushall();
  await redis.config('SET', 'notify-keyspace-events', ''); // --configure has something to restore
});
afterEach(() => {
  for (const p of running.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const pid of watchers.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

// What npm exec (npx) adds to the environment of a command it runs.
const NPX_ENV = { npm_lifecycle_event: 'npx', npm_command: 'exec', npm_config_user_agent: 'npm/11.19.1 node/v20.20.2 linux x64 workspaces/false' };

/**
 * A parent that starts `ttl-advisor watch --configure` and prints `watcher <pid>`. With `output:
 * 'inherit'` the watcher writes to the pipes the test reads (they outlive the wrapper); with
 * `'through-wrapper'` it writes to pipes the wrapper reads and forwards, which close when it dies.
 */
function startWrapper(db: string, byPackageManager: boolean, output: 'inherit' | 'through-wrapper'): Child {
  const args = [cli, 'watch', '--redis', server.url, '--db', db, '--configure', '--progress-ms', '200'];
  // The test runner may itself run under npx: its npm_ variables are not passed on.
  const wrapper = `
const { spawn } = require('node:child_process');
const env = { ...process.env };
for (const key of Object.keys(env)) if (/^npm_/i.test(key)) delete env[key];
Object.assign(env, ${JSON.stringify(byPackageManager ? NPX_ENV : {})});
const watcher = spawn(process.execPath, ${JSON.stringify(args)}, { env, stdio: ${output === 'inherit' ? "'inherit'" : "['ignore', 'pipe', 'pipe']"} });
if (watcher.stdout) { watcher.stdout.pipe(process.stdout); watcher.stderr.pipe(process.stderr); }
process.stdout.write('watcher ' + watcher.pid + '\\n');
setInterval(() => undefined, 1000);
`;
  return startChild(process.execPath, ['-e', wrapper], running);
}

/** Alive and not a zombie (an orphan's new parent may be slow to reap it). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function startWatching(byPackageManager: boolean, output: 'inherit' | 'through-wrapper') {
  const db = join(dir, `orphan-${n++}.db`);
  const wrapper = startWrapper(db, byPackageManager, output);
  await wrapper.said(/^watcher \d+$/m);
  const pid = Number(/^watcher (\d+)$/m.exec(wrapper.output())![1]);
  watchers.push(pid);
  await wrapper.said('subscribed on 1 node', 30_000);
  expect(await redis.config('GET', 'notify-keyspace-events')).not.toEqual(['notify-keyspace-events', '']);
  for (let i = 0; i < 3; i++) {
    await redis.set(`orphan:lock:job:${i}`, 't', 'PX', 5000, 'NX');
    await new Promise((resolve) => setTimeout(resolve, 30)); // held long enough for the watcher to read its TTL
    await redis.eval(RELEASE, 1, `orphan:lock:job:${i}`, 't');
  }
  await wrapper.said(/^3 locks/m); // a progress line: the watcher saw them
  return { db, wrapper, pid };
}

/** Kills the wrapper as nothing can be caught; resolves with how long the watcher outlived it (ms), or `undefined`. */
async function killWrapper(wrapper: Child, pid: number, waitMs: number): Promise<number | undefined> {
  wrapper.proc.kill('SIGKILL');
  await wrapper.exited;
  const killedAt = Date.now();
  while (Date.now() - killedAt < waitMs) {
    if (!alive(pid)) return Date.now() - killedAt;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

describe('item 1: `ttl-advisor watch` leaves no orphan', () => {
  it('item 1: started by a package manager (npx), the watcher stops by itself when its parent is SIGKILLed: notifications restored, samples on disk', async () => {
    const { db, wrapper, pid } = await startWatching(true, 'inherit');
    const goneAfterMs = await killWrapper(wrapper, pid, GONE_WITHIN_MS);
    console.info(`item 1: the watcher ${goneAfterMs === undefined ? "outlived its parent" : `ended ${goneAfterMs} ms after its parent`}`);
    expect(goneAfterMs, wrapper.output()).toBeDefined();
    expect(wrapper.output()).toMatch(/the process that started it \(pid \d+\) is gone; stopping as on SIGTERM/);
    expect(wrapper.output()).toMatch(/^stopped: 3 locks recorded \(3 released/m);
    expect(await redis.config('GET', 'notify-keyspace-events')).toEqual(['notify-keyspace-events', '']);
    expect(rollupTotal(db)).toBe(3);
  });

  it('item 1: an orphaned watcher whose output pipe closed (EPIPE) stops as on SIGTERM, not at once: notifications restored, samples on disk', async () => {
    // Started directly: only the closed pipe can tell it that nobody is there any more.
    const { db, wrapper, pid } = await startWatching(false, 'through-wrapper');
    const goneAfterMs = await killWrapper(wrapper, pid, GONE_WITHIN_MS);
    expect(goneAfterMs, wrapper.output()).toBeDefined();
    expect(await redis.config('GET', 'notify-keyspace-events')).toEqual(['notify-keyspace-events', '']);
    expect(rollupTotal(db)).toBe(3);
  });

  it('control: started directly (exec, the bin path, nohup), a watcher whose parent died is left running; SIGTERM stops it as always', async () => {
    const { db, wrapper, pid } = await startWatching(false, 'inherit');
    expect(await killWrapper(wrapper, pid, 2000)).toBeUndefined();
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).not.toMatch(/^\d+ \(.*\) Z/);
    process.kill(pid, 'SIGTERM');
    await expect.poll(() => alive(pid), { timeout: GONE_WITHIN_MS }).toBe(false);
    expect(wrapper.output()).not.toMatch(/is gone; stopping/);
    expect(wrapper.output()).toMatch(/^stopped: 3 locks recorded/m);
    expect(await redis.config('GET', 'notify-keyspace-events')).toEqual(['notify-keyspace-events', '']);
    expect(rollupTotal(db)).toBe(3);
  });
});
