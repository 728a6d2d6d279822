import { describe, expect, it } from 'vitest';
import type { LockSample } from '../../src/index.js';
import { KeyspaceTracker } from '../../src/watch/keyspace-tracker.js';
import { missingClasses, missingWantedClasses, notificationsOffMessage, wantedOffMessage, withNeededClasses } from '../../src/watch/notifications.js';
import { ReplyParser, encodeCommand, nodeOfUrl, type Reply } from '../../src/watch/resp.js';

describe('the notification classes watch needs', () => {
  it('reads what is missing, A included, and adds only that; h (hash locks) is added but not required', () => {
    expect(missingClasses('')).toBe('Kg$x');
    expect(missingClasses('Ex')).toBe('Kg$');
    expect(missingClasses('KA')).toBe('');
    expect(missingClasses('AE')).toBe('K');
    expect(missingClasses('g$xK')).toBe('');
    expect([missingWantedClasses('g$xK'), missingWantedClasses('KA'), missingWantedClasses('Kg$xh')]).toEqual(['h', '', '']);
    expect(withNeededClasses('Ex')).toBe('ExKg$h');
    expect(withNeededClasses('KA')).toBe('KA');
    expect(notificationsOffMessage('h:1', '')).toBe(
      'Keyspace notifications on h:1 lack Kg$x (notify-keyspace-events is ""): run CONFIG SET notify-keyspace-events Kg$xh (on a managed Redis, set the parameter notify-keyspace-events to Kg$xh), or pass --configure ' +
        "(h lets watch see hash locks such as Redisson's RLock, taken with HINCRBY)",
    );
    expect(notificationsOffMessage('h:1', 'Exh')).not.toContain('Redisson');
    expect(wantedOffMessage('h:1', 'h', 'Kg$x')).toBe(
      "notify-keyspace-events on h:1 lacks h: hash locks such as Redisson's RLock (taken with HINCRBY) are not seen; to see them, run CONFIG SET notify-keyspace-events Kg$xh or pass --configure",
    );
  });
});

describe('RESP replies', () => {
  it('parses every reply type, split anywhere across chunks', () => {
    const wire = Buffer.from('+OK\r\n-ERR no\r\n:42\r\n$5\r\nhe\r\nl\r\n$-1\r\n*3\r\n$8\r\npmessage\r\n*0\r\n:7\r\n');
    for (let cut = 0; cut <= wire.length; cut++) {
      const got: Reply[] = [];
      const parser = new ReplyParser((r) => got.push(r));
      parser.push(wire.subarray(0, cut));
      parser.push(wire.subarray(cut));
      expect(got.map((r) => (Buffer.isBuffer(r) ? r.toString() : r instanceof Error ? `E:${r.message}` : Array.isArray(r) ? r.map(String) : r))).toEqual([
        'OK',
        'E:ERR no',
        42,
        'he\r\nl',
        null,
        ['pmessage', '', '7'],
      ]);
    }
  });

  it('encodes commands byte for byte and reads URLs with their credentials', () => {
    expect(encodeCommand(['PTTL', 'k:é']).toString()).toBe('*2\r\n$4\r\nPTTL\r\n$4\r\nk:é\r\n');
    expect(nodeOfUrl('rediss://u:p%40ss@[::1]:6380/2')).toEqual({ host: '::1', port: 6380, tls: true, username: 'u', password: 'p@ss', db: 2 });
    expect(nodeOfUrl('redis://:secret@h')).toMatchObject({ host: 'h', port: 6379, username: undefined, password: 'secret' });
  });
});

