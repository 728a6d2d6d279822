import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { built } from '../helpers/built.js';
import { startChild, type Child } from '../helpers/child.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';
import { withTimerLag } from '../helpers/timer-lag.js';
import { librariesOf, readLeases, valuesOf, type PatternLeases } from '../helpers/watch-lease-db.js';
import { startWatch } from '../helpers/watch-cli.js';
import { runCli } from '../helpers/cli.js';
import { analyze } from '../../src/index.js';

/**
 * Real BullMQ workers under `ttl-advisor watch`, each in a process of its own, on a
 * redis-server of this file's own. BullMQ takes a job's lock with SET PX lockDuration
 * in moveToActive's Lua, renews it the same way in extendLocks, and deletes it in
 * moveToFinished. With lockDuration 2000 ms, jobs of known lengths, some of which block
 * their worker's event loop (a busy loop) while others run: their renewals come late.
 * Each worker times its own lock traffic; watch's gaps, lateness (gap − lockDuration / 2)
 * and margins must agree with it. A job that blocks longer than lockDuration loses its
 * lock: an expiration (BullMQ calls the job stalled).
 *
 * BullMQ 6 renews more often than its `lockRenewTime` (lockDuration / 2) says: its timer
 * ticks every lockRenewTime / 2 and renews the locks older than that, so a renewal on
 * time comes ~lockDuration / 4 after the last (~505 ms here) and is early against
 * lockDuration / 2 (lateness 0); only an event loop blocked for more than that is late.
 */

const workerScript = built('test/helpers/watch-lease-bullmq-worker.ts');
const dir = tempDir();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running: ChildProcess[] = [];
const LOCK_DURATION_MS = 2000;
let server: RedisServer;

interface TimedJob {
  id: string;
  acquiredMs: number;
  renewedMs: number[];
}

/** What a worker timed (see watch-lease-bullmq-worker.ts): its jobs, and how well it knows its own times. */
interface Timed {
  jobs: TimedJob[];
  windowMs: number;
}

beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(() => {
  for (const p of running.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});
afterAll(async () => {
  await server.stop();
});

function startWorker(queue: string, concurrency: number, jobs: number): Child {
  return startChild(process.execPath, [workerScript, String(server.port), queue, String(LOCK_DURATION_MS), String(concurrency), String(jobs)], running);
}

async function timedBy(worker: Child): Promise<Timed> {
  const { code } = await worker.exited;
  expect(code, worker.output()).toBe(0);
  return JSON.parse(worker.output().trim().split('\n').pop()!) as Timed;
}

/** Each renewal's gap from the acquire or renewal before, as the worker timed them (ms). */
function gapsOf(jobs: readonly TimedJob[]): number[] {
  return jobs.flatMap((j) => j.renewedMs.map((at, i) => at - (i === 0 ? j.acquiredMs : j.renewedMs[i - 1]!)));
}

/**
 * Watch's values against the worker's, rank by rank (the database keeps distributions, not renewals): the
 * largest difference, and whether every one is within 1 ms + 1 % of what the worker measured (`measuredMs`, by
 * default its value) + `slackMs`.
 */
function compare(watchUs: readonly number[], workerMs: readonly number[], slackMs: number, measuredMs: readonly number[] = workerMs): { worstMs: number; within: boolean } {
  const sorted = [...workerMs].sort((a, b) => a - b);
  const measured = [...measuredMs].sort((a, b) => a - b);
  expect(watchUs).toHaveLength(sorted.length);
  let worstMs = 0;
  let within = true;
  sorted.forEach((ms, i) => {
    const diff = Math.abs(watchUs[i]! / 1000 - ms);
    worstMs = Math.max(worstMs, diff);
    if (diff > 1 + 0.01 * Math.abs(measured[i]!) + slackMs) within = false;
  });
  return { worstMs, within };
}

describe('watch: BullMQ job locks are leases', () => {
  const db = join(dir, 'bullmq.db');
  let render: Timed;
  let report: Timed;
  /** How late this process ran a timer while the workload ran (ms): the watcher's stamps wait for a CPU as long. */
  let hostLagMs: number;
  let stopped: string;
  let leases: Map<string, PatternLeases>;

  beforeAll(async () => {
    // bull:* rather than *lock*: BullMQ's other keys (its stalled-check, de-duplication keys, job hashes) are seen too.
    const w = startWatch(server.url, db, running, '--configure', '--match', 'bull:*', '--db-index', '0', '--progress-ms', '60000');
    await w.said('subscribed on 1 node');
    const connection = { host: '127.0.0.1', port: server.port };
    const renderQueue = new Queue('render', { connection });
    const reportQueue = new Queue('report', { connection });
    try {
      // The workers wait for jobs first: a worker's first command waits for its connection's setup, so an acquire
      // sent at its start is not taken when sent (~15 ms later), and the worker would time it early.
      const renderWorker = startWorker('render', 4, 9);
      const reportWorker = startWorker('report', 1, 2);
      await Promise.all([renderWorker.said('ready', 60_000), reportWorker.said('ready', 60_000)]);
      // Four at once: two that wait, two that block the event loop (1.3 s, then 700 ms, each from a renewal on:
      // the next renewal of every job renewed with it then comes that much later) while the others run;
      // then four short ones and one with a de-duplication key (SET PX, deleted when done: not a lock).
      await renderQueue.addBulk([
        { name: 'wait', data: { sleepMs: 3200 } },
        { name: 'wait', data: { sleepMs: 4300 } },
        { name: 'block', data: { sleepMs: 600, blockMs: 1300, afterMs: 1500 } },
        { name: 'block', data: { sleepMs: 2300, blockMs: 700, afterMs: 900 } },
        ...Array.from({ length: 4 }, () => ({ name: 'short', data: { sleepMs: 100 } })),
      ]);
      await renderQueue.add('dedup', { sleepMs: 50 }, { deduplication: { id: 'nightly', ttl: 5000 } });
      // One short job (a release: the pattern is a lock), then one that blocks 3 s with a 2 s lock: its lock expires.
      await reportQueue.addBulk([
        { name: 'short', data: { sleepMs: 100 } },
        { name: 'overrun', data: { sleepMs: 700, blockMs: 3000 } },
      ]);
      ({ result: [render, report], lagMs: hostLagMs } = await withTimerLag(() => Promise.all([timedBy(renderWorker), timedBy(reportWorker)])));
      await sleep(500); // the overrun's `expired` is in (Redis expires a key within ~100 ms of its TTL)
    } finally {
      await Promise.all([renderQueue.close(), reportQueue.close()]);
    }
    w.proc.kill('SIGTERM');
    expect((await w.exited).code, w.output()).toBe(0);
    stopped = w.output().trim().split('\n').pop()!;
    leases = readLeases(db);
  }, 120_000);

  it('every job lock is one sample under bull:<queue>:{id}:lock, the overrun an expiration; no other BullMQ key is', () => {
    expect(render.jobs).toHaveLength(9);
    expect(stopped).toMatch(/^stopped: 11 locks recorded \(10 released, 1 expired, 0 lost\); 0 open at exit/);
    expect([...leases.keys()].sort()).toEqual(['bull:render:{id}:lock', 'bull:report:{id}:lock']);
    expect(leases.get('bull:render:{id}:lock')).toMatchObject({ count: 9, released: 9, expired: 0 });
    expect(leases.get('bull:report:{id}:lock')).toMatchObject({ count: 2, released: 1, expired: 1 });
    for (const { count, lease } of leases.values()) {
      // Every hold a BullMQ lease, its period lockDuration / 2 of the TTL as read (a loaded host reads a TTL a
      // little low, never high); no round trip: watch does not see one.
      expect(librariesOf(lease)).toEqual({ bullmq: count });
      expect([...lease.periods].reduce((n, [, holds]) => n + holds, 0)).toBe(count);
      for (const [periodMs] of lease.periods) expect(periodMs).toBeGreaterThanOrEqual(0.95 * (LOCK_DURATION_MS / 2));
      for (const [periodMs] of lease.periods) expect(periodMs).toBeLessThanOrEqual(LOCK_DURATION_MS / 2);
      expect(lease.roundTrip.totalCount).toBe(0);
    }
  });

  it("watch's renewal gaps and lateness agree with the worker's own timing: 1 ms + 1 %, plus how well the worker knows it", () => {
    const { lease } = leases.get('bull:render:{id}:lock')!;
    const gaps = gapsOf(render.jobs);
    const lateness = gaps.map((g) => Math.max(0, g - LOCK_DURATION_MS / 2));
    // The blocked event loops made renewals late against lockDuration / 2 (the control: some were, by far more than the slack).
    expect(Math.max(...lateness)).toBeGreaterThan(200);
    // The worker knows when Redis ran its SET only to within its send → answer window: a few ms on a loaded 2-core
    // host (0.4–26 ms seen), well under a renewal period. Watch is held to 1 ms + 1 % of the worker's figure, plus that.
    // On a host busier than that (load 6 and over), the watcher's stamps can wait for a CPU longer than the worker's
    // window (47 ms against a 20 ms window once): how late this process ran its timers meanwhile is allowed too, twice
    // over (an allowance measured on the same host, not a bound on the watcher's own wait: the watcher is another
    // process, whose waits need not come when this one's do; once in CI, 61 ms off against 9.4 ms of window and 36.7 of lag).
    expect(render.windowMs).toBeLessThan(LOCK_DURATION_MS / 8);
    const slackMs = render.windowMs + 2 * hostLagMs;
    // Else the comparison below could not fail: a watcher that saw no renewal late (every gap the period) must be
    // off by more than the tolerance at the latest one. (Half the lateness, as this was, failed at load 8 with a
    // 196 ms slack against 310 ms late, a case this still tells apart.)
    expect(1 + 0.01 * Math.max(...gaps) + slackMs).toBeLessThan(Math.max(...lateness));
    expect(lease.gap.totalCount).toBe(gaps.length);
    const gap = compare(valuesOf(lease.gap), gaps, slackMs);
    // Lateness is a gap less the period: its error is the gap's, held to 1 ms + 1 % of that gap (rank by rank: the
    // same order), not of the lateness (a 36 ms error on a 1 s gap failed against 1 % of a 150 ms lateness), plus
    // how far below lockDuration / 2 watch took the period, from the TTL as it read it (checked above: ≤ 5 %).
    const periodLowMs = LOCK_DURATION_MS / 2 - Math.min(...lease.periods.keys());
    const late = compare(valuesOf(lease.lateness), lateness, slackMs + periodLowMs, gaps);
    const maxLate = Math.max(...lateness);
    const leastMarginMs = LOCK_DURATION_MS - Math.max(...gaps); // the longest gap's: a short job had most of its TTL left at its end
    const figures = `watch − worker: gaps ±${gap.worstMs.toFixed(2)} ms, lateness ±${late.worstMs.toFixed(2)} ms; the worker's window ${render.windowMs.toFixed(2)} ms, the host's timer lag ${hostLagMs.toFixed(2)} ms; the period read ${periodLowMs.toFixed(2)} ms low`;
    expect(gap.within, figures).toBe(true);
    expect(late.within, figures).toBe(true);
    expect(Math.abs(lease.lateness.maxValue / 1000 - maxLate)).toBeLessThanOrEqual(1 + 0.01 * Math.max(...gaps) + slackMs + periodLowMs);
    expect(Math.abs(lease.margin.minValue / 1000 - leastMarginMs)).toBeLessThanOrEqual(1 + 0.01 * leastMarginMs + slackMs);
    expect(lease.margin.totalCount).toBe(9);
  });

  it('the job that blocked past lockDuration lost its lock: an expired lease with no margin left', () => {
    const { lease } = leases.get('bull:report:{id}:lock')!;
    expect(lease.gap.totalCount).toBe(gapsOf(report.jobs).length);
    expect(lease.margin.totalCount).toBe(2);
    expect(lease.margin.minValue).toBe(0);
    // Control: the short job before it kept a margin.
    expect(lease.margin.maxValue).toBeGreaterThan(1000_000);
  });

  it('the report advises the leases from that lateness: lockDuration = max(3 s, 2 × q99.9 / (1 − 0.5)); the lost job lock is at risk', async () => {
    const analysis = analyze([db]);
    const renderPattern = analysis.patterns.find((p) => p.pattern === 'bull:render:{id}:lock')!;
    const lease = renderPattern.lease!;
    expect(lease).toMatchObject({ library: 'bullmq', mode: 'period', periodSource: 'known' });
    // BullMQ's period is lockDuration / 2 of the TTL as read (a loaded host reads a TTL a little low).
    expect(lease.periodMs).toBeGreaterThanOrEqual(950);
    expect(lease.periodMs).toBeLessThanOrEqual(1000);
    const expected = Math.max(3000, Math.ceil((2 * lease.latenessMs.p999) / (1 - lease.periodMs / renderPattern.ttl.currentMs) / 100 - 1e-9) * 100);
    expect(lease.recommended.leaseMs).toBe(expected);
    // Under 299 renewals: the need is shown, not a number to set — unless a renewal really came with under the
    // at-risk line left (20 % of the TTL, 400 ms): by the worker's own timing, which a host at load 13 made that late.
    // Near the line either verdict: watch's margins are off the worker's by its window and twice the host's timer lag (as
    // compared above), 1 % and the TTL read low (≤ 5 %).
    const leastMarginMs = LOCK_DURATION_MS - Math.max(...gapsOf(render.jobs));
    expect(lease.atRiskBelowMs).toBeGreaterThan(0.19 * LOCK_DURATION_MS);
    if (Math.abs(leastMarginMs - lease.atRiskBelowMs) > render.windowMs + 2 * hostLagMs + 0.06 * LOCK_DURATION_MS) {
      expect(renderPattern.verdict).toBe(leastMarginMs < lease.atRiskBelowMs ? 'lease-at-risk' : 'insufficient-data');
    } else expect(['lease-at-risk', 'insufficient-data']).toContain(renderPattern.verdict);
    const lost = analysis.patterns.find((p) => p.pattern === 'bull:report:{id}:lock')!;
    expect(lost.verdict).toBe('lease-at-risk');
    expect(lost.lease!.ranOut).toBe(1);
    const { code, stdout } = await runCli(['report', '--db', db, '--format', 'md', '--out', join(dir, 'out')]);
    expect(code).toBe(0);
    const md = readFileSync(join(dir, 'out', 'ttl-report.md'), 'utf8');
    expect(md).toMatch(/🔴 lease at risk/);
    expect(md).toMatch(/1 job lock\(s\) ran out \(taken as stalled: the job may run twice\)/);
    expect(md).toMatch(/BullMQ lease: \d+ renewal\(s\) of 9 hold\(s\), due at most (1 s|9\d\d ms) apart \(the holders' period\)/);
    if (process.env.TTL_ADVISOR_SHOW) console.log(stdout, md);
  });
});

