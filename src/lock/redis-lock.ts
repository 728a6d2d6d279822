import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { CommandTimeoutError, withDeadline } from '../deadline.js';
import { LockLostError, LockNotAcquiredError, LockRedisError, TtlAdvisorError } from '../errors.js';
import type { Outcome } from '../record/sample.js';
import { fenceKeyOf, lockCommandsOf, type LockClient, type LockCommands } from './client.js';
import { resolveLockOptions, type LockOptions, type ResolvedLockOptions } from './options.js';
import { ACQUIRE_WITH_FENCE, EXTEND, RELEASE, isNoScript, runScript } from './scripts.js';

type State = 'idle' | 'acquiring' | 'held' | 'released';

/**
 * A Redis lock on one key: `SET key token NX PX ttl` to take it, a Lua
 * compare-and-delete to release only our own token, and one sample per
 * acquisition for the recorder.
 *
 * Hold time is measured from the moment the lock is won to the release reply;
 * time spent waiting for the lock is recorded separately, because it neither
 * eats into the holder's TTL nor says anything about how long the TTL must be.
 *
 * A `RedisLock` can be acquired again after it was released, but not twice at once.
 *
 * @example
 * await using lock = await RedisLock.acquire(redis, 'order:lock:product:123', { ttlMs: 10_000, recorder });
 * await createOrder({ signal: lock.signal });
 */
export class RedisLock {
  readonly key: string;
  private readonly options: ResolvedLockOptions;
  private readonly redis: LockCommands;

  private state: State = 'idle';
  private tokenValue: string | undefined;
  private fence: number | undefined;
  private attempts = 0;
  private startedAtMs = 0;
  private startPerf = 0;
  private wonPerf = 0;
  /** Monotonic time by which the server has certainly expired the key, unless extended. */
  private expiresPerf = 0;
  private threw = false;
  private lost = false;
  private releasedHeldMs = 0;
  private controller: AbortController | undefined;
  private abortTimer: NodeJS.Timeout | undefined;

