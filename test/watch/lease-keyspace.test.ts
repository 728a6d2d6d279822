import { describe, expect, it } from 'vitest';
import { compileTemplates } from '../../src/keys/pattern.js';
import { MAX_RENEWAL_GAPS, type LockSample } from '../../src/sample/sample.js';
import { KeyspaceTracker } from '../../src/watch/keyspace-tracker.js';
import { LearnedPatterns } from '../../src/sample/learned-patterns.js';
import { bullmqPatternOf, isLibraryNonLock } from '../../src/watch/lease-keys.js';

/**
 * Leases as the keyspace tracker sees them, with an injected clock: each renewal's gap, the least
 * margin (the TTL the acquire or renewal before set, less the gap), BullMQ's and Redisson's locks
 * told apart without configuration, and their keys that are not locks never sampled.
 */

function tracker(templates: string[] = []) {
  const samples: LockSample[] = [];
  const pending: (() => void)[] = [];
  const asked: string[] = [];
  /** PTTL's answers, read when they are given: a test changes them between renewals. */
  const ttls: Record<string, number> = {};
  const t = new KeyspaceTracker({
    recorder: { record: (s) => void samples.push(s) },
    templates: compileTemplates(templates),
    instance: undefined,
    maxOpen: 1000,
    readTtl: (_n, _db, key) => {
      asked.push(key);
      return new Promise((resolve) => pending.push(() => resolve(ttls[key] ?? -2)));
    },
  });
  const answer = async () => {
    for (const p of pending.splice(0)) p();
    await new Promise((r) => setTimeout(r, 0));
  };
  /** The events a client's command emits, all at `atMs` (a Lua script's are one instant). */
  const events = (key: string, atMs: number, ...names: string[]) => names.forEach((e) => t.onEvent('n', 0, key, e, atMs));
  return { t, samples, answer, asked, ttls, events };
}

describe('renewal timings of a held key', () => {
  it('each SET or foreign PEXPIRE on a held key is a renewal: its gap, and the TTL before it less the gap', async () => {
    const { samples, answer, ttls, events } = tracker();
    ttls['job:lock:1'] = 1000;
    events('job:lock:1', 0, 'set', 'expire'); // SET NX PX 1000
    await answer();
    events('job:lock:1', 400, 'set', 'expire'); // SET XX PX: gap 400, margin 600
    await answer();
    events('job:lock:1', 900, 'expire'); // PEXPIRE: gap 500, margin 500
    await answer();
    events('job:lock:1', 1600, 'expire'); // gap 700, margin 300: the least
    await answer();
    events('job:lock:1', 1700, 'del');
    // Never renewed, and no library known: not a lease.
    ttls['job:lock:2'] = 1000;
    events('job:lock:2', 2000, 'set', 'expire');
    await answer();
    events('job:lock:2', 2050, 'del');
    expect(samples.map((s) => [s.key, s.outcome, s.holdMs, s.extensions, s.renewal])).toEqual([
      ['job:lock:1', 'released', 1700, 3, { gapsMs: [400, 500, 700], periodMs: undefined, minMarginMs: 300, library: 'unknown' }],
      ['job:lock:2', 'released', 50, 0, undefined],
    ]);
  });

  it('the margin is against the TTL the renewal before set (redis-py adds to what is left); a late renewal has a negative margin', async () => {
    const { samples, answer, ttls, events } = tracker();
    ttls['py:lock:1'] = 1000;
    events('py:lock:1', 0, 'set', 'expire');
    await answer();
    ttls['py:lock:1'] = 1200; // extend(1000) with 200 left
    events('py:lock:1', 800, 'expire'); // margin 1000 - 800 = 200
    await answer();
    events('py:lock:1', 1900, 'expire'); // margin 1200 - 1100 = 100
    await answer();
    ttls['py:lock:1'] = 500;
    events('py:lock:1', 3200, 'expire'); // margin 1200 - 1300 = -100: came after the TTL had run out
    await answer();
    events('py:lock:1', 3300, 'del');
    expect(samples[0]!.renewal).toEqual({ gapsMs: [800, 1100, 1300], periodMs: undefined, minMarginMs: -100, library: 'unknown' });
  });

  it('a renewal before the acquire TTL is read waits for it; gaps are capped, the margin covers every renewal', async () => {
    const { samples, answer, ttls, events } = tracker();
    ttls['fast:lock:1'] = 100;
    events('fast:lock:1', 0, 'set', 'expire');
    events('fast:lock:1', 30, 'expire'); // PTTL has not answered yet
    await answer();
    const n = MAX_RENEWAL_GAPS + 44;
    for (let i = 2; i <= n; i++) events('fast:lock:1', 30 + (i - 1) * 40 + (i === n ? 50 : 0), 'expire'); // the last: gap 90
    await answer();
    events('fast:lock:1', 30 + n * 40 + 50, 'del');
    const renewal = samples[0]!.renewal!;
    expect(samples[0]!.extensions).toBe(n);
    expect(renewal.gapsMs).toHaveLength(MAX_RENEWAL_GAPS);
    expect(renewal.gapsMs.slice(0, 3)).toEqual([30, 40, 40]);
    expect(renewal.minMarginMs).toBe(10);
  });

  it('a renewed hold that expires had no margin left at its missed renewal', async () => {
    const { samples, answer, ttls, events } = tracker();
    ttls['job:lock:1'] = 1000;
    events('job:lock:1', 0, 'set', 'expire');
    await answer();
    events('job:lock:1', 0, 'del'); // the pattern is a lock
    events('job:lock:2', 0, 'set', 'expire');
    await answer();
    events('job:lock:2', 500, 'expire');
    await answer();
    events('job:lock:2', 1600, 'expired');
    expect(samples[1]).toMatchObject({ key: 'job:lock:2', outcome: 'expired', censored: true, extensions: 1 });
    expect(samples[1]!.renewal).toEqual({ gapsMs: [500], periodMs: undefined, minMarginMs: 0, library: 'unknown' });
  });
});

