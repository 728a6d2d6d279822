import { BoundedSet, ConfirmedPatterns } from '../sample/confirmed.js';
import { LearnedPatterns } from '../sample/learned-patterns.js';
import type { LeaseLibrary, LockSample, Outcome } from '../sample/sample.js';
import { stampAndRecord } from '../sample/stamp.js';
import { bullmqPatternOf, isLibraryNonLock, leaseLibraryOf } from './lease-keys.js';
import { RenewalTiming, renewalOf } from './renewal-timing.js';
import { zeroCounts, type KeyspaceTrackerOptions, type WatchStats } from './tracker-options.js';
import { likelyTtl } from './ttl-rounding.js';

/** The most a notification's unseen trip (Redis to this process's reading it) is allowed when a TTL is read (see `onTtl`). */
const UNSEEN_TRIP_MS = 50;
export type { KeyspaceTrackerOptions, WatchStats } from './tracker-options.js';
export { likelyTtl, roundingSlackCapMs } from './ttl-rounding.js';

/**
 * Turns keyspace notifications into lock samples. Per key, as Redis reports it: `set` (and the
 * `expire` of its PX/EX) opens a hold, and so does `hincrby` followed at once by `expire`
 * (Redisson's hash lock); `del` ends it `released`; `expired` ends it `expired`, `evicted` `lost`;
 * a later `set` or `expire` on a held key is an extension, a renewal whose gap and margin are timed
 * (renewal-timing.ts). Times are arrival times in this process (`performance.now()` when the socket
 * chunk the notification came in arrived), so a hold is `del` arrival − `set` arrival.
 *
 * What is a lock: a key whose `set` (or `hincrby` + PEXPIRE) leaves it with a TTL (read
 * with PTTL at once), and whose pattern has been seen deleted while held. A key
 * with no TTL, one that only ever expires (a cache entry), or a lease library's
 * key that is not a lock (lease-keys.ts) is never a sample; expirations count
 * only on a pattern already seen released.
 */

export type KeyspaceEvent = string;

/** A key's hold, from its `set` or `hincrby`. */
interface Open {
  readonly id: string;
  readonly node: string;
  readonly db: number;
  /** The key as shown (UTF-8, invalid bytes replaced) and its exact bytes, which PTTL needs. */
  readonly key: string;
  readonly keyBytes: Buffer;
  readonly setMs: number;
  readonly at: number;
  /** The TTL the lock was taken with; `undefined` until PTTL answered. */
  ttlMs: number | undefined;
  ttlRead: boolean;
  /** The next `expire` event is the `set`'s own (SET … PX emits both). */
  expectExpire: boolean;
  extensions: number;
  /** When the TTL in force runs out (the last PTTL's reply + its answer), for an extended lock's expiry. */
  expiresMs: number | undefined;
  /** An end that arrived before PTTL answered. */
  ended: { outcome: Outcome; atMs: number } | undefined;
  /** The lease library its key or its acquire showed (lease-keys.ts). */
  readonly library: LeaseLibrary | undefined;
  /** Its renewals, from the first. */
  renewal: RenewalTiming | undefined;
}

const MAX_TTL_PATTERNS = 10_000;
/** Patterns whose expiries are recorded before a release confirms them (a recorder keeps 1,000 patterns by default). */
const MAX_UNCONFIRMED_PATTERNS = 50;
const MAX_AWAITING_PATTERNS = 1000;
const MAX_AWAITING_PER_PATTERN = 1000;

export class KeyspaceTracker {
  private readonly open = new Map<string, Open>();
  private readonly confirmed = new ConfirmedPatterns();
  private readonly unconfirmedPatterns = new BoundedSet(MAX_UNCONFIRMED_PATTERNS);
  private readonly patterns: LearnedPatterns;
  /** The last TTL seen per pattern, for a hold too short for PTTL to find its key. */
  private readonly lastTtl = new Map<string, number>();
  /** Holds that ended before any TTL of their pattern was read: finished as soon as one is. */
  private readonly awaitingTtl = new Map<string, { o: Open; outcome: Outcome; endMs: number }[]>();
  private awaiting = 0;
  /** Per node, a HINCRBY on a key not held, when it is the node's last notification: a hash lock if its PEXPIRE is next. */
  private readonly hashTaken = new Map<string, { id: string; atMs: number }>();
  readonly counts = zeroCounts();

  constructor(private readonly options: KeyspaceTrackerOptions) {
    this.patterns = new LearnedPatterns(options.templates, (aliases) => this.rename(aliases), bullmqPatternOf);
  }

  stats(): WatchStats {
    return { ...this.counts, recorded: { ...this.counts.recorded }, open: this.open.size };
  }

  /**
   * One notification: `event` on `key` of database `db`, on `node`, arrived at `nowMs`. A key is
   * its bytes (a string stands for its UTF-8): keys that are not valid UTF-8 are locks too.
   */
  onEvent(node: string, db: number, key: string | Buffer, event: KeyspaceEvent, nowMs: number): void {
    this.onKeyEvent(node, db, (typeof key === 'string' ? Buffer.from(key) : key).toString('latin1'), event, nowMs);
  }

