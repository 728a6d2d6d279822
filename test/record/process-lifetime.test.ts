import { request } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openForWriting } from '../../src/store/schema.js';
import { startChild, type Child } from '../helpers/child.js';
import { queryDb, rollupTotal } from '../helpers/db.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { installBuiltPackage, writeService, type ServiceShape } from '../helpers/service-shapes.js';

/**
 * Issue 22, item 1, "Process lifetime": nothing ttl-advisor starts keeps a
 * service alive. Each service below is a separate `node` process wired as README
 * shows, using the package built from these sources (ES module and CommonJS). It
 * must end by itself within 1 s of its last lock, with every sample on disk.
 */

// 1 s is the promise; the rest allows for a loaded 2-core machine (a process start, the writer
// thread's first write and the exit are each slower there). A process that stays alive fails anyway.
const EXITS_WITHIN_MS = 1000 + 1500;
// How long after its last lock a service is given before it counts as hung, and is killed.
const HUNG_AFTER_MS = 6000;

// Inside the repository (a fresh clone has no test/artifacts/ yet), so the services resolve the package installed there.
const artifacts = fileURLToPath(new URL('../artifacts/', import.meta.url));
mkdirSync(artifacts, { recursive: true });
const home = mkdtempSync(join(artifacts, 'lifetime-'));
let n = 0;
const dbPath = () => join(home, `samples-${n++}.db`);
const running: ChildProcess[] = [];
let server: RedisServer;
const timings: string[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  await installBuiltPackage(home);
}, 60_000);
afterEach(() => {
  for (const p of running.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});
afterAll(async () => {
  await server.stop();
  rmSync(home, { recursive: true, force: true });
  console.info(`item 1 timings (last lock → exit):\n${timings.join('\n')}`);
});

function start(kind: 'esm' | 'cjs', shape: ServiceShape, db: string, options: object = {}): Child {
  return startChild(process.execPath, [writeService(home, kind), server.url, db, shape, JSON.stringify(options)], running);
}

const locksSaid = (child: Child) => child.output().match(/^lock \d+$/gm) ?? [];
/** The child's output without its `lock` lines. */
const said = (child: Child) => child.output().replace(/^lock \d+\n/gm, '');
const lastLockAt = (child: Child) => Math.max(...locksSaid(child).map((line) => Number(line.slice(5))));

/**
 * How long after its last lock (by its own clock, the same machine's) the child exited, or
 * `undefined` when it was still alive `hungAfterMs` after it.
 */
async function exitAfterLastLock(
  child: Child,
  hungAfterMs = HUNG_AFTER_MS,
): Promise<{ afterMs: number | undefined; code: number | null; signal: NodeJS.Signals | null }> {
  let settled: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let exitedAt = 0;
  void child.exited.then((result) => {
    exitedAt = Date.now();
    settled = result;
  });
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (settled) return { afterMs: exitedAt - lastLockAt(child), ...settled };
    // Until it has taken its locks a service is busy; from its last lock on, the clock runs.
    if (locksSaid(child).length > 0 && Date.now() - lastLockAt(child) > hungAfterMs) return { afterMs: undefined, code: null, signal: null };
  }
}

function onDisk(db: string): { rollups: number; counters: unknown } {
  return { rollups: rollupTotal(db), counters: queryDb(db, 'SELECT recorded, written, dropped FROM recorder_stats') };
}

async function expectEndsByItself(child: Child, db: string, label: string): Promise<void> {
  const { afterMs, code, signal } = await exitAfterLastLock(child);
  timings.push(`  ${label}: ${afterMs === undefined ? 'still alive' : `${afterMs} ms`}`);
  expect(afterMs, `${label} was still alive ${HUNG_AFTER_MS} ms after its last lock:\n${said(child)}`).toBeDefined();
  expect(afterMs).toBeLessThan(EXITS_WITHIN_MS);
  expect({ code, signal }, said(child)).toEqual({ code: 0, signal: null });
  const locks = locksSaid(child).length;
  expect(locks).toBeGreaterThan(5);
  expect(onDisk(db)).toEqual({ rollups: locks, counters: [{ recorded: locks, written: locks, dropped: 0 }] });
}

