import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import Redlock from 'redlock';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { analyze, type InstrumentStats } from '../../src/index.js';
import { built } from '../helpers/built.js';
import { startChild } from '../helpers/child.js';
import { tempDir } from '../helpers/temp.js';

const worker = built('test/helpers/redlock-worker.ts');
const url = inject('redisUrl');
const redis = new Redis(url);
afterAll(() => redis.disconnect());

/** One worker process: `ready` once it waits for the go signal, `done` with what it ran and what instrument saw. */
function startWorker(args: string[]) {
  const child = startChild(process.execPath, [worker, ...args]);
  const done = child.exited.then(({ code }) => {
    const line = child.output().split('\n').find((l) => l.startsWith('results '));
    if (code !== 0 || !line) throw new Error(`worker exited with ${code}: ${child.output()}`);
    return JSON.parse(line.slice('results '.length)) as { ran: number; stats: InstrumentStats };
  });
  return { ready: child.said('ready\n'), done };
}

describe('contention across processes', () => {
  it('3 processes × node-redlock using() on 5 keys: every acquisition counted once, in one SQLite file', async () => {
    const runId = randomUUID().slice(0, 8);
    const db = join(tempDir(), 'samples.db');
    // Redis has redlock's scripts cached already, as in a service's second deploy: the workers only
    // ever send EVALSHA, so they are recognized by the SHA1s we know, never by their text.
    for (const script of Object.values(new Redlock([redis]).scripts)) await redis.script('LOAD', script.value);
    const workers = Array.from({ length: 3 }, () => startWorker([url, runId, '150', '8', db]));
    await Promise.all(workers.map((w) => w.ready));
    await redis.lpush(`contention:${runId}:go`, '1', '1', '1');
    const results = await Promise.all(workers.map((w) => w.done));

    const ran = results.reduce((n, r) => n + r.ran, 0);
    expect(ran).toBe(450);
    for (const { stats } of results) {
      expect(stats.recorded.released).toBe(150);
      expect(stats).toMatchObject({ untracked: 0, open: 0, waiting: 0 });
    }
    const [pattern, ...others] = analyze([db]).patterns;
    expect(others).toEqual([]);
    expect(pattern).toMatchObject({ count: 450, outcomes: { released: 450, expired: 0, not_acquired: 0, error: 0, lost: 0 } });
    // contended: many acquisitions waited through retries
    expect(pattern!.waitMs.p99).toBeGreaterThan(1);
  }, 60_000);
});
