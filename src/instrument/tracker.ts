import { epochMsAt } from '../clock.js';
import { performance } from 'node:perf_hooks';
import type { CompiledTemplate } from '../keys/pattern.js';
import { ConfirmedPatterns } from '../sample/confirmed.js';
import { releaseOutcome } from '../sample/outcome.js';
import { LearnedPatterns } from '../sample/learned-patterns.js';
import { zeroOutcomeCounts, type LockSample, type Outcome, type SampleRecorder } from '../sample/sample.js';
import { stampAndRecord } from '../sample/stamp.js';
import type { InstrumentStats } from './stats.js';
import { ByKey } from './by-key.js';
import { attemptsWith, Hold, type Waiting } from './entries.js';
import { succeeded, type LockCommand } from './commands.js';
import { InFlight } from './in-flight.js';
import { Renewals } from './renewals.js';

export interface TrackerOptions {
  /** Never throws (see `safeRecorder`). */
  recorder: SampleRecorder;
  templates: readonly CompiledTemplate[];
  instance: string | undefined;
  retryWindowMs: number;
  expiredGraceMs: number;
  maxOpenLocks: number;
  onFull: () => void;
  /** Called when a client runs BullMQ's worker scripts (whose job locks it cannot see), with the queue's `stalled` key. */
  onBullmq: (stalledKey: string) => void;
}

const RECENTLY_ENDED = 1024;

/** Whether a hold was won on `client`: a release's reply counts only from a server the lock was won on. */
const isWonOn = (hold: Hold, client: number) => hold.wonOn === client || (Array.isArray(hold.wonOn) && hold.wonOn.includes(client));

/**
 * Follows locks through the commands an instrumented client sends: opens a hold
 * when an acquire wins, closes it with the release's reply, and records one
 * sample per lock. A hold taken by a bare `SET NX` is a lock only once a
 * token-checked release was seen on its pattern; until then, nothing is recorded for it.
 *
 * It runs in the host's hot path (twice per lock command: sent, answered), so
 * each command costs one object (the {@link LockCommand} itself) and one map lookup per key; a key's
 * pattern is derived only where a lock is confirmed, once per key slot.
 */
export class LockTracker {
  private readonly holds = new ByKey<Hold>();
  private readonly waiting = new ByKey<Waiting>();
  private readonly confirmed = new ConfirmedPatterns();
  /** The servers (connections) locks were seen on; with more than one, late replies of a quorum round are possible. */
  private readonly servers = new Set<number>();
  private lastServer = -1;
  /** When recently released locks ended, by key and token: only kept with several servers. */
  private readonly ended = new Map<string, number>();
  private readonly patterns: LearnedPatterns;
  /** Acquires sent and not yet answered: at close(), an attempt whose outcome will never be followed. */
  private readonly inFlight = new InFlight();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  readonly counts: Omit<InstrumentStats, 'open' | 'waiting'> = {
    acquired: 0,
    recorded: zeroOutcomeCounts(),
    ignored: 0,
    untracked: 0,
    abandoned: 0,
  };

  constructor(private readonly options: TrackerOptions) {
    this.patterns = new LearnedPatterns(options.templates, (aliases) => this.confirmed.rename(aliases));
  }

  stats(): InstrumentStats {
    return { ...this.counts, recorded: { ...this.counts.recorded }, open: this.holds.size, waiting: this.waiting.size };
  }

  /**
   * A lock command was sent at `sentMs`: returns it, stamped, to hand to {@link settle} with its
   * reply (or error), or `undefined` when there is nothing to follow.
   */
  sent(command: LockCommand, sentMs: number, client = 0): LockCommand | undefined {
    if (this.closed) return undefined;
    switch (command.op) {
      case 'acquire': {
        // Awaited replies count too: a client that never settles a command (a stuck offline queue) stays bounded.
        const open = this.holds.size + this.waiting.size + this.inFlight.size;
        if (open >= this.options.maxOpenLocks && !this.waiting.find(command.key, command.token!)) {
          // Full. A cache's SET NX on a pattern never seen released is not a lock: no alarm for it.
          if (!command.byScript && !this.confirmed.has(this.patternOf(command.key))) this.counts.ignored++;
          else {
            this.counts.untracked++;
            this.options.onFull();
          }
          return undefined;
        }
        this.inFlight.add(command);
        break;
      }
      case 'release':
      case 'extend':
        break;
      case 'script':
        // An unknown script on a held lock's keys and token: with a TTL an extend, with the token alone a release.
        if (!this.holds.find(command.key, command.token!)) return undefined;
        command.op = command.ttlMs === undefined ? 'release' : 'extend';
        break;
      case 'bullmq':
        this.options.onBullmq(command.stalledKey!);
        return undefined;
    }
    command.sentMs = sentMs;
    command.client = client;
    return command;
  }

