import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { RedisStreamSink, type LockSample } from '../../src/index.js';
import { decodeStreamBatch } from '../../src/fleet/stream-entry.js';
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
    expect(first!.rollups.map((d) => [d.pattern, d.count, d.outcomes[1]])).toEqual([['order:lock:product:{id}', 500, 5]]);
    expect(first!.rollups[0]!.hold.totalCount).toBe(500);
    expect(second!.rollups.map((d) => [d.pattern, d.count])).toEqual([['explicit:{id}', 200]]);
    expect(first!.raw).toHaveLength(500);
    await redis.del(stream);
    await connection.close();
  });

  it('never throws, and bounds its memory', async () => {
    const stream = `test:sink:${Date.now()}:b`;
    const sink = new RedisStreamSink(redis, { stream, maxBufferedSamples: 100, flushIntervalMs: 60_000 });
    expect(() => {
      for (let i = 0; i < 150; i++) sink.record(sample(i));
      sink.record(null as never);
    }).not.toThrow();
    expect(sink.stats()).toMatchObject({ recorded: 151, pending: 100, dropped: 51 });
    sink.record({ ...sample(1), outcome: 'bogus' as never });
    await sink.close();
    sink.record(sample(2));
    expect(sink.stats()).toMatchObject({ recorded: 153, written: 100, dropped: 53, pending: 0 });
    await redis.del(stream);
  });

  it('keeps batches while Redis is down, drops the oldest beyond the limit, and resumes when it returns', async () => {
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
      expect(sink.stats()).toMatchObject({ recorded: 50, written: 0, pending: 30, dropped: 20 });
      expect(warnings).toEqual(expect.arrayContaining(['write-failed', 'buffer-full']));
      await server.start();
      for (let i = 0; i < 50 && sink.stats().pending > 0; i++) {
        await sink.flush();
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(sink.stats()).toMatchObject({ recorded: 50, written: 30, pending: 0, dropped: 20 });
      expect(await client.xlen('down')).toBeGreaterThanOrEqual(3);
    } finally {
      await sink.close();
      client.disconnect();
      await server.stop();
    }
  });
});
