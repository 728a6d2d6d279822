import { performance } from 'node:perf_hooks';
import { CommandTimeoutError, sleep, withDeadline } from '../deadline.js';
import { newToken } from '../token.js';
import { ConfigError, LockLostError, LockNotAcquiredError, LockRedisError, TtlAdvisorError, type LockLossKind } from '../errors.js';
import { TRUSTED_SAMPLE } from '../sample/check-sample.js';
import { releaseOutcome } from '../sample/outcome.js';
import type { LockSample, Outcome } from '../sample/sample.js';
import { AutoExtender } from './auto-extend.js';
import { LeaseLog } from './lease-log.js';
import { fenceKeyOf, lockCommandsOf, type LockClient, type LockCommands } from './client.js';
import { LockSignal } from './lock-signal.js';
import { checkTtl, resolveLockOptions, type LockOptions, type ResolvedLockOptions } from './options.js';
import { ACQUIRE_WITH_FENCE, EXTEND, RELEASE, runScript } from './scripts.js';

type State = 'idle' | 'acquiring' | 'held' | 'released';

/**
 * A Redis lock on one key: `SET key token NX PX ttl` to take it, a Lua compare-and-delete to release
 * only our own token, and one sample per acquisition for the recorder. Hold time is measured from
 * the moment the lock is won to the release reply; time spent waiting for the lock is recorded
 * separately (it neither eats into the holder's TTL nor says how long the TTL must be). A
 * `RedisLock` can be acquired again after it was released, but not twice at once.
 * @example
 * await using lock = await RedisLock.acquire(redis, 'order:lock:product:123', { ttlMs: 10_000, recorder });
 * await createOrder({ signal: lock.signal });
 */
export class RedisLock {
  readonly key: string;
  private readonly options: ResolvedLockOptions;
  private readonly redis: LockCommands;
  private state: State = 'idle';
  /** Bumped by every acquire: a reply that arrives for an earlier acquisition changes nothing. */
  private generation = 0;
  private tokenValue: string | undefined;
  private fence: number | undefined;
  private attempts = 0;
  private extensions = 0;
  private startedAtMs = 0;
  private startPerf = 0;
  private sentPerf = 0;
  private wonPerf = 0;
  /** Monotonic time from which the key may have expired (the TTL counted from when SET was sent), unless extended. */
  private expiresPerf = 0;
  /** Monotonic time by which the key has expired for certain (the TTL counted from the reply). */
  private certainExpiryPerf = 0;
  private threw = false;
  private lost: LockLostError | undefined;
  private releasedHeldMs = 0;
  /** Made on first use (most locks never ask for their signal): see {@link signal}. */
  private abort: LockSignal | undefined;
  private extender: AutoExtender | undefined;
  /** A lease's renewals (`autoExtend`, or since the first `extend()`). */
  private lease: LeaseLog | undefined;

  constructor(redis: LockClient, key: string, options: LockOptions) {
    this.redis = lockCommandsOf(redis);
    if (typeof key !== 'string' || key === '') {
      throw new ConfigError(`Expected the lock key to be a non-empty string, got \`${String(key)}\``);
    }
    this.key = key;
    this.options = resolveLockOptions(options, key);
  }

  /** Creates a lock and acquires it. */
  static async acquire(redis: LockClient, key: string, options: LockOptions): Promise<RedisLock> {
    return new RedisLock(redis, key, options).acquire();
  }

  /** The TTL the lock is taken with (ms). */
  get ttlMs(): number {
    return this.options.ttlMs;
  }

  /** The random token that identifies this acquisition in Redis, while held. */
  get token(): string | undefined {
    return this.state === 'held' ? this.tokenValue : undefined;
  }

  /** Whether the lock is held right now, by the monotonic clock: false once the TTL has run out. */
  get isHeld(): boolean {
    return this.state === 'held' && !this.lost && performance.now() < this.expiresPerf;
  }

  /**
   * Throws the {@link LockLostError} that says why when the lock is not held right now: call it before a
   * write the lock guards. Only a fencing token the store checks protects against a pause after the check.
   */
  assertHeld(): void {
    if (this.isHeld) return;
    if (this.lost) throw this.lost;
    if (this.state === 'held') throw this.lossError('ttl-ran-out', performance.now() - this.wonPerf);
    throw new TtlAdvisorError(`Lock \`${this.key}\` is not held (${this.state})`);
  }

  /** The fencing token drawn with this acquisition, when `fencing` is on. */
  get fencingToken(): number | undefined {
    return this.fence;
  }

  /** How long the lock was held: so far while held, until the release reply once released (ms). */
  get heldMs(): number {
    return this.state === 'held' ? performance.now() - this.wonPerf : this.releasedHeldMs;
  }

  /** Milliseconds until the TTL runs out (never negative), 0 when not held. */
  get remainingMs(): number {
    return this.state === 'held' ? Math.max(0, this.expiresPerf - performance.now()) : 0;
  }