function get(port: number, id: number): Promise<number> {
  return new Promise((resolve, reject) => {
    // agent: false, one connection per request, as independent clients would.
    const req = request({ host: '127.0.0.1', port, path: `/order?id=${id}`, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(['esm', 'cjs'] as const)('item 1: process lifetime, %s service', (kind) => {
  it(`item 1: a plain script (no flushOnShutdown, no close) exits by itself within 1 s of its last lock, every sample on disk (${kind})`, async () => {
    const db = dbPath();
    await expectEndsByItself(start(kind, 'script', db), db, `${kind} script`);
  });

  it(`item 1: a plain script ending with process.exit() right after its last lock has every sample on disk (the exit path, synchronous) (${kind})`, async () => {
    const db = dbPath();
    await expectEndsByItself(start(kind, 'script+exit', db), db, `${kind} script + process.exit()`);
  });

  it(`item 1: README's wiring with flushOnShutdown exits by itself within 1 s of its last lock, every sample on disk (${kind})`, async () => {
    const db = dbPath();
    await expectEndsByItself(start(kind, 'flushOnShutdown', db), db, `${kind} flushOnShutdown`);
  });

  it(`item 1: README's wiring with flushOnShutdown, ending with process.exit() right after its last lock, has every sample on disk (${kind})`, async () => {
    const db = dbPath();
    await expectEndsByItself(start(kind, 'flushOnShutdown+exit', db), db, `${kind} flushOnShutdown + process.exit()`);
  });

  it(`item 1: the graceful-drain pattern (SIGTERM closes the HTTP server) exits by itself within 1 s of the last lock of its drain, every sample on disk (${kind})`, async () => {
    const db = dbPath();
    const child = start(kind, 'drain', db);
    await child.said(/^listening \d+$/m);
    const port = Number(/^listening (\d+)$/m.exec(child.output())![1]);
    // Requests before the drain, over more than flushIntervalMs: the recorder has written by then.
    const before: Promise<number>[] = [];
    for (let i = 0; i < 6; i++) {
      before.push(get(port, i));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Requests in flight when SIGTERM comes: the drain finishes them, and their locks are recorded.
    const during = [10, 11, 12, 13].map((id) => get(port, id));
    await expect.poll(() => (child.output().match(/^request$/gm) ?? []).length, { timeout: 10_000 }).toBe(10);
    child.proc.kill('SIGTERM');
    expect(await Promise.all([...before, ...during])).toEqual(Array(10).fill(200));
    await expectEndsByItself(child, db, `${kind} graceful drain`);
    expect(locksSaid(child)).toHaveLength(10);
  });
});

describe('item 1: process lifetime, when the file cannot be written, and controls', () => {
  it.each(['script', 'flushOnShutdown'] as const)(
    'item 1: a write that cannot finish (the file locked by another process) is not retried at every beforeExit, and ending the writer mid-wait does not abort the process: the service ends after flushTimeoutMs (%s)',
    async (shape) => {
      const db = dbPath();
      const other = openForWriting(db, 1000);
      other.exec('BEGIN IMMEDIATE'); // holds the write lock until the service is gone
      try {
        const child = start('esm', shape, db, { flushTimeoutMs: 500, busyTimeoutMs: 50 });
        const { afterMs, code, signal } = await exitAfterLastLock(child);
        timings.push(`  esm ${shape}, file locked: ${afterMs === undefined ? 'still alive' : `${afterMs} ms`}`);
        expect(afterMs, `still alive ${HUNG_AFTER_MS} ms after its last lock:\n${said(child)}`).toBeDefined();
        // beforeExit's flush waits flushTimeoutMs once, exit's closeSync once more: then it ends.
        expect(afterMs).toBeLessThan(500 + 500 + EXITS_WITHIN_MS);
        // Not 134 (SIGABRT): better-sqlite3 aborts the process when a thread ends inside a failing call.
        expect({ code, signal }, said(child)).toEqual({ code: 0, signal: null });
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
      expect(rollupTotal(db)).toBe(0); // nothing of it reached the file: counted as dropped
    },
  );

  it('control: a service that leaves its own Redis client connected stays alive, and is reported so', async () => {
    const child = start('esm', 'keep-client', dbPath());
    const { afterMs } = await exitAfterLastLock(child, EXITS_WITHIN_MS + 500);
    expect(afterMs).toBeUndefined();
  });

  it('control: a service killed (SIGKILL) before its first write leaves its samples off the disk, and the count says so', async () => {
    const db = dbPath();
    const child = start('esm', 'keep-client', db, { flushIntervalMs: 60_000 });
    await child.said('done');
    child.proc.kill('SIGKILL');
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(locksSaid(child).length).toBeGreaterThan(5);
    expect(existsSync(db) ? rollupTotal(db) : 0).toBe(0);
  });
});