  /** {@link onEvent} with the key's bytes as latin1, one character per byte: two keys are one only if their bytes are. */
  onKeyEvent(node: string, db: number, key: string, event: KeyspaceEvent, nowMs: number): void {
    this.counts.events++;
    const id = `${node}\u0000${db}\u0000${key}`;
    const held = this.open.get(id);
    // Redisson takes its hash lock with HINCRBY then PEXPIRE in one script: two notifications in a row on its node.
    const hashTaken = this.hashTaken.get(node);
    if (hashTaken) this.hashTaken.delete(node);
    switch (event) {
      case 'set':
        if (held) {
          // SET on a held key (SET XX PX, node-redlock's extend, BullMQ's extendLocks): the same holder, a new TTL.
          this.renew(held, nowMs);
          held.expectExpire = true;
        } else this.start(id, node, db, key, 'set', nowMs);
        return;
      case 'hincrby':
        // On a held key, a re-entry or a partial unlock: the PEXPIRE after it is counted as the renewal it is.
        if (!held) this.hashTaken.set(node, { id, atMs: nowMs });
        return;
      case 'expire':
        if (!held) {
          if (hashTaken?.id === id) this.start(id, node, db, key, 'hincrby', hashTaken.atMs);
          return;
        }
        if (held.expectExpire) held.expectExpire = false;
        else this.renew(held, nowMs); // PEXPIRE: Redisson's watchdog, redis-py's extend()
        return;
      case 'del':
        if (held) this.end(held, 'released', nowMs);
        return;
      case 'expired':
        if (held) this.end(held, 'expired', nowMs);
        return;
      case 'evicted':
        if (held) this.end(held, 'lost', nowMs);
        return;
      case 'persist':
      case 'rename_from':
      case 'move_from':
        // No TTL any more, or the key left: whatever it was, its end will not be seen.
        if (held) {
          this.open.delete(id);
          this.counts.notLocks++;
        }
        return;
    }
  }

  /** A node's connection dropped: the holds open on it will never be seen ending. Returns how many. */
  dropNode(node: string): number {
    this.hashTaken.delete(node);
    let n = 0;
    for (const [id, o] of this.open) {
      if (o.node !== node) continue;
      this.open.delete(id);
      n++;
    }
    this.counts.dropped += n;
    this.counts.droppedInGaps += n;
    return n;
  }

  /** Stops: holds still open are not recorded (their end is unknown); returns how many. */
  close(): number {
    this.options.openLimit?.end();
    const n = this.open.size;
    this.open.clear();
    this.counts.unknownTtl += this.awaiting;
    this.awaitingTtl.clear();
    this.awaiting = 0;
    return n;
  }

  private start(id: string, node: string, db: number, latin1Key: string, event: 'set' | 'hincrby', nowMs: number): void {
    const keyBytes = Buffer.from(latin1Key, 'latin1');
    const shown = keyBytes.toString('utf8');
    // Set with a TTL and deleted like a lock, but known not to be one: never a sample.
    if (isLibraryNonLock(shown)) return;
    if (this.open.size >= this.options.maxOpen) {
      this.counts.dropped++;
      this.counts.droppedAtLimit++;
      this.options.openLimit?.dropped();
      return;
    }
    // Room again: the stretch in which locks went unfollowed is over.
    this.options.openLimit?.end();
    const o: Open = {
      id,
      node,
      db,
      key: shown,
      keyBytes,
      setMs: nowMs,
      at: Date.now(),
      ttlMs: undefined,
      ttlRead: false,
      // SET … PX emits `expire` after `set`; a hash lock starts at its PEXPIRE's.
      expectExpire: event === 'set',
      extensions: 0,
      expiresMs: undefined,
      ended: undefined,
      library: leaseLibraryOf(shown, event),
      renewal: undefined,
    };
    this.open.set(id, o);
    this.readTtl(o);
  }

  private renew(o: Open, nowMs: number): void {
    o.extensions++;
    (o.renewal ??= new RenewalTiming(o.setMs, o.ttlMs)).renewed(nowMs);
    this.readTtl(o);
  }

  private readTtl(o: Open): void {
    const asked = performance.now();
    const first = !o.ttlRead;
    this.options.readTtl(o.node, o.db, o.key, o.keyBytes).then(
      (pttl) => this.onTtl(o, first, pttl, asked, performance.now()),
      () => this.onTtl(o, first, -2, asked, performance.now()),
    );
  }