  /**
   * Aborts when the TTL runs out before release (or the lock is found lost), with a {@link LockLostError}:
   * pass it to the critical section's I/O. Created on first use, so locks that never ask pay nothing.
   */
  get signal(): AbortSignal {
    return this.lockSignal().signal;
  }

  /**
   * Takes the lock, retrying while another holder has it. Throws {@link LockNotAcquiredError} when the retries
   * or `acquireTimeoutMs` run out, {@link LockRedisError} when Redis fails, and `signal`'s reason when it aborts.
   */
  async acquire(signal: AbortSignal | undefined = this.options.signal): Promise<this> {
    if (this.state === 'acquiring' || this.state === 'held') {
      throw new TtlAdvisorError(`Lock \`${this.key}\` is already ${this.state} by this RedisLock`);
    }
    const o = this.options;
    this.state = 'acquiring';
    this.generation++;
    this.startedAtMs = Date.now();
    this.tokenValue = newToken(o.holder, this.startedAtMs);
    this.fence = undefined;
    this.attempts = 0;
    this.extensions = 0;
    this.threw = false;
    this.lost = undefined;
    this.abort = undefined;
    this.lease = undefined;
    this.releasedHeldMs = 0;
    this.startPerf = performance.now();
    const deadline = this.startPerf + o.acquireTimeoutMs;

    let sentPerf = this.startPerf;
    for (;;) {
      if (signal?.aborted) return this.giveUp(signal.reason);
      this.attempts++;
      // SET NX PX, or the fencing script; awaited here, not in a helper: each async layer costs CPU per lock.
      const pending = o.fencing
        ? runScript(this.redis, ACQUIRE_WITH_FENCE, [this.key, fenceKeyOf(this.key)], [this.tokenValue!, o.ttlMs])
        : this.redis.setNxPx(this.key, this.tokenValue!, o.ttlMs);
      let reply: unknown;
      try {
        // The full command timeout even near the acquire deadline: a slow reply is contention, not failure.
        reply = await (o.commandTimeoutMs === 0 ? pending : withDeadline(pending, o.commandTimeoutMs));
      } catch (error) {
        // The SET may still reach Redis: queue a release so it cannot leave an orphan lock.
        if (error instanceof CommandTimeoutError) void runScript(this.redis, RELEASE, [this.key], [this.tokenValue!]).catch(() => undefined);
        this.state = 'released';
        this.recordSample('error', undefined);
        throw new LockRedisError(this.key, 'acquire', { cause: error });
      }
      const won = o.fencing ? typeof reply === 'number' : reply === 'OK';
      const now = performance.now();
      if (won && signal?.aborted) {
        // Won, but the caller stopped waiting meanwhile: nobody will release it, so we do.
        void runScript(this.redis, RELEASE, [this.key], [this.tokenValue!]).catch(() => undefined);
        return this.giveUp(signal.reason);
      }
      if (won) {
        if (o.fencing) this.fence = reply as number;
        this.wonPerf = now;
        // The server started the TTL after we sent SET, so this errs on the early side.
        this.sentPerf = sentPerf;
        this.expiresPerf = sentPerf + o.ttlMs;
        this.certainExpiryPerf = now + o.ttlMs;
        this.state = 'held';
        if (o.autoExtendMs > 0) this.startExtending();
        return this;
      }
      if (this.attempts > o.retryCount || now >= deadline) {
        this.state = 'released';
        this.recordSample('not_acquired', undefined);
        throw new LockNotAcquiredError(this.key, this.attempts, now - this.startPerf);
      }
      const pause = o.retryDelayMs + (o.retryJitterMs > 0 ? Math.random() * o.retryJitterMs : 0);
      await sleep(Math.min(pause, deadline - now), signal);
      sentPerf = performance.now();
    }
  }

  /**
   * Releases the lock if we still hold it. Resolves `true` when our lock was deleted, `false` when it had already
   * expired or been taken over (the sample then says `expired`, `onLockLost` is called and the signal aborts).
   * Throws {@link LockRedisError} when Redis fails.
   */
  async release(): Promise<boolean> {
    return this.finish(false);
  }

  /** @internal Releases and records whether the critical section threw. */
  async finish(threw: boolean): Promise<boolean> {
    if (this.state !== 'held') return false;
    this.threw = threw;
    this.state = 'released';
    this.abort?.clear();
    this.extender?.stop();
    this.extender = undefined;
    this.lease?.stop();
    let deleted: unknown;
    const sentPerf = performance.now();
    try {
      deleted = await this.command(runScript(this.redis, RELEASE, [this.key], [this.tokenValue!]));
    } catch (error) {
      const failedPerf = performance.now();
      const heldMs = (this.releasedHeldMs = failedPerf - this.wonPerf);
      const outcome = releaseOutcome('failed', sentPerf, failedPerf, this.expiresPerf, this.certainExpiryPerf);
      this.recordSample(outcome, heldMs);
      // No reply, but the TTL had run out for certain before we sent the release: the lock expired while held.
      if (outcome !== 'expired') throw new LockRedisError(this.key, 'release', { cause: error });
      this.markLost('gone', heldMs);
      return false;
    }
    const repliedPerf = performance.now();
    const heldMs = (this.releasedHeldMs = repliedPerf - this.wonPerf);
    if (deleted === 1) {
      this.recordSample('released', heldMs);
      return true;
    }
    this.markLost('gone', heldMs);
    // `lost` (deleted by someone else, lost by Redis) only when certain; else the TTL ran out: see releaseOutcome.
    this.recordSample(releaseOutcome('gone', sentPerf, repliedPerf, this.expiresPerf, this.certainExpiryPerf), heldMs);
    return false;
  }

