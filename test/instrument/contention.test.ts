import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import Redlock from 'redlock';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { analyze, type InstrumentStats } from '../../src/index.js';
import { tempDir } from '../helpers/temp.js';

const worker = fileURLToPath(new URL('../helpers/redlock-worker.ts', import.meta.url));
const url = inject('redisUrl');
const redis = new Redis(url);
afterAll(() => redis.disconnect());

function startWorker(args: string[]) {
  const proc = spawn(process.execPath, ['--import', 'tsx', worker, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  let onReady: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  proc.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes('ready\n')) onReady();
  });
  const done = new Promise<{ ran: number; stats: InstrumentStats }>((resolve, reject) => {
    proc.once('exit', (code) => {
      const line = output.split('\n').find((l) => l.startsWith('results '));
      if (code !== 0 || !line) reject(new Error(`worker exited with ${code}: ${output}`));
      else resolve(JSON.parse(line.slice('results '.length)) as { ran: number; stats: InstrumentStats });
    });
  });
  return { ready, done };
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