  constructor(redis: LockClient, key: string, options: LockOptions) {
    this.redis = lockCommandsOf(redis);
    if (typeof key !== 'string' || key === '') {
      throw new TtlAdvisorError(`Expected the lock key to be a non-empty string, got \`${String(key)}\``);
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

  /** Whether the lock is currently held (as far as this process knows). */
  get isHeld(): boolean {
    return this.state === 'held' && !this.lost;
  }

  /** The fencing token drawn with this acquisition, when `fencing` is on. */
  get fencingToken(): number | undefined {
    return this.fence;
  }

  /** How long the lock was held: so far while held, until the release reply once released (ms). */
  get heldMs(): number {
    if (this.state === 'held') return performance.now() - this.wonPerf;
    return this.releasedHeldMs;
  }

  /** Milliseconds until the TTL runs out (never negative), 0 when not held. */
  get remainingMs(): number {
    return this.state === 'held' ? Math.max(0, this.expiresPerf - performance.now()) : 0;
  }

  /**
   * Aborts when the TTL runs out before the lock is released (or when the lock
   * is found lost), with a {@link LockLostError} as its reason. Pass it to the
   * I/O of the critical section so work stops once exclusivity is gone. Created
   * on first use, so locks that never ask for it pay nothing.
   */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.lost) this.abort();
      else if (this.state === 'held') this.armAbortTimer();
    }
    return this.controller.signal;
  }

  /**
   * Takes the lock, retrying while another holder has it. Throws
   * {@link LockNotAcquiredError} when the retries or `acquireTimeoutMs` run out,
   * and {@link LockRedisError} when Redis fails or does not answer.
   */
  async acquire(): Promise<this> {
    if (this.state === 'acquiring' || this.state === 'held') {
      throw new TtlAdvisorError(`Lock \`${this.key}\` is already ${this.state} by this RedisLock`);
    }
    const o = this.options;
    this.state = 'acquiring';
    this.tokenValue = randomUUID();
    this.fence = undefined;
    this.attempts = 0;
    this.threw = false;
    this.lost = false;
    this.controller = undefined;
    this.releasedHeldMs = 0;
    this.startedAtMs = Date.now();
    this.startPerf = performance.now();
    const deadline = this.startPerf + o.acquireTimeoutMs;

    let sentPerf = this.startPerf;
    for (;;) {
      this.attempts++;
      // Awaited here rather than in a helper: every extra async layer costs measurable CPU per lock.
      const pending = this.sendSet();
      let reply: unknown;
      try {
        // The full command timeout even near the acquire deadline: a reply that is merely slower
        // than the time left is contention, not a Redis failure.
        reply = await (o.commandTimeoutMs === 0 ? pending : withDeadline(pending, o.commandTimeoutMs));
      } catch (error) {
        if (error instanceof CommandTimeoutError) {
          // The SET may still reach Redis later; queue a release so it cannot leave an orphan lock.
          runScript(this.redis, RELEASE, [this.key], [this.tokenValue!]).catch(noop);
        }
        this.state = 'released';
        this.recordSample('error', undefined);
        throw new LockRedisError(this.key, 'acquire', { cause: error });
      }
      const won = o.fencing ? typeof reply === 'number' : reply === 'OK';
      if (won && o.fencing) this.fence = reply as number;
      const now = performance.now();
      if (won) {
        this.wonPerf = now;
        // The server started the TTL after we sent SET, so this errs on the early side.
        this.expiresPerf = sentPerf + o.ttlMs;
        this.state = 'held';
        return this;
      }
      if (this.attempts > o.retryCount || now >= deadline) {
        this.state = 'released';
        this.recordSample('not_acquired', undefined);
        throw new LockNotAcquiredError(this.key, this.attempts, now - this.startPerf);
      }
      const pause = o.retryDelayMs + (o.retryJitterMs > 0 ? Math.random() * o.retryJitterMs : 0);
      await sleep(Math.min(pause, deadline - now));
      sentPerf = performance.now();
    }
  }

  /**
   * Releases the lock if we still hold it. Resolves `true` when our lock was
   * deleted, `false` when it had already expired or been taken over (the sample
   * then says `expired`, `onLockLost` is called and the signal aborts). Throws
   * {@link LockRedisError} when Redis fails.
   */
  async release(): Promise<boolean> {
    return this.finish(false);
  }

  /** @internal Releases and records whether the critical section threw. */
  async finish(threw: boolean): Promise<boolean> {
    if (this.state !== 'held') return false;
    this.threw = threw;
    this.state = 'released';
    this.clearAbortTimer();
    let deleted: unknown;
    try {
      try {
        deleted = await this.command(this.redis.evalsha(RELEASE.sha, [this.key], [this.tokenValue!]));
      } catch (error) {
        if (!isNoScript(error)) throw error;
        deleted = await this.command(this.redis.eval(RELEASE.source, [this.key], [this.tokenValue!]));
      }
    } catch (error) {
      this.releasedHeldMs = performance.now() - this.wonPerf;
      this.recordSample('error', this.releasedHeldMs);
      throw new LockRedisError(this.key, 'release', { cause: error });
    }
    const heldMs = performance.now() - this.wonPerf;
    this.releasedHeldMs = heldMs;
    if (deleted === 1) {
      this.recordSample('released', heldMs);
      return true;
    }
    this.markLost(heldMs);
    this.recordSample('expired', heldMs);
    return false;
  }

  /**
   * Resets the TTL to `ttlMs` from now if we still hold the lock. Resolves
   * `false` (and marks the lock lost) when it had already expired.
   */
  async extend(ttlMs: number = this.options.ttlMs): Promise<boolean> {
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) {
      throw new TtlAdvisorError(`Expected \`ttlMs\` to be an integer ≥ 1, got \`${String(ttlMs)}\``);
    }
    if (this.state !== 'held' || this.lost) return false;
    const sentPerf = performance.now();
    let extended: unknown;
    try {
      extended = await this.command(runScript(this.redis, EXTEND, [this.key], [this.tokenValue!, ttlMs]));
    } catch (error) {
      throw new LockRedisError(this.key, 'extend', { cause: error });
    }
    if (extended !== 1) {
      this.markLost(performance.now() - this.wonPerf);
      return false;
    }
    this.expiresPerf = sentPerf + ttlMs;
    if (this.controller && !this.controller.signal.aborted) this.armAbortTimer();
    return true;
  }

  /** `await using lock = …` releases at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  /** Sends the acquiring command: SET NX PX, or the fencing script. */
  private sendSet(): Promise<unknown> {
    const o = this.options;
    return o.fencing
      ? runScript(this.redis, ACQUIRE_WITH_FENCE, [this.key, fenceKeyOf(this.key)], [this.tokenValue!, o.ttlMs])
      : this.redis.setNxPx(this.key, this.tokenValue!, o.ttlMs);
  }

  private command<T>(pending: Promise<T>): Promise<T> {
    return this.options.commandTimeoutMs === 0 ? pending : withDeadline(pending, this.options.commandTimeoutMs);
  }

  private markLost(heldMs: number): void {
    if (this.lost) return;
    this.lost = true;
    this.abort();
    const callback = this.options.onLockLost;
    if (callback) {
      try {
        callback({ key: this.key, ttlMs: this.options.ttlMs, heldMs });
      } catch {
        // A failing observer must not turn a completed critical section into an error.
      }
    }
  }

  private recordSample(outcome: Outcome, holdMs: number | undefined): void {
    const recorder = this.options.recorder;
    if (!recorder) return;
    try {
      recorder.record({
        key: this.key,
        pattern: this.options.pattern,
        at: this.startedAtMs,
        holdMs,
        waitMs: (outcome === 'not_acquired' || holdMs === undefined ? performance.now() : this.wonPerf) - this.startPerf,
        attempts: this.attempts,
        ttlMs: this.options.ttlMs,
        outcome,
        threw: this.threw,
      });
    } catch {
      // Recording must never break the lock.
    }
  }

  private armAbortTimer(): void {
    this.clearAbortTimer();
    this.abortTimer = setTimeout(() => this.abort(), Math.max(0, this.expiresPerf - performance.now()));
    this.abortTimer.unref();
  }

  private clearAbortTimer(): void {
    if (this.abortTimer) clearTimeout(this.abortTimer);
    this.abortTimer = undefined;
  }

  private abort(): void {
    this.clearAbortTimer();
    const controller = this.controller;
    if (controller && !controller.signal.aborted) {
      const heldMs = this.wonPerf ? performance.now() - this.wonPerf : 0;
      controller.abort(new LockLostError(this.key, this.options.ttlMs, heldMs));
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function noop(): void {}
