import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics } from '@opentelemetry/api';
import { DataPointType, MeterProvider, MetricReader, type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, DURATION_BUCKETS_S, METRIC_NAMES, OTEL_RECORDER_DEFAULTS, OtelRecorder, SqliteRecorder, instrument, withLock, type LockSample, type OtelWarningKind } from '../../src/index.js';
import { queryDb } from '../helpers/db.js';

/** A reader the test collects from when it wants: what an exporter would be handed. */
class CollectingReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function collect(reader: CollectingReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics } = await reader.collect();
  return new Map(resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((metric) => [metric.descriptor.name, metric]));
}

function setUp() {
  const reader = new CollectingReader();
  const provider = new MeterProvider({ readers: [reader] });
  return { reader, provider, meter: provider.getMeter('ttl-advisor') };
}

const at = () => Date.now();
const sample = (over: Partial<LockSample>): LockSample => ({ key: 'order:lock:product:1', at: at(), holdMs: 120, waitMs: 3, ttlMs: 5000, outcome: 'released', ...over });

describe('OtelRecorder: metrics out through OpenTelemetry', () => {
  let redis: Redis;
  const dir = mkdtempSync(join(tmpdir(), 'ttl-advisor-otel-'));

  beforeAll(() => {
    redis = new Redis(inject('redisUrl'));
  });
  afterAll(async () => {
    await redis.quit();
    rmSync(dir, { recursive: true, force: true });
  });

  it('withLock and SQLite together: documented names, units, attributes and buckets, and the same counts in both', async () => {
    const { reader, meter } = setUp();
    const otel = new OtelRecorder({ meter, patterns: ['order:lock:product:{id}'] });
    const sqlite = new SqliteRecorder({ path: join(dir, 'both.db') });
    for (let i = 0; i < 30; i++) {
      await withLock(redis, `order:lock:product:${i}`, () => new Promise((resolve) => setTimeout(resolve, i % 3)), { ttlMs: 4000, recorder: [sqlite, otel] });
    }
    await sqlite.close();
    const byName = await collect(reader);
    expect([...byName.keys()].sort()).toEqual([METRIC_NAMES.hold, METRIC_NAMES.outcomes, METRIC_NAMES.ttl, METRIC_NAMES.wait].sort());

    const hold = byName.get(METRIC_NAMES.hold)!;
    expect(hold.descriptor.unit).toBe('s');
    expect(hold.dataPointType).toBe(DataPointType.HISTOGRAM);
    const [point] = hold.dataPoints as DataPoint<Histogram>[];
    expect(point!.attributes).toEqual({ pattern: 'order:lock:product:{id}', source: 'withLock' });
    expect(point!.value.buckets.boundaries).toEqual([...DURATION_BUCKETS_S]);
    expect(point!.value.count).toBe(30);
    // Seconds, not milliseconds: 30 holds of a few ms each.
    expect(point!.value.sum).toBeGreaterThan(0);
    expect(point!.value.sum).toBeLessThan(30 * 0.5);

    const outcomes = byName.get(METRIC_NAMES.outcomes)!;
    expect(outcomes.dataPoints).toEqual([expect.objectContaining({ attributes: { pattern: 'order:lock:product:{id}', source: 'withLock', outcome: 'released' }, value: 30 })]);
    expect(byName.get(METRIC_NAMES.ttl)!.dataPoints).toEqual([expect.objectContaining({ attributes: { pattern: 'order:lock:product:{id}', source: 'withLock' }, value: 4 })]);

    const [row] = queryDb<{ n: number }>(join(dir, 'both.db'), 'SELECT sum(count) n FROM rollups');
    expect(row!.n).toBe(30);
    expect(otel.stats()).toEqual({ recorded: 30, dropped: 0, patternOverflow: 0, failed: 0 });
  });

  it('never names a key, a token or an instance: only pattern, source and outcome', async () => {
    const { reader, meter } = setUp();
    const otel = new OtelRecorder({ meter, source: 'instrument' });
    const client = instrument(new Redis(inject('redisUrl')), { recorder: otel });
    try {
      for (let i = 0; i < 5; i++) {
        const key = `cart:lock:user:${1000 + i}`;
        await client.set(key, `token-${i}`, 'PX', 3000, 'NX');
        await client.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0", 1, key, `token-${i}`);
      }
    } finally {
      await client.quit();
    }
    const byName = await collect(reader);
    const attributes = [...byName.values()].flatMap((m) => m.dataPoints.map((p) => p.attributes));
    expect(attributes.length).toBeGreaterThan(0);
    for (const a of attributes) {
      expect(Object.keys(a).every((k) => ['pattern', 'source', 'outcome'].includes(k))).toBe(true);
      expect(JSON.stringify(a)).not.toMatch(/token-|1000|cart:lock:user:1/);
    }
    expect(byName.get(METRIC_NAMES.outcomes)!.dataPoints).toEqual([
      expect.objectContaining({ attributes: { pattern: 'cart:lock:user:{id}', source: 'instrument', outcome: 'released' }, value: 5 }),
    ]);
  });

  it('caps the patterns it names; the rest are {other}, counted and said once', async () => {
    const { reader, meter } = setUp();
    const warnings: OtelWarningKind[] = [];
    const otel = new OtelRecorder({ meter, maxPatterns: 3, onWarning: (w) => warnings.push(w.kind) });
    for (const name of ['a', 'b', 'c', 'd', 'e']) for (let i = 0; i < 2; i++) otel.record(sample({ key: `${name}svc:lock:item:${i}` }));
    const patterns = (await collect(reader)).get(METRIC_NAMES.hold)!.dataPoints.map((p) => [p.attributes.pattern, (p as DataPoint<Histogram>).value.count]);
    expect(patterns.sort()).toEqual([['asvc:lock:item:{id}', 2], ['bsvc:lock:item:{id}', 2], ['csvc:lock:item:{id}', 2], ['{other}', 4]]);
    expect(otel.stats()).toMatchObject({ recorded: 10, patternOverflow: 4 });
    expect(warnings).toEqual(['pattern-overflow']);
  });

  it('renewal lateness, waits and censored holds; invalid samples are counted drops, never thrown', async () => {
    const { reader, meter } = setUp();
    const warnings: OtelWarningKind[] = [];
    const otel = new OtelRecorder({ meter, onWarning: (w) => warnings.push(w.kind) });
    otel.record(sample({ key: 'job:lease:1', holdMs: 9000, ttlMs: 3000, renewal: { gapsMs: [1000, 1250, 1000], periodMs: 1000, minMarginMs: 1750 } }));
    otel.record(sample({ key: 'job:lease:2', holdMs: 3000, ttlMs: 3000, outcome: 'expired', censored: true }));
    otel.record(sample({ key: 'job:lease:3', holdMs: undefined, waitMs: 2000, outcome: 'not_acquired' }));
    for (const bad of [null, {}, sample({ holdMs: -1 }), sample({ outcome: 'maybe' as never }), sample({ at: 1 })]) expect(() => otel.record(bad as LockSample)).not.toThrow();
    const byName = await collect(reader);
    const lateness = byName.get(METRIC_NAMES.lateness)!.dataPoints[0] as DataPoint<Histogram>;
    expect(lateness.value).toMatchObject({ count: 3, sum: 0.25 });
    const wait = byName.get(METRIC_NAMES.wait)!.dataPoints[0] as DataPoint<Histogram>;
    expect(wait.value.count).toBe(3);
    const outcomes = Object.fromEntries(byName.get(METRIC_NAMES.outcomes)!.dataPoints.map((p) => [p.attributes.outcome, p.value]));
    expect(outcomes).toEqual({ released: 1, expired: 1, not_acquired: 1 });
    expect(otel.stats()).toEqual({ recorded: 3, dropped: 5, patternOverflow: 0, failed: 0 });
    expect(warnings).toEqual(['invalid-sample']);
  });

  it('without a meter, records to the application’s global meter provider', async () => {
    const { reader, provider } = setUp();
    metrics.setGlobalMeterProvider(provider);
    try {
      const otel = new OtelRecorder();
      otel.record(sample({}));
      const hold = (await collect(reader)).get(METRIC_NAMES.hold)!;
      expect((hold.dataPoints[0] as DataPoint<Histogram>).value.count).toBe(1);
    } finally {
      metrics.disable();
    }
  });

  it('checks its options at the boundary, naming the option; the defaults are one frozen object', () => {
    const { meter } = setUp();
    expect(OTEL_RECORDER_DEFAULTS).toEqual({ maxPatterns: 100, source: 'withLock' });
    expect(Object.isFrozen(OTEL_RECORDER_DEFAULTS)).toBe(true);
    const refusals: [object, string][] = [
      [{ meter: {} }, 'Expected `meter` to be an OpenTelemetry Meter, got `[object Object]`'],
      [{ meter, maxPatterns: 0 }, 'Expected `maxPatterns` to be a positive integer, got `0`'],
      [{ meter, source: 'cron' }, 'Expected `source` to be one of withLock, instrument, watch, got `"cron"`'],
      [{ meter, patterns: 'a:{id}' }, 'Expected `patterns` to be an array of strings, got `"a:{id}"`'],
      [{ meter, onWarning: 'log' }, 'Expected `onWarning` to be a function, got `"log"`'],
    ];
    for (const [options, message] of refusals) expect(() => new OtelRecorder(options as never), message).toThrow(new ConfigError(message));
    // The control: the same options, valid, are taken.
    expect(() => new OtelRecorder({ meter, maxPatterns: 1, source: 'watch', patterns: ['a:{id}'], onWarning: () => {} }).close()).not.toThrow();
  });

  it('O1: a meter whose instruments are undefined (or lack their methods): a ConfigError that says what the meter returned, never a TypeError', () => {
    const { meter } = setUp();
    const real = {
      createHistogram: meter.createHistogram.bind(meter),
      createCounter: meter.createCounter.bind(meter),
      createObservableGauge: meter.createObservableGauge.bind(meter),
    };
    const cases: [object, RegExp][] = [
      [{ createHistogram: () => undefined, createCounter: () => undefined, createObservableGauge: () => undefined }, /^`meter`\.createHistogram\(\) returned `undefined`, not a histogram/],
      [{ ...real, createCounter: () => undefined }, /^`meter`\.createCounter\(\) returned `undefined`, not a counter/],
      [{ ...real, createObservableGauge: () => null }, /^`meter`\.createObservableGauge\(\) returned `null`, not an observable gauge/],
      [{ ...real, createObservableGauge: () => ({}) }, /^`meter`\.createObservableGauge\(\) returned `\[object Object\]`, not an observable gauge/],
      [{ createHistogram: real.createHistogram }, /^Expected `meter` to be an OpenTelemetry Meter/],
      [{ ...real, createHistogram: () => { throw new Error('meter closed'); } }, /^`meter`\.createHistogram\(\) threw: meter closed/],
    ];
    for (const [broken, message] of cases) {
      let thrown: unknown;
      try {
        new OtelRecorder({ meter: broken as never }).close();
      } catch (error) {
        thrown = error;
      }
      expect(thrown, String(message)).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message).toMatch(message);
    }
  });
});