  /**
   * A sent command's reply (or error: `failed`) came. `resent`: the server did
   * not have the script (NOSCRIPT) and its sender sends it again as EVAL, which
   * is followed on its own — this one tells nothing.
   */
  settle(command: LockCommand, reply: unknown, failed: boolean, resent: boolean): void {
    const { op } = command;
    if (op === 'acquire') {
      this.inFlight.remove(command);
      if (!resent) this.acquired(command, reply, failed);
    } else if (resent) return;
    else if (op === 'release') this.released(command, reply, failed);
    else if (!failed && succeeded(reply, command.keyCount)) this.extended(command);
  }

  private acquired(command: LockCommand, reply: unknown, failed: boolean): void {
    if (this.closed) return; // a reply that arrives after close() starts nothing (nothing would ever end it)
    const now = performance.now();
    const { key: first } = command;
    const token = command.token!;
    const ttlMs = command.ttlMs!;
    const byScript = command.byScript!;
    const sentMs = command.sentMs!;
    const client = command.client!;
    if (client !== this.lastServer) {
      this.servers.add(client);
      this.lastServer = client;
    }
    // Several servers (node-redlock's quorum): the lock resolves once most voted, so a slower server's
    // reply to the same round can arrive after the lock was already released. It is that lock, not a new one.
    if (this.servers.size > 1 && (this.ended.get(`${first}\u0000${token}`) ?? -Infinity) > sentMs) return;
    const before = this.waiting.size === 0 ? undefined : this.waiting.find(first, token);
    if (failed || !succeeded(reply, command.keyCount)) {
      // Lost on one server of a quorum the same lock won on another: not an attempt.
      if (this.holds.size > 0 && this.holds.find(first, token)) return;
      if (before) {
        before.attempts = attemptsWith(before, client);
        if (client !== before.firstClient || before.perClient) (before.perClient ??= new Map([[before.firstClient, before.attempts]])).set(client, before.attempts);
        before.lastMs = now;
        before.failedWithError = failed;
      } else {
        const at = epochMsAt(sentMs);
        this.waiting.add({ key: first, token, older: undefined, at, firstMs: sentMs, attempts: 1, perClient: undefined, firstClient: client, lastMs: now, failedWithError: failed, byScript, ttlMs });
      }
      this.arm();
      return;
    }
    if (before) this.waiting.remove(before);
    const at = before?.at ?? epochMsAt(sentMs);
    const firstMs = before?.firstMs ?? sentMs;
    const attempts = before === undefined ? 1 : attemptsWith(before, client);
    for (let i = 0, n = command.keyCount; i < n; i++) {
      const key = command.keyAt(i);
      // Not added twice: the same lock won on another Redis (Redlock's quorum) is counted once.
      const added = this.holds.add(new Hold(key, client, token, at, attempts, now - firstMs, now, ttlMs, sentMs + ttlMs, now + ttlMs, byScript));
      if (added) this.counts.acquired++;
      else {
        const hold = this.holds.find(key, token)!;
        hold.wonOn = [...(Array.isArray(hold.wonOn) ? hold.wonOn : [hold.wonOn]), client];
      }
    }
    this.arm();
  }

  private released(command: LockCommand, reply: unknown, failed: boolean): void {
    if (this.closed) return;
    const now = performance.now();
    const { token, keyCount } = command;
    const all = !failed && succeeded(reply, keyCount);
    for (let i = 0; i < keyCount; i++) {
      const key = command.keyAt(i);
      const slot = this.holds.slotOf(key);
      // A release sent where the lock was never won (a server that voted against it) tells nothing.
      const hold = slot === undefined ? undefined : this.holds.takeFrom(slot, token, isWonOn, command.client!);
      if (!hold) continue;
      if (this.servers.size > 1) {
        this.ended.set(`${key}\u0000${hold.token}`, now);
        if (this.ended.size > RECENTLY_ENDED) this.ended.delete(this.ended.keys().next().value!);
      }
      // A plain DEL proves nothing about a lock; a token-checked release proves its pattern is one.
      if (token !== undefined) {
        if (!hold.byScript && !slot!.lockPattern) slot!.lockPattern = this.confirmed.confirm(this.patternOf(key));
      } else if (!hold.byScript && !slot!.lockPattern && !(slot!.lockPattern = this.confirmed.has(this.patternOf(key)))) {
        this.counts.ignored++;
        continue;
      }
      const outcome = releaseOutcome(failed ? 'failed' : all ? 'deleted' : 'gone', command.sentMs!, now, hold.mayExpireMs, hold.expiredMs);
      this.record(hold, outcome, now, now - hold.wonMs);
    }
  }