describe('lease libraries told apart without configuration', () => {
  it("BullMQ: bull:<queue>:<jobId>:lock is its job lock, renewed every lockDuration / 2; one pattern whatever the job ids", async () => {
    const { samples, answer, ttls, events } = tracker();
    for (const key of ['bull:render:41:lock', 'bull:render:42:lock', 'bull:render:order-lock-7:lock', 'bull:q12:5:lock']) ttls[key] = 2000;
    events('bull:render:41:lock', 0, 'set', 'expire'); // moveToActive's SET PX lockDuration
    await answer();
    events('bull:render:41:lock', 120, 'del'); // done before its first renewal
    events('bull:render:42:lock', 0, 'set', 'expire');
    await answer();
    events('bull:render:42:lock', 700, 'set', 'expire'); // extendLocks: SET PX again
    await answer();
    events('bull:render:42:lock', 1900, 'set', 'expire'); // a blocked event loop: 200 ms late against 1000
    await answer();
    events('bull:render:42:lock', 2000, 'del'); // moveToFinished
    events('bull:render:order-lock-7:lock', 3000, 'set', 'expire');
    events('bull:q12:5:lock', 3000, 'set', 'expire');
    await answer();
    events('bull:render:order-lock-7:lock', 3010, 'del');
    events('bull:q12:5:lock', 3010, 'del');
    expect(samples.map((s) => [s.key, s.pattern, s.renewal])).toEqual([
      ['bull:render:41:lock', 'bull:render:{id}:lock', { gapsMs: [], periodMs: 1000, minMarginMs: 1880, library: 'bullmq' }],
      ['bull:render:42:lock', 'bull:render:{id}:lock', { gapsMs: [700, 1200], periodMs: 1000, minMarginMs: 800, library: 'bullmq' }],
      ['bull:render:order-lock-7:lock', 'bull:render:{id}:lock', { gapsMs: [], periodMs: 1000, minMarginMs: 1990, library: 'bullmq' }],
      ['bull:q12:5:lock', 'bull:q12:{id}:lock', { gapsMs: [], periodMs: 1000, minMarginMs: 1990, library: 'bullmq' }],
    ]);
  });

  it("BullMQ's other keys (stalled-check, de-duplication, job hashes) are never samples, nor asked their TTL", async () => {
    const { t, samples, answer, asked, ttls, events } = tracker();
    ttls['bull:render:stalled-check'] = 30_000;
    ttls['bull:render:de:report-1'] = 5000;
    events('bull:render:stalled-check', 0, 'set', 'expire');
    events('bull:render:de:report-1', 0, 'set', 'expire');
    events('bull:render:dn:report-1', 0, 'set');
    events('bull:render:7', 0, 'hincrby'); // moveToActive's HINCRBY of the job's "ats"
    await answer();
    events('bull:render:de:report-1', 100, 'del');
    events('bull:render:stalled-check', 30_000, 'expired');
    expect(samples).toEqual([]);
    expect(asked).toEqual([]);
    expect(t.stats()).toMatchObject({ open: 0, notLocks: 0, ignored: 0, unconfirmed: 0 });
    // Control: the same shapes under another prefix are locks.
    ttls['app:render:de:report-1'] = 5000;
    events('app:render:de:report-1', 200, 'set', 'expire');
    await answer();
    events('app:render:de:report-1', 300, 'del');
    expect(samples.map((s) => s.key)).toEqual(['app:render:de:report-1']);
    expect([isLibraryNonLock('bull:render:9:lock'), isLibraryNonLock('redisson_unlock_latch:{a}:b'), isLibraryNonLock('bull-lock:1')]).toEqual([false, true, false]);
  });

  it('Redisson: a hash taken with HINCRBY + PEXPIRE, renewed by PEXPIRE every lockWatchdogTimeout / 3, released by DEL', async () => {
    const { t, samples, answer, asked, ttls, events } = tracker();
    ttls['order:lock:9'] = 30_000;
    events('order:lock:9', 0, 'hincrby', 'expire'); // tryLockInnerAsync
    await answer();
    events('order:lock:9', 10_000, 'expire'); // the watchdog
    await answer();
    events('order:lock:9', 20_300, 'expire');
    await answer();
    events('order:lock:9', 21_000, 'hincrby', 'expire'); // a re-entry: its PEXPIRE pushes the TTL out too
    await answer();
    events('order:lock:9', 24_000, 'hincrby'); // unlock: down to 0…
    events('redisson_unlock_latch:{order:lock:9}:a1b2', 24_000, 'set', 'expire'); // …its latch (SET PX), not a lock
    events('order:lock:9', 24_000, 'del');
    // A hash counter the glob matches, without a TTL or given one apart: not taken as a lock, not even asked its TTL.
    events('stats:lock:hits', 25_000, 'hincrby');
    events('stats:lock:daily', 25_000, 'hincrby');
    events('stats:lock:hits', 25_000, 'hincrby');
    events('stats:lock:daily', 25_000, 'expire');
    await answer();
    expect(samples.map((s) => [s.key, s.outcome, s.holdMs, s.ttlMs, s.extensions, s.renewal])).toEqual([
      ['order:lock:9', 'released', 24_000, 30_000, 3, { gapsMs: [10_000, 10_300, 700], periodMs: 10_000, minMarginMs: 19_700, library: 'redisson' }],
    ]);
    expect(asked).toEqual(['order:lock:9', 'order:lock:9', 'order:lock:9', 'order:lock:9']);
    expect(t.stats()).toMatchObject({ open: 0, notLocks: 0 });
  });

  it('a template names a BullMQ lock before its own pattern does; only its lock keys are BullMQ', () => {
    // As watch names keys: the first matching template, then BullMQ's job locks, then what it learns.
    const named = (templates: string[]) => new LearnedPatterns(compileTemplates(templates), undefined, bullmqPatternOf);
    const watched = named(['bull:render:{job}:lock']);
    expect(watched.get('bull:render:order-lock-7:lock')).toBe('bull:render:{job}:lock');
    expect(watched.get('bull:mail:order-lock-7:lock')).toBe('bull:mail:{id}:lock');
    expect(named(['bull:{queue}:{job}:lock']).get('bull:render:42:lock')).toBe('bull:{queue}:{job}:lock');
    expect(named([]).get('bull:mail:a:b:lock')).toBe('bull:mail:a:b:lock');
    expect(named([]).get('bull:{render}:42:lock')).toBe('bull:{{render}}:{id}:lock');
    expect(named([]).get('order:lock:product:123')).toBe('order:lock:product:{id}');
  });
});
