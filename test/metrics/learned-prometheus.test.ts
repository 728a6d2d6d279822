import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsEndpoint, type MetricsEndpoint } from '../../src/metrics/endpoint.js';
import { runCli } from '../helpers/cli.js';
import { KEY_KINDS, corpus } from '../helpers/key-corpus.js';
import { startPrometheus, type PrometheusServer } from '../helpers/prometheus-server.js';
import { freePort } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Patterns learned through the metrics door: an OtelRecorder (the SDK's Prometheus exporter, as
 * `watch --metrics-port` serves it) exports a lock keyed by names under its first names until the
 * position is learned, never renaming a series, and exports the renames; a real Prometheus scrapes
 * it, and `report --prometheus` reads every kind of lock as one pattern, as a samples file does.
 */

const dir = tempDir();
const LOCKS = corpus(6000, 21);

describe('patterns learned, through Prometheus', () => {
  let endpoint: MetricsEndpoint;
  let prometheus: PrometheusServer;

  beforeAll(async () => {
    // Room for every kind and the names exported while positions are learned (up to 32 a position; see metrics.md).
    endpoint = await startMetricsEndpoint({ port: await freePort(), host: '127.0.0.1', source: 'withLock', maxPatterns: 300 });
    const at = Date.now() - 60_000;
    for (const lock of LOCKS) endpoint.recorder.record({ key: lock.key, at, holdMs: lock.holdMs, waitMs: 0, attempts: 1, ttlMs: 30_000, outcome: 'released' });
    prometheus = await startPrometheus([new URL(endpoint.url).host]);
    await prometheus.waitFor('sum(ttl_advisor_lock_outcomes_total)', (v) => v === LOCKS.length, 120_000);
    await prometheus.waitFor('count(ttl_advisor_pattern_renamed)', (v) => v > 0, 120_000);
  }, 180_000);
  afterAll(async () => {
    await prometheus?.stop();
    await endpoint?.close();
  });

  it('exports each series under one name for good, the renames beside them, and reads every kind as one pattern', async () => {
    // Provisional series were exported (names before their position was learned) and stay as they were.
    const [series] = await prometheus.query('count(count by (pattern) (ttl_advisor_lock_outcomes_total))');
    expect(Number(series!.value![1])).toBeGreaterThan(KEY_KINDS.length);
    expect(endpoint.recorder.stats().patternOverflow).toBe(0);
    const out = join(dir, 'prom');
    const report = await runCli(['report', '--prometheus', prometheus.url, '--since', '2h', '--format', 'json', '--out', out]);
    expect(report.code, report.stderr).toBe(0);
    const json = JSON.parse(readFileSync(join(out, 'ttl-report.json'), 'utf8')) as { patterns: { pattern: string; count: number }[] };
    const counts = Object.fromEntries(json.patterns.map((p) => [p.pattern, p.count]));
    const expected: Record<string, number> = {};
    for (const l of LOCKS) expected[KEY_KINDS[l.kind]!.pattern] = (expected[KEY_KINDS[l.kind]!.pattern] ?? 0) + 1;
    expect(counts).toEqual(expected);
  });
});
