import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { databaseStats } from '../../src/store/stats.js';
import { CONNECT_TIMEOUT_MS } from '../../src/cli/redis.js';
import { COLLECTOR_DEFAULTS } from '../../src/fleet/collector.js';
import { RedisStreamSink, StreamCollector } from '../../src/index.js';
import { built } from '../helpers/built.js';
import { CLIENT_KINDS, connectClient } from '../helpers/clients.js';
import { queryDb } from '../helpers/db.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';

const cli = built('src/cli/main.ts');
const producer = built('test/helpers/sink-producer.ts');
const dir = tempDir();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running: ChildProcess[] = [];
let server: RedisServer | undefined;
afterEach(async () => {
  for (const p of running.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  await server?.stop();
  server = undefined;
});

function start(args: string[]): { proc: ChildProcess; output: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(proc);
  let output = '';
  proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { proc, output: () => output, exited };
}

function collector(url: string, db: string, name: string) {
  return start([cli, 'collect', '--redis', url, '--db', db, '--consumer', name, '--claim-idle-ms', '500', '--progress-ms', '500']);
}

interface ProducerReport {
  instance: string;
  ok: number;
  failed: number;
  recorded: number;
  written: number;
  dropped: number;
  pending: number;
}

async function producers(url: string, count: number, durationMs: number) {
  const started = Array.from({ length: count }, (_, i) => start([producer, url, `api-${i}`, String(durationMs)]));
  return Promise.all(
    started.map(async (p) => {
      const { code } = await p.exited;
      expect(code, p.output()).toBe(0);
      return JSON.parse(p.output().trim().split('\n').pop()!) as ProducerReport;
    }),
  );
}

const centralCount = (db: string) => {
  try {
    return queryDb<{ n: number | null }>(db, 'SELECT sum(count) AS n FROM rollups')[0]!.n ?? 0;
  } catch {
    return 0;
  }
};

async function waitFor(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(100);
  }
}

describe('a fleet through Redis Streams', () => {
  it('a collector killed mid-stream is replaced: every lock counted exactly once', async () => {
    server = await startRedisServer();
    const db = join(dir, 'central.db');
    const first = collector(server.url, db, 'collector-1');
    const reports = producers(server.url, 3, 3000);
    await waitFor(() => centralCount(db) > 0); // mid-stream
    first.proc.kill('SIGKILL');
    await first.exited;
    const second = collector(server.url, db, 'collector-2');

    const produced = await reports;
    const total = produced.reduce((sum, r) => sum + r.written, 0);
    // Every lock a producer recorded reached the stream. On a loaded machine a lock may fail now and then (its
    // 300 ms command timeout): it is recorded too (outcome error) and must be counted like any other.
    for (const r of produced) expect(r).toMatchObject({ dropped: 0, pending: 0, recorded: r.ok + r.failed, written: r.ok + r.failed });
    expect(total).toBeGreaterThan(300);

    await waitFor(() => centralCount(db) >= total);
    await sleep(700); // anything still arriving would now show as an excess
    expect(centralCount(db)).toBe(total);
    expect(queryDb<{ n: number }>(db, 'SELECT count(*) AS n FROM raw_samples')[0]!.n).toBe(total);
    const perInstance = queryDb<{ instance: string; n: number }>(
      db,
      'SELECT i.instance, sum(r.count) AS n FROM rollups r JOIN instances i ON i.id = r.instance_id GROUP BY i.instance ORDER BY i.instance',
    );
    expect(perInstance).toEqual(produced.map((r) => ({ instance: r.instance, n: r.written })).sort((a, b) => a.instance.localeCompare(b.instance)));

    second.proc.kill('SIGTERM');
    const stopped = await second.exited;
    expect(stopped.code, second.output()).toBe(0);
    expect(second.output()).toMatch(/stopped: \d+ entries/);
  });

  it('Redis restarted while producers run: locks fail clearly, drops are counted, nothing crashes, collection resumes', async () => {
    server = await startRedisServer();
    const db = join(dir, 'restart.db');
    const col = collector(server.url, db, 'collector-r');
    const reports = producers(server.url, 3, 5000);
    await waitFor(() => centralCount(db) > 0); // the producers are taking locks and the collector is collecting
    await server.kill();
    const restartedAt = Date.now();
    await sleep(800);
    await server.start();

    const produced = await reports;
    for (const r of produced) {
      expect(r.failed).toBeGreaterThan(0); // locks failed while Redis was away
      expect(r.ok).toBeGreaterThan(0);
      expect(r.recorded).toBe(r.written + r.dropped + r.pending);
      expect(r.pending).toBe(0);
    }
    // Batches sent after the restart reach the central file.
    await waitFor(() => queryDb<{ n: number }>(db, 'SELECT count(*) AS n FROM raw_samples WHERE ts_ms > ?', restartedAt + 800)[0]!.n > 0);
    const total = produced.reduce((sum, r) => sum + r.written, 0);
    expect(centralCount(db)).toBeLessThanOrEqual(total); // entries in Redis when it died are gone with it, never doubled
    col.proc.kill('SIGTERM');
    expect((await col.exited).code, col.output()).toBe(0);
  });
});