describe('keyspace events into samples', () => {
  function tracker(ttls: Record<string, number>, keepUnconfirmed = true) {
    const samples: LockSample[] = [];
    const pending: (() => void)[] = [];
    const t = new KeyspaceTracker({
      recorder: { record: (s) => void samples.push(s) },
      templates: [],
      instance: undefined,
      maxOpen: 100,
      keepUnconfirmed,
      readTtl: (_n, _db, key) => new Promise((resolve) => pending.push(() => resolve(ttls[key] ?? -2))),
    });
    const answer = async () => {
      for (const p of pending.splice(0)) p();
      await new Promise((r) => setTimeout(r, 0));
    };
    return { t, samples, answer };
  }

  it('set → del is released; later expire or set on the held key are extensions; a TTL read late still counts', async () => {
    const { t, samples, answer } = tracker({ 'a:lock:1': 4999, 'a:lock:2': 5000 });
    t.onEvent('n', 0, 'a:lock:1', 'set', 0);
    t.onEvent('n', 0, 'a:lock:1', 'expire', 0);
    await answer();
    t.onEvent('n', 0, 'a:lock:1', 'expire', 100); // PEXPIRE: an extension
    t.onEvent('n', 0, 'a:lock:1', 'set', 200); // SET XX PX / redlock's extend
    t.onEvent('n', 0, 'a:lock:1', 'expire', 200); // …its own expire
    t.onEvent('n', 0, 'a:lock:1', 'del', 300);
    await answer();
    t.onEvent('n', 0, 'a:lock:2', 'set', 400);
    t.onEvent('n', 0, 'a:lock:2', 'del', 412); // ended before PTTL answered
    await answer();
    expect(samples.map((s) => [s.key, s.outcome, s.holdMs, s.ttlMs, s.extensions, s.waitMs])).toEqual([
      ['a:lock:1', 'released', 300, 5000, 2, null],
      ['a:lock:2', 'released', 12, 5000, 0, null],
    ]);
  });

  it('expiries count only on a pattern seen released; keys without a TTL are not locks; evicted is lost', async () => {
    const { t, samples, answer } = tracker({ 'cache:1': 60_000, 'b:lock:1': 100, 'b:lock:2': 100, 'b:lock:3': 100, 'plain:1': -1 });
    t.onEvent('n', 0, 'cache:1', 'set', 0);
    t.onEvent('n', 0, 'plain:1', 'set', 0);
    await answer();
    t.onEvent('n', 0, 'cache:1', 'expired', 60_000);
    t.onEvent('n', 0, 'b:lock:1', 'set', 0);
    await answer();
    t.onEvent('n', 0, 'b:lock:1', 'del', 50);
    t.onEvent('n', 0, 'b:lock:2', 'set', 100);
    t.onEvent('n', 0, 'b:lock:3', 'set', 100);
    await answer();
    t.onEvent('n', 0, 'b:lock:2', 'expired', 260);
    t.onEvent('n', 0, 'b:lock:3', 'evicted', 150);
    // The cache's expiry is recorded apart (its pattern was never seen released); an eviction there would be ignored.
    expect(samples.map((s) => [s.key, s.outcome, s.holdMs, s.unconfirmed === true])).toEqual([
      ['cache:1', 'expired', 60_000, true],
      ['b:lock:1', 'released', 50, false],
      ['b:lock:2', 'expired', 100, false],
      ['b:lock:3', 'lost', 50, false],
    ]);
    expect(t.stats()).toMatchObject({ ignored: 0, unconfirmed: 1, notLocks: 1, open: 0, recorded: { released: 1, expired: 1, lost: 1 } });
  });

  it('records expiries on at most 50 patterns never released, so caches cannot fill the recorder', async () => {
    // Sixty patterns no learning merges: four separators, fifteen depths (names at one position would be learned as one).
    const keyOf = (i: number) => `cache${`${':/|#'[i % 4]}x`.repeat(1 + Math.floor(i / 4))}${':/|#'[i % 4]}1`;
    const ttls = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [keyOf(i), 1000]));
    const { t, samples, answer } = tracker(ttls);
    for (const key of Object.keys(ttls)) t.onEvent('n', 0, key, 'set', 0);
    await answer();
    for (const key of Object.keys(ttls)) t.onEvent('n', 0, key, 'expired', 1000);
    expect(samples).toHaveLength(50);
    expect(t.stats()).toMatchObject({ unconfirmed: 50, ignored: 10 });
  });

  it("with keepUnconfirmed false (--match '*'), expiries on a pattern never released are ignored", async () => {
    const { t, samples, answer } = tracker({ 'cache:1': 60_000 }, false);
    t.onEvent('n', 0, 'cache:1', 'set', 0);
    await answer();
    t.onEvent('n', 0, 'cache:1', 'expired', 60_000);
    expect(samples).toEqual([]);
    expect(t.stats()).toMatchObject({ ignored: 1, unconfirmed: 0 });
  });

  it('a node lost drops and counts its open holds; nothing is invented', async () => {
    const { t, samples, answer } = tracker({ 'c:lock:1': 1000 });
    t.onEvent('n1', 0, 'c:lock:1', 'set', 0);
    await answer();
    expect(t.dropNode('n1')).toBe(1);
    t.onEvent('n1', 0, 'c:lock:1', 'del', 10);
    expect(samples).toEqual([]);
    expect(t.stats()).toMatchObject({ dropped: 1, droppedInGaps: 1, open: 0 });
  });
});