  private onTtl(o: Open, first: boolean, pttl: number, askedMs: number, repliedMs: number): void {
    if (first) o.ttlRead = true;
    if (pttl === -1) {
      // Set without a TTL: not a lock (or no longer one).
      if (this.open.get(o.id) === o) this.open.delete(o.id);
      if (first) this.counts.notLocks++;
      return;
    }
    if (pttl >= 0) {
      // The SET ran before its notification left Redis; PTTL ran before its reply arrived. The notification's
      // own trip, and this process waiting for a CPU before it read it, are not seen: on a loaded host that is
      // often 5–20 ms (a 7,000 ms TTL answered as 6,991) and was 30 in CI (3,000 as 2,970), so up to
      // UNSEEN_TRIP_MS more, never over 1 % of PTTL's answer.
      const ttl = likelyTtl(pttl, repliedMs - (first ? o.setMs : askedMs) + 1 + Math.min(UNSEEN_TRIP_MS, pttl * 0.01));
      if (first) {
        o.ttlMs = ttl;
        this.learnTtl(this.patternOf(o.key), ttl);
      }
      // A renewal's TTL, the next one's margin is measured against (redis-py's extend() adds to what is left).
      o.renewal?.ttlSet(ttl);
      o.expiresMs = repliedMs + pttl;
    } else if (first) {
      o.ttlMs = this.lastTtl.get(this.patternOf(o.key));
      if (o.ttlMs !== undefined) o.renewal?.ttlSet(o.ttlMs);
    }
    if (first && o.ended) this.finish(o, o.ended.outcome, o.ended.atMs);
  }

  private end(o: Open, outcome: Outcome, nowMs: number): void {
    this.open.delete(o.id);
    if (!o.ttlRead) {
      o.ended = { outcome, atMs: nowMs };
      return;
    }
    this.finish(o, outcome, nowMs);
  }

  private learnTtl(pattern: string, ttl: number): void {
    if (this.lastTtl.size >= MAX_TTL_PATTERNS && !this.lastTtl.has(pattern)) this.lastTtl.clear();
    this.lastTtl.set(pattern, ttl);
    const waiting = this.awaitingTtl.get(pattern);
    if (!waiting) return;
    this.awaitingTtl.delete(pattern);
    this.awaiting -= waiting.length;
    for (const w of waiting) {
      w.o.ttlMs = ttl;
      this.finish(w.o, w.outcome, w.endMs);
    }
  }

  private finish(o: Open, outcome: Outcome, endMs: number): void {
    const pattern = this.patternOf(o.key);
    if (o.ttlMs === undefined) {
      // Released before PTTL could see its key, and no TTL of its pattern known yet: kept (bounded) until one is.
      let waiting = this.awaitingTtl.get(pattern);
      if (!waiting && this.awaitingTtl.size < MAX_AWAITING_PATTERNS) this.awaitingTtl.set(pattern, (waiting = []));
      if (waiting && waiting.length < MAX_AWAITING_PER_PATTERN) {
        waiting.push({ o, outcome, endMs });
        this.awaiting++;
      } else this.counts.unknownTtl++;
      return;
    }
    let unconfirmed = false;
    if (outcome === 'released') this.confirmed.confirm(pattern);
    else if (!this.confirmed.has(pattern)) {
      // The worst lock is never released (every hold outlives its TTL): its expirations count apart, flagged.
      // At most MAX_UNCONFIRMED_PATTERNS such patterns, so caches the glob matches cannot fill a recorder's patterns.
      if (outcome !== 'expired' || this.options.keepUnconfirmed === false || !this.unconfirmedPatterns.admit(pattern)) {
        this.counts.ignored++;
        return;
      }
      unconfirmed = true;
    }
    // An expired lock was held at least its TTL in force (Redis may report the expiry later than it
    // happened); when its holder finished is not seen (a release of a missing key emits nothing): censored.
    const holdMs = Math.max(0, outcome === 'expired' ? (o.extensions > 0 && o.expiresMs !== undefined ? o.expiresMs - o.setMs : o.ttlMs) : endMs - o.setMs);
    const sample: LockSample = { key: o.key, at: o.at, holdMs, waitMs: null, ttlMs: o.ttlMs, outcome, extensions: o.extensions };
    if (outcome === 'expired') sample.censored = true;
    const renewal = renewalOf(o.renewal, o.library, o.setMs, o.ttlMs, holdMs, outcome === 'expired');
    if (renewal) sample.renewal = renewal;
    // Counted apart from the locks: they are not known to be locks.
    if (unconfirmed) {
      sample.unconfirmed = true;
      this.counts.unconfirmed++;
    } else this.counts.recorded[outcome]++;
    // Given where the recorder's heuristics would name it otherwise (a template, BullMQ's job locks).
    const { templates, instance, recorder } = this.options;
    stampAndRecord(sample, templates.length > 0 || o.library === 'bullmq' ? pattern : undefined, instance, recorder);
  }

  private patternOf(key: string): string {
    return this.patterns.get(key);
  }

  /** Patterns renamed as a position was learned: what was kept under a provisional name moves to the learned one. */
  private rename(aliases: readonly { from: string; to: string }[]): void {
    this.confirmed.rename(aliases);
    for (const { from, to } of aliases) {
      const ttl = this.lastTtl.get(from);
      if (ttl !== undefined && !this.lastTtl.has(to)) this.lastTtl.set(to, ttl);
      const waiting = this.awaitingTtl.get(from);
      if (!waiting) continue;
      this.awaitingTtl.delete(from);
      const into = this.awaitingTtl.get(to);
      if (into) into.push(...waiting);
      else this.awaitingTtl.set(to, waiting);
      // A TTL of the learned pattern known already finishes them now.
      const known = this.lastTtl.get(to);
      if (known !== undefined) this.learnTtl(to, known);
    }
  }
}
