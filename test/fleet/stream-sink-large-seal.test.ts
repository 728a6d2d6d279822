import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { RedisStreamSink, type LockSample } from '../../src/index.js';
import { StreamBatcher, encodeSealed } from '../../src/fleet/stream-batches.js';
import { decodeStreamBatch } from '../../src/fleet/stream-entry.js';
import type { RawRow } from '../../src/store/input.js';

// Issue 22, item 5: one seal's raw rows split into more entries than maxPendingBatches, with Redis healthy.
const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.disconnect());

const big = 'k'.repeat(100_000);
const sample = (i: number): LockSample => ({ key: `${big}:${i}`, at: Date.now(), holdMs: 1 + (i % 50), ttlMs: 3000, outcome: 'released' });

async function drained(sink: RedisStreamSink, rawRows: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const s = sink.stats();
    if (s.pending === 0 && s.rawWritten + s.rawDropped >= rawRows) return;
    if (Date.now() > deadline) throw new Error(`the sink did not drain: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function entriesOf(stream: string) {
  return (await redis.xrange(stream, '-', '+')).map(([, fields]) => decodeStreamBatch(fields));
}

describe('item 5: a seal that splits into more entries than maxPendingBatches', () => {
  it('item 5: the rollups survive (every lock counted in the stream); the cap drops raw rows only, and counts them', async () => {
    const stream = `test:sink:item5:${Date.now()}`;
    const sink = new RedisStreamSink(redis, { stream, flushIntervalMs: 20, rawSampleRate: 1, maxPendingBatches: 3, onWarning: () => undefined });
    try {
      for (let i = 0; i < 200; i++) sink.record(sample(i)); // 20 MB of keys: ~10 entries of raw rows, the cap is 3
      await drained(sink, 200);
      const stats = await sink.close();
      const batches = await entriesOf(stream);
      const counted = batches.flatMap((b) => b.rollups).reduce((sum, r) => sum + r.values[0], 0);
      expect(counted).toBe(200);
      expect(stats).toMatchObject({ recorded: 200, written: 200, dropped: 0, pending: 0 });
      // The control: the cap did bite (so the old rule, dropping the oldest entry, would have dropped the rollups).
      const sentRaw = batches.reduce((sum, b) => sum + b.raw.length, 0);
      expect(batches.filter((b) => b.raw.length > 0)).toHaveLength(3);
      expect(stats.rawDropped).toBeGreaterThan(0);
      expect(sentRaw + stats.rawDropped).toBe(200);
      // The losses reach the collector: the close's entry carries the raw rows dropped.
      expect(batches.at(-1)!.counters).toEqual({ recorded: 200, dropped: 0, rawDropped: stats.rawDropped });
    } finally {
      await redis.del(stream);
    }
  });

  it('item 5: splitting and encoding are bounded per timer turn: the event loop’s longest block stays under 500 ms, or a fifth of one turn doing it all', async () => {
    const stream = `test:sink:item5:loop:${Date.now()}`;
    const n = 1000; // 100 MB of keys, ~50 entries
    const sink = new RedisStreamSink(redis, { stream, flushIntervalMs: 20, rawSampleRate: 1, maxPendingBatches: 1000, flushTimeoutMs: 60_000 });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    try {
      for (let i = 0; i < n; i++) sink.record(sample(i));
      delay.enable(); // from here on the sink's timer seals, splits, encodes and sends
      await drained(sink, n);
      delay.disable();
      const stats = await sink.close();
      expect(stats).toMatchObject({ recorded: n, written: n, dropped: 0, rawWritten: n, rawDropped: 0 });
      const batches = await entriesOf(stream);
      expect(batches.reduce((sum, b) => sum + b.raw.length, 0)).toBe(n);
      expect(batches.length).toBeGreaterThan(40);
    } finally {
      delay.disable();
      await redis.del(stream);
    }

    // The control: the same rows encoded in one turn, as the sink did before, block for far longer (seconds here).
    const rows: RawRow[] = Array.from({ length: n }, (_, i) => [Date.now(), `${big}:${i}`, 'k{id}', 1000, 0, 3000, 8, 0, 0, 0]);
    const entries = new StreamBatcher('control').entries([{ instance: 'control', rollups: [], raw: rows }]);
    const started = performance.now();
    for (const entry of entries) encodeSealed(entry);
    const oneTurnMs = performance.now() - started;
    // Against the sink's usual turn (the 90th percentile): the longest one seen on a loaded host is the host's (401 ms once).
    expect(oneTurnMs).toBeGreaterThan(5 * (delay.percentile(90) / 1e6));
    // The longest block: under 500 ms, or, on a host loaded enough to stretch every turn (555 ms at load 12, a
    // garbage collection in it), under a fifth of what the same work (~50 entries) takes in one turn there.
    expect(delay.max / 1e6, `longest block ${(delay.max / 1e6).toFixed(0)} ms, all in one turn ${oneTurnMs.toFixed(0)} ms`).toBeLessThan(Math.max(500, oneTurnMs / 5));
  });
});