  /**
   * Resets the TTL to `ttlMs` from now if we still hold the lock. Resolves `false` (and marks the lock lost)
   * when it had already expired. A reply that arrives after the lock was released changes nothing.
   */
  async extend(ttlMs: number = this.options.ttlMs): Promise<boolean> {
    checkTtl(ttlMs);
    if (this.state !== 'held' || this.lost) return false;
    const generation = this.generation;
    const sentPerf = performance.now();
    let extended: unknown;
    try {
      extended = await this.command(runScript(this.redis, EXTEND, [this.key], [this.tokenValue!, ttlMs]));
    } catch (error) {
      throw new LockRedisError(this.key, 'extend', { cause: error });
    }
    // Released (or released and taken again) while the reply was on its way: that release decided.
    if (generation !== this.generation || this.state !== 'held') return extended === 1;
    if (extended !== 1) {
      this.markLost('gone', performance.now() - this.wonPerf);
      return false;
    }
    this.extensions++;
    (this.lease ??= new LeaseLog(this.sentPerf, undefined)).renewed(sentPerf, performance.now(), this.expiresPerf);
    this.expiresPerf = sentPerf + ttlMs;
    this.certainExpiryPerf = performance.now() + ttlMs;
    if (this.abort && !this.abort.aborted) this.abort.arm(this.expiresPerf);
    return true;
  }

  /** `await using lock = …` releases at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  /** Marks the lock lost (once): aborts the signal and tells `onLockLost`. */
  private markLost(kind: LockLossKind, heldMs: number, cause?: unknown): void {
    if (this.lost) return;
    this.lost = this.lossError(kind, heldMs, cause);
    this.extender?.stop();
    this.abort?.abort(this.lost); // a signal made later starts aborted (see lockSignal)
    // Wrapped so that it never throws: a failing observer must not turn a completed section into an error.
    this.options.onLockLost?.({ key: this.key, ttlMs: this.options.ttlMs, heldMs });
  }

  /** Stops acquiring because the caller's signal aborted. */
  private giveUp(reason: unknown): never {
    this.state = 'released';
    this.recordSample('not_acquired', undefined);
    throw reason;
  }
  private command<T>(pending: Promise<T>): Promise<T> {
    return this.options.commandTimeoutMs === 0 ? pending : withDeadline(pending, this.options.commandTimeoutMs);
  }

  private recordSample(outcome: Outcome, holdMs: number | undefined): void {
    this.options.recorder?.record({ // wrapped so that it never throws (see options.ts)
      key: this.key,
      pattern: this.options.pattern,
      at: this.startedAtMs,
      holdMs,
      waitMs: (outcome === 'not_acquired' || holdMs === undefined ? performance.now() : this.wonPerf) - this.startPerf,
      attempts: this.attempts,
      ttlMs: this.options.ttlMs,
      outcome,
      threw: this.threw,
      extensions: this.extensions,
      renewal: this.lease?.timings(outcome, performance.now(), this.expiresPerf),
      [TRUSTED_SAMPLE]: true,
    } as LockSample);
  }

  /** The signal's keeper: aborts when the TTL runs out (the release alone decides whether the lock was lost). */
  private lockSignal(): LockSignal {
    if (!this.abort) {
      this.abort = new LockSignal(() => this.lossError('ttl-ran-out', this.expiresPerf - this.wonPerf));
      if (this.lost) this.abort.abort(this.lost);
      else if (this.state === 'held') this.abort.arm(this.expiresPerf);
    }
    return this.abort;
  }

  private lossError(kind: LockLossKind, heldMs: number, cause?: unknown): LockLostError {
    return new LockLostError(this.key, this.options.ttlMs, heldMs, kind, {
      ...(cause !== undefined && { cause }),
      ttlStartedBeforeWinMs: this.wonPerf - this.sentPerf,
    });
  }

  private startExtending(): void {
    const current = ((generation) => () => this.generation === generation)(this.generation);
    // On an error the lock is not lost for sure (Redis may be back for the release), but no longer safe: stop the work.
    const failed = (error: unknown) => current() && this.lockSignal().abort(this.lossError('extend-failed', this.heldMs, error));
    this.lease = new LeaseLog(this.sentPerf, this.options.autoExtendMs, this.sentPerf + this.options.maxHoldMs + this.options.ttlMs);
    this.extender = new AutoExtender({ isHeld: () => this.isHeld && current(), extend: () => this.extend(), failed }, this.options.autoExtendMs, this.options.maxHoldMs);
  }
}
