import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { RedisStreamSink, type LockSample } from '../../src/index.js';
import { decodeStreamBatch } from '../../src/fleet/stream-entry.js';
import { Histogram } from '../../src/store/histogram/histogram.js';
import { built } from '../helpers/built.js';
import { CLIENT_KINDS, connectClient } from '../helpers/clients.js';
import { startRedisServer } from '../helpers/redis-server.js';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.disconnect());
const sample = (i: number, o: Partial<LockSample> = {}): LockSample => ({
  key: `order:lock:product:${i}`,
  at: Date.UTC(2026, 10, 28, 10) + i,
  holdMs: 1 + (i % 50),
  ttlMs: 3000,
  outcome: 'released',
  ...o,
});

describe('RedisStreamSink', () => {
  it.each(CLIENT_KINDS)('sends rollup deltas and sampled raw rows as stream entries that decode to what was recorded, through %s', async (kind) => {
    const stream = `test:sink:${Date.now()}:${kind}`;
    const connection = await connectClient(kind, inject('redisUrl'));
    const sink = new RedisStreamSink(connection.client as never, { stream, instance: 'api-1', rawSampleRate: 1, flushIntervalMs: 60_000 });
    for (let i = 0; i < 500; i++) sink.record(sample(i, i % 100 === 0 ? { outcome: 'expired' } : {}));
    await sink.flush();
    for (let i = 500; i < 700; i++) sink.record(sample(i, { pattern: 'explicit:{id}' }));
    const stats = await sink.close();
    expect(stats).toMatchObject({ recorded: 700, written: 700, rawWritten: 700, dropped: 0, pending: 0 });

    const entries = await redis.xrange(stream, '-', '+');
    expect(entries).toHaveLength(2);
    const batches = entries.map(([, fields]) => decodeStreamBatch(fields));
    expect(batches.map((b) => b.seq)).toEqual([1, 2]);
    expect(batches[0]!.epoch).toBe(batches[1]!.epoch);
    const [first, second] = batches;
    expect(first!.rollups.map((d) => [d.pattern, d.values[0], d.values[2]])).toEqual([['order:lock:product:{id}', 500, 5]]);
    expect(Histogram.decode(first!.rollups[0]!.values[10]).totalCount).toBe(500);
    expect(second!.rollups.map((d) => [d.pattern, d.values[0]])).toEqual([['explicit:{id}', 200]]);
    expect(first!.raw).toHaveLength(500);
    await redis.del(stream);
    await connection.close();
  });

  it('never throws, and bounds its memory: raw rows beyond maxPendingRawRows are dropped and counted, statistics are not', async () => {
    const stream = `test:sink:${Date.now()}:b`;
    const sink = new RedisStreamSink(redis, { stream, maxPendingRawRows: 100, rawSampleRate: 1, flushIntervalMs: 60_000 });
    expect(() => {
      for (let i = 0; i < 150; i++) sink.record(sample(i));
      sink.record(null as never);
    }).not.toThrow();
    expect(sink.stats()).toMatchObject({ recorded: 151, pending: 150, dropped: 1, rawDropped: 50 });
    sink.record({ ...sample(1), outcome: 'bogus' as never });
    await sink.close();
    sink.record(sample(2));
    expect(sink.stats()).toMatchObject({ recorded: 153, written: 150, dropped: 3, pending: 0, rawWritten: 100, rawDropped: 50 });
    await redis.del(stream);
  });

  it('while Redis is down, keeps folding samples (the statistics lose nothing), and sends them when it returns', async () => {
    const server = await startRedisServer();
    const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    const warnings: string[] = [];
    const sink = new RedisStreamSink(client, { stream: 'down', flushIntervalMs: 60_000, maxPendingBatches: 3, commandTimeoutMs: 200, onWarning: (w) => warnings.push(w.kind) });
    try {
      await server.kill();
      for (let batch = 0; batch < 5; batch++) {
        for (let i = 0; i < 10; i++) sink.record(sample(batch * 10 + i));
        await sink.flush();
      }
      // One entry waits for Redis; the later samples stay folded in the aggregates instead of piling up as entries.
      expect(sink.stats()).toMatchObject({ recorded: 50, written: 0, pending: 50, dropped: 0 });
      expect(warnings).toEqual(['write-failed']);
      await server.start();
      for (let i = 0; i < 50 && sink.stats().pending > 0; i++) {
        await sink.flush();
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(sink.stats()).toMatchObject({ recorded: 50, written: 50, pending: 0, dropped: 0 });
      // A send that timed out may still arrive (the client queued it): a collector applies each seq once.
      const seqs = new Set((await client.xrange('down', '-', '+')).map(([, fields]) => decodeStreamBatch(fields).seq));
      expect(seqs.size).toBe(2);
    } finally {
      await sink.close();
      client.disconnect();
      await server.stop();
    }
  });
});

describe('RedisStreamSink in a service that must not notice it', () => {
  it('SIGTERM sends what is buffered before the process ends, within flushOnShutdown’s bound', async () => {
    const stream = `test:sink:sigterm:${Date.now()}`;
    const child = built('test/helpers/sink-child.ts');
    const proc = spawn(process.execPath, [child, inject('redisUrl'), stream, '30000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      proc.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
      proc.once('exit', (code) => reject(new Error(`child exited early with ${code}`)));
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.once('exit', (_code, signal) => resolve(signal)));
    proc.kill('SIGTERM');
    expect(await exited).toBe('SIGTERM'); // the signal's default action still ends it
    const entries = await redis.xrange(stream, '-', '+');
    const counted = entries.flatMap(([, fields]) => decodeStreamBatch(fields).rollups).reduce((sum, d) => sum + d.values[0], 0);
    expect(counted).toBe(30_000);
    await redis.del(stream);
  });

  it('nothing on its timer throws: huge keys are split into several entries, and every sample is counted', async () => {
    const stream = `test:sink:huge:${Date.now()}`;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    // Timeouts far above what sending 60 MB takes on a loaded host: this test is about splitting, not giving up.
    const sink = new RedisStreamSink(redis, { stream, flushIntervalMs: 20, rawSampleRate: 1, commandTimeoutMs: 30_000, flushTimeoutMs: 60_000 });
    try {
      const big = 'k'.repeat(100_000);
      for (let i = 0; i < 600; i++) sink.record({ ...sample(i), key: `${big}:${i}` });
      await new Promise((r) => setTimeout(r, 300)); // the timer seals and sends
      expect(await sink.close()).toMatchObject({ recorded: 600, written: 600, dropped: 0, pending: 0, rawDropped: 0 });
      const entries = await redis.xrange(stream, '-', '+');
      const batches = entries.map(([, f]) => decodeStreamBatch(f));
      expect(entries.length).toBeGreaterThanOrEqual(10); // 60 MB of keys, at most ~4 MB per entry
      expect(batches.flatMap((b) => b.rollups).reduce((sum, d) => sum + d.values[0], 0)).toBe(600);
      expect(batches.flatMap((b) => b.raw)).toHaveLength(600);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await redis.del(stream);
    }
  });

  it('against a Redis that accepts and never answers, flush() and close() return within flushTimeoutMs', async () => {
    const hung = createServer((socket) => socket.on('data', () => undefined));
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const port = (hung.address() as { port: number }).port;
    const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, enableReadyCheck: false });
    client.on('error', () => undefined);
    const sink = new RedisStreamSink(client, { stream: 'hung', flushIntervalMs: 50, flushTimeoutMs: 500, commandTimeoutMs: 1500, onWarning: () => undefined });
    try {
      for (let i = 0; i < 10; i++) sink.record(sample(i));
      let started = performance.now();
      await sink.flush();
      expect(performance.now() - started).toBeLessThan(900);
      started = performance.now();
      const closed = await sink.close();
      expect(performance.now() - started).toBeLessThan(900);
      expect(closed).toMatchObject({ recorded: 10, written: 0 });
      // The send under way settles at its command timeout, and is counted then, once.
      await new Promise((r) => setTimeout(r, 1700));
      expect(sink.stats()).toMatchObject({ recorded: 10, written: 0, dropped: 10, pending: 0 });
    } finally {
      client.disconnect();
      hung.close();
    }
  });
});