describe.each(CLIENT_KINDS)('StreamCollector through %s', (kind) => {
  it('applies what the sinks sent exactly once, reads its lag, and stops when asked', async () => {
    server = await startRedisServer();
    const producer = await connectClient('ioredis 5', server.url);
    const sink = new RedisStreamSink(producer.client as never, { instance: 'api-1', flushIntervalMs: 60_000, rawSampleRate: 1 });
    const at = Date.UTC(2026, 10, 28, 10);
    for (let batch = 0; batch < 3; batch++) {
      for (let i = 0; i < 100; i++) sink.record({ key: `order:lock:product:${i}`, at: at + i, holdMs: 5 + i, ttlMs: 3000, outcome: 'released' });
      sink.record({ key: 'order:lock:product:bad', at, holdMs: 1, ttlMs: -1, outcome: 'released' }); // invalid: dropped and counted
      await sink.flush();
    }
    expect(await sink.close()).toMatchObject({ recorded: 303, written: 300, dropped: 3 });

    const connection = await connectClient(kind, server.url);
    const db = join(dir, `collected-${kind.replace(/\W/g, '')}.db`);
    const stop = new AbortController();
    const progress: number[] = [];
    const collector = new StreamCollector(connection.client as never, {
      db,
      blockMs: 100,
      progressIntervalMs: 50,
      onProgress: (p) => p.lag !== undefined && progress.push(p.lag),
    });
    const running = collector.run(stop.signal);
    await waitFor(() => centralCount(db) >= 300);
    await sleep(300);
    stop.abort();
    const totals = await running;
    expect(totals).toMatchObject({ entries: 3, applied: 3, duplicates: 0, bad: 0, samples: 300 });
    // The lag at a stop is best effort: it waits at most 300 ms behind the blocked read still on the connection.
    expect([0, undefined]).toContain(totals.lag);
    expect([0, undefined]).toContain(totals.pending);
    expect(progress.at(-1)).toBe(0);
    expect(centralCount(db)).toBe(300);
    expect(queryDb<{ n: number }>(db, 'SELECT count(*) AS n FROM raw_samples')[0]!.n).toBe(300);
    // The sink's own counters reached the central file: stats there shows what each instance lost.
    expect(databaseStats(db).recorders).toEqual([expect.objectContaining({ instance: 'api-1', recorded: 303, written: 300, dropped: 3, rawWritten: 300 })]);
    await connection.close();
    await producer.close();
  });
});

