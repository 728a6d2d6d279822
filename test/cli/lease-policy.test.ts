import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';
import { IN_TIME_REDLOCK, LATE_BULLMQ, recordLeases } from '../helpers/lease-data.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Leases through the CLI and a policy file: `check` fails on a lease whose
 * renewals came late, `apply` raises the lease (keeping its renewal's share of
 * it), `check` then passes and a second `apply` changes nothing; a lease that
 * renews in time passes whatever its hold times; `init` writes lease entries.
 */

const dir = tempDir();
const NOW = Date.UTC(2026, 11, 2);
let bull = '';
let redlock = '';

beforeAll(async () => {
  // BullMQ, lockDuration 1 s renewed every 500 ms; one job in 40 blocks its worker's event loop 350–510 ms.
  bull = await recordLeases(dir, 'bull', LATE_BULLMQ);
  // node-redlock using(), 1 s duration, renewed with 500 ms left: on time.
  redlock = await recordLeases(dir, 'redlock', IN_TIME_REDLOCK);
});

function policy(name: string, locks: Record<string, unknown>): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ locks }, null, 2) + '\n');
  return path;
}

describe('leases in check, apply and init', () => {
  it('late BullMQ renewals: check fails, apply raises lockDuration keeping renewEveryMs at half, check passes, apply again changes nothing', async () => {
    const path = policy('bull', { 'bull:thumbs:{id}:lock': { ttlMs: 1000, renewEveryMs: 500 } });
    const before = await runCli(['check', '--policy', path, '--db', bull], NOW);
    expect(before.code).toBe(1);
    expect(before.stdout).toMatch(/\| `bull:thumbs:\{id\}:lock` \| 1 s \| \*\*3 s\*\* \|.*🔴 lease at risk/);
    expect(before.stdout).toMatch(/10 of 400 lease\(s\) had under 200 ms left at a renewal, 2 job lock\(s\) ran out \(taken as stalled: the job may run twice\)/);
    expect(before.stdout).toMatch(/Worker option `lockDuration: 3000`/);

    const applied = await runCli(['apply', '--policy', path, '--db', bull], NOW);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/^changed bull:thumbs:\{id\}:lock: 1 s → 3 s$/m);
    expect(JSON.parse(readFileSync(path, 'utf8')).locks['bull:thumbs:{id}:lock']).toEqual({ ttlMs: 3000, renewEveryMs: 1500 });

    const after = await runCli(['check', '--policy', path, '--db', bull], NOW);
    expect(after.code).toBe(0);
    expect((await runCli(['apply', '--policy', path, '--db', bull], NOW)).stdout).toMatch(/no changes; every TTL matches the data/);
  });

  it('node-redlock using() at 1 s renewing in time passes check with its lease advice, though its holds run for seconds', async () => {
    const path = policy('redlock', { 'order:lock:{id}': { ttlMs: 1000, extendThresholdMs: 500 } });
    const { code, stdout } = await runCli(['check', '--policy', path, '--db', redlock], NOW);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(/too short/);
    expect(stdout).toMatch(/node-redlock using\(\) lease: 2,400 renewal\(s\) of 400 hold\(s\), about every 50\d ms \(the median gap\)/);
    expect(stdout).toMatch(/`redlock\.using\(keys, 3000, \{ automaticExtensionThreshold: 100 \}, …\)`/);
    expect((await runCli(['apply', '--policy', path, '--db', redlock], NOW)).stdout).toMatch(/no changes/);
  });

  it('init writes lease entries: the lease, when to renew, and the hold cap', async () => {
    const path = join(dir, 'init.json');
    const { code } = await runCli(['init', '--policy', path, '--db', bull, '--db', redlock], NOW);
    expect(code).toBe(0);
    const { locks } = JSON.parse(readFileSync(path, 'utf8'));
    expect(locks['bull:thumbs:{id}:lock']).toMatchObject({ ttlMs: 3000, renewEveryMs: 1500 });
    expect(locks['bull:thumbs:{id}:lock'].maxHoldMs).toBeGreaterThanOrEqual(3000);
    // A safe lease keeps the TTL in use and gets a threshold at least what lateness needs.
    expect(locks['order:lock:{id}']).toMatchObject({ ttlMs: 1000 });
    expect(locks['order:lock:{id}'].extendThresholdMs).toBeGreaterThanOrEqual(100);
  });

  it('a TTL that falls keeps its lease fields under it: the threshold keeps its share, a renewal interval its share', async () => {
    // 30 s with a 5 s threshold over data that needs 3 s: lowered (--strict is not needed for apply).
    const threshold = policy('threshold', { 'order:lock:{id}': { ttlMs: 30_000, extendThresholdMs: 5000 } });
    await runCli(['apply', '--policy', threshold, '--db', redlock], NOW);
    expect(JSON.parse(readFileSync(threshold, 'utf8')).locks['order:lock:{id}']).toEqual({ ttlMs: 3000, extendThresholdMs: 500 });
    // A fixed lock's data sharing a lease entry moves it too: the renewal interval stays under the TTL.
    const fixed = await recordLeases(dir, 'fixed', { key: (i) => `order:lock:${i}`, ttlMs: 10_000, holds: 400, renewalsPerHold: 0, gapMs: () => 0, library: 'unknown' });
    const renew = policy('renew', { 'order:lock:{id}': { ttlMs: 10_000, renewEveryMs: 8000 } });
    const applied = await runCli(['apply', '--policy', renew, '--db', fixed], NOW);
    expect(applied.code, applied.stderr).toBe(0);
    const entry = JSON.parse(readFileSync(renew, 'utf8')).locks['order:lock:{id}'];
    expect(entry.ttlMs).toBe(3000);
    expect(entry.renewEveryMs).toBe(2400);
    expect((await runCli(['check', '--policy', renew, '--db', fixed], NOW)).code).toBe(0);
  });

  it('α is clamped once: a lease renewed every 100 ms of 8 s (α 0.0125) gets from init the share the report prints (0.05), not the raw one', async () => {
    // redis-semaphore-like, its period known: 100 ms of an 8 s lease, on time. 8 s is under 3 × the 3 s lateness needs: kept.
    const path = await recordLeases(dir, 'tiny-alpha', {
      key: (i) => `report:lock:${i}`,
      ttlMs: 8000,
      holds: 400,
      renewalsPerHold: 3,
      periodMs: 100,
      gapMs: (i, r) => 100 + ((i + r) % 3),
      library: 'redis-semaphore',
    });
    const out = join(dir, 'tiny-alpha-report');
    expect((await runCli(['report', '--db', path, '--out', out, '--format', 'json'], NOW)).code).toBe(0);
    const [reported] = JSON.parse(readFileSync(join(out, 'ttl-report.json'), 'utf8')).patterns;
    expect(reported.findings.find((f: { kind: string }) => f.kind === 'lease').text).toMatch(/\/ \(1 − 0\.05\)\)/);
    const fresh = join(dir, 'tiny-alpha.json');
    expect((await runCli(['init', '--policy', fresh, '--db', path], NOW)).code).toBe(0);
    // 0.05 × 8,000: before α was stored clamped, apply read the raw 0.0125 and wrote 100.
    expect(JSON.parse(readFileSync(fresh, 'utf8')).locks['report:lock:{id}']).toMatchObject({ ttlMs: 8000, renewEveryMs: 400 });
  });

  it('refuses lease fields that cannot work, in one line each', () => {
    const parse = (entry: object) => () => parsePolicy(JSON.stringify({ locks: { 'a:{id}': entry } }), 'p.json');
    expect(parse({ ttlMs: 1000, renewEveryMs: 1000 })).toThrow(/"renewEveryMs" to be a positive integer \(ms\) under "ttlMs" \(1000\), got 1000/);
    expect(parse({ ttlMs: 1000, renewEveryMs: 300, extendThresholdMs: 500 })).toThrow(/not both/);
    expect(parse({ ttlMs: 1000, maxHoldMs: 0 })).toThrow(/"maxHoldMs"/);
    expect(parse({ ttlMs: 1000, renewEveryMs: 400, maxHoldMs: 60000 })()).toMatchObject({ locks: { 'a:{id}': { ttlMs: 1000, renewEveryMs: 400, maxHoldMs: 60000 } } });
  });
});
