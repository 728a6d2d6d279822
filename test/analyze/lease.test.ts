import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze, SqliteRecorder } from '../../src/index.js';
import { decide } from '../../src/analyze/decision.js';
import { DEFAULT_RECOMMENDATION_POLICY } from '../../src/analyze/recommend.js';
import { mergeDatabases } from '../../src/store/merge.js';
import { refusalOf } from '../../src/sample/check-sample.js';
import { findingText } from '../../src/report/decision-text.js';
import { aggregatorFor } from '../../src/record/aggregator.js';
import { decodeStreamBatch, encodeStreamBatch } from '../../src/fleet/stream-entry.js';
import { HOUR_MS } from '../../src/units.js';
import { tempDir } from '../helpers/temp.js';
import { IN_TIME_REDLOCK, LATE_BULLMQ, recordLeases, type LeaseShape } from '../helpers/lease-data.js';

/**
 * Leases end to end through a real samples file: renewal timings folded into
 * the rollups, read back per pattern, and advised from lateness — not from
 * hold time, which a renewed lock may exceed its TTL by any amount.
 */

const dir = tempDir();
const START = Date.UTC(2026, 10, 30, 0);

describe('leases', () => {
  it('node-redlock using() with a 1 s duration renewing in time: no longer "too short", no failure, lease advice given', async () => {
    // using() renews when 500 ms are left: every ~500 ms, a few ms late.
    const path = await recordLeases(dir, 'redlock', IN_TIME_REDLOCK);
    const [p] = analyze([path]).patterns;
    expect(p!.pattern).toBe('order:lock:{id}');
    const lease = p!.lease!;
    expect(lease).toMatchObject({ library: 'redlock', mode: 'threshold', holds: 400, renewals: 2400, periodSource: 'inferred', atRisk: 0, ranOut: 0 });
    // The median gap is the period; lateness is how far past it a renewal came (at most 10 ms).
    expect(lease.periodMs).toBeGreaterThanOrEqual(500);
    expect(lease.latenessMs.max).toBeLessThanOrEqual(11);
    // threshold ≥ 2 × q99.9 + p99 round trip, rounded up to the 100 ms step.
    expect(lease.recommended.thresholdMs).toBe(100);
    expect(p!.verdict).toBe('ok');
    expect(p!.decision.level).toBe('info');
    expect(p!.decision.apply).toEqual({ kind: 'keep' });
    // The fixed-lock rule would have said 3 × p99 (about 9 s) and "too short".
    expect(p!.holdMs.p99).toBeGreaterThan(3000);
    expect(p!.decision.findings[0]!.kind).toBe('lease');
  });

  it('BullMQ-like renewals that come late: lease-at-risk, and the lease follows L = max(3 s, 2 × q99.9 / (1 − α))', async () => {
    // lockDuration 1,000 ms, renewed every 500 ms; one hold in 40 has a renewal 350–510 ms late (event loop blocked).
    const path = await recordLeases(dir, 'bull', LATE_BULLMQ);
    const [p] = analyze([path]).patterns;
    const lease = p!.lease!;
    expect(p!.pattern).toBe('bull:thumbs:{id}:lock');
    expect(lease).toMatchObject({ library: 'bullmq', mode: 'period', periodSource: 'known', periodMs: 500 });
    expect(lease.atRisk).toBe(10);
    expect(lease.ranOut).toBe(2); // 510 ms late: the 1,000 ms lease had run out 10 ms before
    expect(lease.latenessMs.max).toBeGreaterThanOrEqual(510);
    // q99.9 of 1,200 renewals is the second-largest lateness (510 ms, twice); α = 0.5.
    const expected = Math.ceil((2 * lease.latenessMs.p999) / 0.5 / 100) * 100;
    expect(lease.recommended.leaseMs).toBe(Math.max(3000, expected));
    expect(lease.recommended.leaseMs).toBe(3000); // 2 × 510 ms / 0.5 = 2,040 ms: the floor wins
    expect(p!.verdict).toBe('lease-at-risk');
    expect(p!.decision.level).toBe('fail');
    expect(p!.decision.apply).toEqual({ kind: 'write', toMs: lease.recommended.leaseMs });
    const atRisk = p!.decision.findings.find((f) => f.kind === 'lease-at-risk');
    expect(atRisk).toMatchObject({ atRisk: 10, ranOut: 2, ttlMs: 1000 });

    // The same data judged against the recommended lease: check passes (apply would not change it).
    const after = decide(p!, { ttlMs: lease.recommended.leaseMs, source: 'policy' }, DEFAULT_RECOMMENDATION_POLICY);
    expect(after.apply.kind).toBe('keep');
    expect(after.level).not.toBe('fail');
  });

  it('redis-semaphore refreshing on time at 0.8 of the TTL is not at risk, though it leaves 20 % by design; a late refresh is', async () => {
    const onTime = await recordLeases(dir, 'semaphore', {
      key: (i) => `mutex:stock:${i}`,
      ttlMs: 1000,
      holds: 300,
      renewalsPerHold: 3,
      gapMs: (i, r) => 800 + ((i + r) % 4),
      library: 'redis-semaphore',
      roundTripMs: 1,
    });
    const [p] = analyze([onTime]).patterns;
    // The period is inferred (the median gap, ~801 ms): an on-time refresh leaves ~199 ms, at risk under half of it.
    expect(p!.lease).toMatchObject({ library: 'redis-semaphore', periodSource: 'inferred', atRisk: 0 });
    expect(p!.lease!.atRiskBelowMs).toBeGreaterThan(95);
    expect(p!.lease!.atRiskBelowMs).toBeLessThanOrEqual(100);
    expect(p!.verdict).toBe('ok');
    const late = await recordLeases(dir, 'semaphore-late', {
      key: (i) => `mutex:stock:${i}`,
      ttlMs: 1000,
      holds: 300,
      renewalsPerHold: 3,
      gapMs: (i, r) => (i === 7 && r === 2 ? 950 : 800 + ((i + r) % 4)),
      library: 'redis-semaphore',
    });
    const [q] = analyze([late]).patterns;
    expect(q!.lease).toMatchObject({ atRisk: 1, ranOut: 0 });
    expect(q!.verdict).toBe('lease-at-risk');
  });

  it('node-redlock with a threshold too small for its lateness: at risk, and the advice is the threshold, not the duration', async () => {
    // duration 3 s, automaticExtensionThreshold 100 ms: renewals due 2.9 s apart, one in 50 comes 60–90 ms late.
    const path = await recordLeases(dir, 'redlock-threshold', {
      key: (i) => `sync:lock:${i}`,
      ttlMs: 3000,
      holds: 300,
      renewalsPerHold: 2,
      gapMs: (i, r) => (i % 50 === 0 && r === 1 ? 2960 + (i % 31) : 2900 + (i % 3)),
      library: 'redlock',
      roundTripMs: 2,
    });
    const [p] = analyze([path]).patterns;
    const lease = p!.lease!;
    expect(lease).toMatchObject({ mode: 'threshold', atRisk: 6, ranOut: 0 });
    expect(lease.thresholdMs).toBeLessThanOrEqual(100);
    expect(lease.recommended.thresholdMs).toBeGreaterThan(lease.thresholdMs!);
    expect(p!.verdict).toBe('lease-at-risk');
    // apply cannot mend it by the duration: check warns, naming the threshold.
    expect(p!.decision.apply.kind).toBe('keep');
    expect(p!.decision.level).toBe('warn');
    const text = findingText(p!.decision.findings.find((f) => f.kind === 'lease-at-risk')!);
    expect(text).toMatch(/raise the threshold \(node-redlock's `automaticExtensionThreshold`\) from \d+ ms to at least \d+ ms/);
  });

  it('a Redisson-like 30 s watchdog renewing in time is a lease too long: lowered only where apply would (strict)', async () => {
    const path = await recordLeases(dir, 'redisson', {
      key: (i) => `redisson:lock:${i}`,
      ttlMs: 30_000,
      holds: 300,
      renewalsPerHold: 2,
      gapMs: (i) => 10_000 + (i % 3),
      periodMs: 10_000,
      library: 'redisson',
    });
    const [p] = analyze([path]).patterns;
    expect(p!.verdict).toBe('lease-too-long');
    expect(p!.lease!.recommended.leaseMs).toBe(3000);
    expect(p!.decision.level).toBe('warn');
    const strict = decide(p!, { ttlMs: 30_000, source: 'policy' }, DEFAULT_RECOMMENDATION_POLICY, { minChangePercent: 10, minWindowMs: 0, strict: true, failOnInsufficientData: false });
    expect(strict.level).toBe('fail');
  });

  it('too few renewals: no advice, the need shown; a few renewed holds among many fixed ones are not a lease', async () => {
    const few = await recordLeases(dir, 'few', { key: (i) => `job:lock:${i}`, ttlMs: 2000, holds: 20, renewalsPerHold: 2, gapMs: () => 700, library: 'unknown' });
    const [p] = analyze([few]).patterns;
    expect(p!.verdict).toBe('insufficient-data');
    expect(p!.decision.findings.map((f) => f.kind)).toContain('insufficient-renewals');

    const path = join(dir, 'mixed.db');
    const recorder = new SqliteRecorder({ path });
    for (let i = 0; i < 400; i++) {
      const renewed = i % 50 === 0;
      recorder.record({
        key: `cart:lock:${i}`,
        at: START + i * 1000,
        holdMs: 40,
        ttlMs: 3000,
        outcome: 'released',
        ...(renewed && { extensions: 1, renewal: { gapsMs: [30], minMarginMs: 2970 } }),
      });
    }
    await recorder.close();
    const [mixed] = analyze([path]).patterns;
    expect(mixed!.lease).toBeUndefined();
  });

  it('merge carries the lease parts; a malformed renewal is refused with a reason', async () => {
    const shape: LeaseShape = { key: (i) => `bull:q:${i}:lock`, ttlMs: 1000, holds: 200, renewalsPerHold: 2, gapMs: () => 505, periodMs: 500, library: 'bullmq' };
    const a = await recordLeases(dir, 'merge-a', shape);
    const b = await recordLeases(dir, 'merge-b', shape);
    const merged = join(dir, 'merged.db');
    mergeDatabases(merged, [a, b]);
    const [p] = analyze([merged]).patterns;
    expect(p!.lease).toMatchObject({ holds: 400, renewals: 800, library: 'bullmq' });

    // A stream entry carries the lease part as version 2 (collectors before it refuse it by version); without one, version 1.
    const aggregator = aggregatorFor('sink', [], { maxPatterns: 10, budget: { failed: 0, slowest: 0, uniform: 0 }, rawSampleRate: 0, maxPendingRawRows: 10 });
    aggregator.fold({ key: 'bull:q:1:lock', at: START, holdMs: 900, ttlMs: 1000, outcome: 'released', renewal: { gapsMs: [500], periodMs: 500, minMarginMs: 500, library: 'bullmq' } });
    aggregator.fold({ key: 'cart:lock:1', at: START, holdMs: 9, ttlMs: 1000, outcome: 'released' });
    const [batch] = aggregator.seal(START + 10 * HOUR_MS, true).batches;
    const entry = (rollups: NonNullable<typeof batch>["rollups"]) => encodeStreamBatch({ ...batch!, rollups, epoch: 'e', seq: 1 });
    const withLease = entry(batch!.rollups);
    expect(withLease[1]).toBe('2');
    expect(decodeStreamBatch(withLease).rollups).toHaveLength(2);
    expect(entry(batch!.rollups.filter((r) => r.pattern === 'cart:lock:{id}'))[1]).toBe('1');

    const base = { key: 'k', at: START, holdMs: 1, ttlMs: 10, outcome: 'released' };
    const refusal = (renewal: unknown) => refusalOf(base.key, base.at, base.holdMs, 0, base.ttlMs, 1, base.outcome, undefined, undefined, 1, undefined, undefined, renewal);
    expect(refusal({ gapsMs: [1], minMarginMs: 5 })).toBeUndefined();
    expect(refusal('x')).toMatch(/`renewal` must be an object/);
    expect(refusal({ gapsMs: [Number.NaN], minMarginMs: 5 })).toMatch(/gapsMs/);
    expect(refusal({ gapsMs: new Array(257).fill(1), minMarginMs: 5 })).toMatch(/at most 256/);
    expect(refusal({ gapsMs: [], minMarginMs: 5, library: 'celery' })).toMatch(/unknown `renewal.library`/);
    expect(refusal({ gapsMs: [], minMarginMs: 5, periodMs: -1 })).toMatch(/periodMs/);
    expect(refusalOf(base.key, base.at, undefined, 0, base.ttlMs, 1, 'not_acquired', undefined, undefined, 0, undefined, undefined, { gapsMs: [], minMarginMs: 1 })).toMatch(/needs the `holdMs`/);
  });
});