describe('collect never hangs on a Redis that does not answer', () => {
  async function hungServer() {
    let connected!: () => void;
    // Resolves when a client has connected: by then the collector has set up its signal handlers.
    const firstConnection = new Promise<void>((resolve) => (connected = resolve));
    /** When each connection was accepted (Date.now()). */
    const acceptedAt: number[] = [];
    const server = createServer((socket) => {
      acceptedAt.push(Date.now());
      connected();
      socket.on('data', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`, firstConnection, acceptedAt, close: () => server.close() };
  }

  it('SIGTERM while Redis accepts and never answers: exits 0 at once', async () => {
    const hung = await hungServer();
    try {
      const col = start([cli, 'collect', '--redis', hung.url, '--db', join(dir, 'hung.db')]);
      await hung.firstConnection;
      // Its startup line came at once, before Redis answered anything (Redis never answers).
      await waitFor(() => col.output().includes('\n'));
      expect(col.output()).toMatch(/^collecting ttl-advisor:samples \(group ttl-advisor, consumer \S+\) from redis:\/\/127\.0\.0\.1:\d+ into \S+hung\.db\n/);
      const sent = Date.now();
      col.proc.kill('SIGTERM');
      const { code } = await col.exited;
      expect(code, col.output()).toBe(0);
      // Stopped by the signal, not by the connect timeout (that ends in exit 2, "no answer within"); and sooner
      // than that timeout, with room for a loaded machine.
      expect(col.output()).toMatch(/stopped before Redis answered/);
      expect(Date.now() - sent).toBeLessThan(CONNECT_TIMEOUT_MS);
    } finally {
      hung.close();
    }
  });

  it('without a signal, collect and locks fail within the connect timeout with one clear line (exit 2)', async () => {
    const hung = await hungServer();
    try {
      // Both at once (each waits out the whole connect timeout): which accepted connection is whose is unknown,
      // so each exit is measured from the later of the first two.
      const runs = [['collect', '--redis', hung.url, '--db', join(dir, 'hung2.db')], ['locks', '--redis', hung.url]].map((args) => {
        const run = start([cli, ...args]);
        return run.exited.then(({ code }) => ({ run, code, exitedAt: Date.now() }));
      });
      const ended = await Promise.all(runs);
      expect(hung.acceptedAt.length).toBeGreaterThanOrEqual(2);
      const connectedAt = hung.acceptedAt[1]!;
      for (const { run, code, exitedAt } of ended) {
        expect(code, run.output()).toBe(2);
        expect(run.output()).toMatch(/Cannot connect to Redis at redis:\/\/127\.0\.0\.1:\d+: no answer within 5000 ms/);
        // Measured from the connections, not from the starts (which a loaded machine stretches): the connect
        // timeout, then an exit, not a process kept alive by a socket Redis never closes.
        expect(exitedAt - connectedAt).toBeLessThan(CONNECT_TIMEOUT_MS + 3000);
      }
    } finally {
      hung.close();
    }
  });

  it('SIGTERM while a connected Redis stalls: the collector stops without waiting for it', async () => {
    server = await startRedisServer();
    const proxy = await stallingProxy(server.port);
    const admin = await connectClient('ioredis 5', server.url);
    try {
      const col = collector(proxy.url, join(dir, 'stall.db'), 'collector-s');
      // Connected and reading, however long a loaded machine takes to start it: it is a consumer of the group.
      await waitForAsync(async () => (await consumers(admin)).includes('collector-s'));
      proxy.stall();
      const before = col.output().length;
      // Redis has answered a command the collector sent, and the collector has not seen the answer: it waits on a stalled Redis.
      await waitFor(() => proxy.heldBytes() > 0);
      const sent = Date.now();
      col.proc.kill('SIGTERM');
      const { code } = await col.exited;
      const tookMs = Date.now() - sent;
      expect(code, col.output()).toBe(0);
      expect(col.output()).toMatch(/stopped: \d+ entries/);
      // A collector that waited for the stalled reply would first see its command time out, say so and retry:
      // no such line, and an exit sooner than that timeout could fire (generous for a loaded machine).
      expect(col.output().slice(before)).not.toMatch(/^redis: /m);
      expect(tookMs).toBeLessThan(COLLECTOR_DEFAULTS.commandTimeoutMs);
    } finally {
      proxy.close();
      await admin.close();
    }
  });
});

/** The consumers of collect's default group, by name. */
async function consumers(admin: { client: unknown }): Promise<string[]> {
  const call = (admin.client as { call(...args: string[]): Promise<unknown> }).call.bind(admin.client);
  const reply = (await call('XINFO', 'CONSUMERS', COLLECTOR_DEFAULTS.stream, COLLECTOR_DEFAULTS.group).catch(() => [])) as unknown[][];
  return reply.map((fields) => String(fields[fields.indexOf('name') + 1]));
}

async function waitForAsync(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(100);
  }
}

/**
 * A TCP proxy to Redis that can hold back Redis's replies: a stall that begins
 * exactly when the test says (DEBUG SLEEP begins whenever a busy server gets to it),
 * and lasts until the test ends.
 */
async function stallingProxy(port: number) {
  let stalled = false;
  let held = 0;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', end).on('close', end);
    }
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => (stalled ? (held += chunk.length) : client.write(chunk)));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(proxy.address() as { port: number }).port}`,
    stall: () => void (stalled = true),
    /** Bytes Redis sent since the stall that the client never got. */
    heldBytes: () => held,
    close: () => {
      for (const socket of sockets) socket.destroy();
      proxy.close();
    },
  };
}