  private extended(command: LockCommand): void {
    if (this.closed) return;
    const now = performance.now();
    const { token, library } = command;
    const ttlMs = command.ttlMs!;
    const sentMs = command.sentMs!;
    for (let i = 0, n = command.keyCount; i < n; i++) {
      const key = command.keyAt(i);
      const hold = token === undefined ? this.holds.newest(key) : this.holds.find(key, token);
      if (!hold) continue;
      // Made at the first renewal, from the acquire's times (`mayExpireMs` is still its send + its TTL).
      const renewals = (hold.renewals ??= new Renewals(hold.mayExpireMs - hold.ttlMs, hold.mayExpireMs, library ?? 'unknown'));
      // Several servers (a quorum) each answer the same round: it is one extension.
      if (renewals.nextRound(command.client!)) {
        hold.extensions++;
        renewals.renewed(sentMs, now, ttlMs);
      }
      hold.mayExpireMs = Math.max(hold.mayExpireMs, sentMs + ttlMs);
      hold.expiredMs = now + ttlMs;
    }
  }

  /** Records what became certain by `now`: holds whose TTL ran out with no release in the grace, attempts given up. */
  sweep(now = performance.now()): void {
    const { expiredGraceMs, retryWindowMs } = this.options;
    for (const hold of this.holds.all()) {
      if (now < hold.expiredMs + expiredGraceMs) continue;
      this.holds.remove(hold);
      // Never released: the holder's end was not seen, so the hold is at least the time to expiry (censored).
      if (this.isLock(hold)) this.record(hold, 'expired', now, hold.expiredMs - hold.wonMs, true);
      else this.counts.ignored++;
    }
    for (const w of this.waiting.all()) {
      if (now < w.lastMs + retryWindowMs) continue;
      this.waiting.remove(w);
      if (!w.byScript && !this.confirmed.has(this.patternOf(w.key))) {
        this.counts.ignored++;
        continue;
      }
      const outcome: Outcome = w.failedWithError ? 'error' : 'not_acquired';
      this.emit({ key: w.key, at: w.at, waitMs: w.lastMs - w.firstMs, attempts: w.attempts, ttlMs: w.ttlMs, outcome }, w.key);
    }
    if (this.holds.size === 0 && this.waiting.size === 0) this.disarm();
  }

  /**
   * Stops following: what is certain is recorded, what is still open is counted
   * as abandoned — holds, attempts waiting, and locks whose acquire's reply is
   * still on its way (once per lock: a quorum's servers each answer). A reply
   * that arrives later records nothing (see `acquired`).
   */
  close(): void {
    if (this.closed) return;
    this.sweep();
    this.closed = true;
    const unanswered = new Set<string>();
    for (const { key, token } of this.inFlight.all()) {
      if (!this.holds.find(key, token!) && !this.waiting.find(key, token!)) unanswered.add(`${key}\u0000${token}`);
    }
    this.counts.abandoned += this.holds.size + this.waiting.size + unanswered.size;
    this.inFlight.clear();
    this.holds.clear();
    this.waiting.clear();
    this.ended.clear();
    this.patterns.clear();
    this.disarm();
  }

  private isLock(hold: Hold): boolean {
    return hold.byScript || this.confirmed.has(this.patternOf(hold.key));
  }

  private patternOf(key: string): string {
    return this.patterns.get(key);
  }

  private record(hold: Hold, outcome: Outcome, endMs: number, holdMs: number, censored = false): void {
    const { key, at, waitMs, attempts, ttlMs, extensions } = hold;
    const sample: LockSample = { key, at, holdMs: Math.max(0, holdMs), waitMs, attempts, ttlMs, outcome, extensions };
    if (censored) sample.censored = true;
    // Only a hold renewed at least once: an acquire does not tell a lease from a lock (node-redlock's `using()` and
    // `acquire()` send the same script; redis-semaphore's refresh may be off), so none is guessed.
    if (hold.renewals) sample.renewal = hold.renewals.timings(outcome, endMs, censored);
    this.emit(sample, key);
  }

  private emit(sample: LockSample, key: string): void {
    this.counts.recorded[sample.outcome]++;
    const { templates, instance, recorder } = this.options;
    stampAndRecord(sample, templates.length > 0 ? this.patternOf(key) : undefined, instance, recorder);
  }

  private arm(): void {
    if (this.timer !== undefined) return;
    const every = Math.max(10, Math.min(250, this.options.retryWindowMs / 4, this.options.expiredGraceMs / 4));
    this.timer = setInterval(() => {
      try {
        this.sweep();
      } catch {
        // Nothing thrown from our timer may reach the host's process.
      }
    }, every);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
