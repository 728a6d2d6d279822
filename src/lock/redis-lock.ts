import { performance } from 'node:perf_hooks';
import { epochMsAt } from '../clock.js';
import { CommandTimeoutError, PendingCommand, sleep } from '../deadline.js';
import { newToken } from '../token.js';
import { ConfigError, LockNotAcquiredError, LockRedisError, TtlAdvisorError } from '../errors.js';
import { releaseOutcome } from '../sample/outcome.js';
import { AutoExtender } from './auto-extend.js';
import { LeaseLog } from './lease-log.js';
import { fenceKeyOf, lockCommandsOf, type LockClient, type LockCommands } from './client.js';
import { LockState } from './lock-state.js';
import { checkTtl, resolveLockOptions, type LockOptions } from './options.js';
import { ACQUIRE_WITH_FENCE, EXTEND, RELEASE, isNoScript, runScript, runScriptOneKey } from './scripts.js';

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
export class RedisLock extends LockState {
  private readonly redis: LockCommands;

  constructor(redis: LockClient, key: string, options: LockOptions) {
    const commands = lockCommandsOf(redis);
    if (typeof key !== 'string' || key === '') {
      throw new ConfigError(`Expected the lock key to be a non-empty string, got \`${String(key)}\``);
    }
    super(key, resolveLockOptions(options, key));
    this.redis = commands;
  }

  /** Creates a lock and acquires it. */
  static async acquire(redis: LockClient, key: string, options: LockOptions): Promise<RedisLock> {
    return new RedisLock(redis, key, options).acquire();
  }

  /**
   * Takes the lock, retrying while another holder has it. Throws {@link LockNotAcquiredError} when the retries
   * or `acquireTimeoutMs` run out, {@link LockRedisError} when Redis fails, and `signal`'s reason when it aborts.
   */
  acquire(signal: AbortSignal | undefined = this.options.signal): Promise<this> {
    try {
      this.begin();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.attemptUntilWon(signal);
  }

  /** @internal Attempts until won, pausing between: `withLock` sends and reads the first attempt itself, and comes here for the retries. */
  async attemptUntilWon(signal: AbortSignal | undefined): Promise<this> {
    for (;;) {
      const command = this.attempt(signal);
      let reply: unknown;
      try {
        reply = await command.reply;
      } catch (error) {
        command.done();
        return this.acquireFailed(error);
      }
      command.done();
      if (this.attempted(reply, signal)) return this;
      await this.pause(signal);
    }
  }

  /** @internal Starts an acquisition: a fresh token and counters. */
  begin(): void {
    if (this.state === 'acquiring' || this.state === 'held') {
      throw new TtlAdvisorError(`Lock \`${this.key}\` is already ${this.state} by this RedisLock`);
    }
    this.state = 'acquiring';
    this.generation++;
    this.startPerf = this.sentPerf = performance.now();
    this.startedAtMs = epochMsAt(this.startPerf);
    this.tokenValue = newToken(this.options.holder, this.startedAtMs);
    this.fence = undefined;
    this.attempts = 0;
    this.extensions = 0;
    this.threw = false;
    this.lost = undefined;
    this.abort = undefined;
    this.lease = undefined;
    this.releasedHeldMs = 0;
  }

  /** @internal Sends one attempt: SET NX PX, or the fencing script, under the command timeout. */
  attempt(signal: AbortSignal | undefined): PendingCommand<unknown> {
    const pending = this.sendAttempt(signal);
    // The full command timeout even near the acquire deadline: a slow reply is contention, not failure.
    return new PendingCommand(pending, this.options.commandTimeoutMs, this.sentPerf + this.options.commandTimeoutMs);
  }

  /** @internal Sends one attempt, with no timeout of its own: its deadline is `sentPerf + commandTimeoutMs`. */
  sendAttempt(signal: AbortSignal | undefined): Promise<unknown> {
    if (signal?.aborted) this.giveUp(signal.reason);
    const o = this.options;
    if (this.attempts++ > 0) this.sentPerf = performance.now();
    return o.fencing
      ? runScript(this.redis, ACQUIRE_WITH_FENCE, [this.key, fenceKeyOf(this.key)], [this.tokenValue!, o.ttlMs])
      : this.redis.setNxPx(this.key, this.tokenValue!, o.ttlMs);
  }

  /** @internal The command timeout (ms), 0 when off. */
  get commandTimeoutMs(): number {
    return this.options.commandTimeoutMs;
  }

  /** @internal When the attempt sent last has timed out (monotonic ms). */
  get attemptDeadline(): number {
    return this.sentPerf + this.options.commandTimeoutMs;
  }

  /** @internal When the release sent has timed out (monotonic ms). */
  get releaseDeadline(): number {
    return this.releaseSentPerf + this.options.commandTimeoutMs;
  }

  /** @internal An attempt failed in Redis (or timed out). */
  acquireFailed(error: unknown): never {
    // The SET may still reach Redis: queue a release so it cannot leave an orphan lock.
    if (error instanceof CommandTimeoutError) void runScriptOneKey(this.redis, RELEASE, this.key, this.tokenValue!).catch(() => undefined);
    this.state = 'released';
    this.recordSample('error', undefined);
    throw new LockRedisError(this.key, 'acquire', { cause: error });
  }

  /** @internal An attempt's reply: true when won, false to try again; throws when out of retries or aborted. */
  attempted(reply: unknown, signal: AbortSignal | undefined): boolean {
    const o = this.options;
    const won = o.fencing ? typeof reply === 'number' : reply === 'OK';
    const now = performance.now();
    if (won && signal?.aborted) {
      // Won, but the caller stopped waiting meanwhile: nobody will release it, so we do.
      void runScriptOneKey(this.redis, RELEASE, this.key, this.tokenValue!).catch(() => undefined);
      this.giveUp(signal.reason);
    }
    if (won) {
      if (o.fencing) this.fence = reply as number;
      this.wonPerf = now;
      // The server started the TTL after we sent SET, so this errs on the early side.
      this.expiresPerf = this.sentPerf + o.ttlMs;
      this.certainExpiryPerf = now + o.ttlMs;
      this.state = 'held';
      if (o.autoExtendMs > 0) this.startExtending();
      return true;
    }
    if (this.attempts > o.retryCount || now >= this.startPerf + o.acquireTimeoutMs) {
      this.state = 'released';
      this.recordSample('not_acquired', undefined);
      throw new LockNotAcquiredError(this.key, this.attempts, now - this.startPerf);
    }
    return false;
  }

  /** @internal Waits between attempts: the retry delay with its jitter, never past the acquire deadline. */
  pause(signal: AbortSignal | undefined): Promise<void> {
    const o = this.options;
    const pause = o.retryDelayMs + (o.retryJitterMs > 0 ? Math.random() * o.retryJitterMs : 0);
    return sleep(Math.min(pause, this.startPerf + o.acquireTimeoutMs - performance.now()), signal);
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
    const command = this.releaseCommand(threw);
    if (!command) return false;
    let deleted: unknown;
    try {
      deleted = await command.reply;
    } catch (error) {
      command.done();
      return isNoScript(error) ? this.releaseByEval() : this.releaseFailed(error);
    }
    command.done();
    return this.released(deleted);
  }

  /** @internal The release again, by EVAL: Redis had lost its script cache (a restart, SCRIPT FLUSH). */
  async releaseByEval(): Promise<boolean> {
    // A deadline of its own from now: the EVALSHA's has been spent on the NOSCRIPT reply.
    const command = new PendingCommand(this.redis.eval(RELEASE.source, [this.key], [this.tokenValue!]), this.options.commandTimeoutMs);
    let deleted: unknown;
    try {
      deleted = await command.reply;
    } catch (error) {
      command.done();
      return this.releaseFailed(error);
    }
    command.done();
    return this.released(deleted);
  }

  /** @internal Sends the release (compare-and-delete); `undefined` when not held. */
  releaseCommand(threw: boolean): PendingCommand<unknown> | undefined {
    const pending = this.sendRelease(threw);
    if (!pending) return undefined;
    const timeoutMs = this.options.commandTimeoutMs;
    return new PendingCommand(pending, timeoutMs, this.releaseSentPerf + timeoutMs);
  }

  /** @internal Sends the release with no timeout of its own (its deadline is `releaseSentPerf + commandTimeoutMs`); `undefined` when not held. */
  sendRelease(threw: boolean): Promise<unknown> | undefined {
    if (this.state !== 'held') return undefined;
    this.threw = threw;
    this.state = 'released';
    this.abort?.clear();
    this.extender?.stop();
    this.extender = undefined;
    this.lease?.stop();
    this.releaseSentPerf = performance.now();
    // EVALSHA alone: a NOSCRIPT reply is retried by EVAL (releaseByEval), with no catch handler per lock.
    let pending: Promise<unknown>;
    try {
      pending = this.redis.evalshaOneKey(RELEASE.sha, this.key, this.tokenValue!);
    } catch (error) {
      // A client that throws instead of rejecting: the release fails as a rejection would, with its sample.
      pending = Promise.reject(error);
    }
    // No promise at all must not read as "not held" (a silent `false`, no sample): it is a failed release.
    return pending ?? Promise.reject(new TypeError('the Redis client answered the release with no promise'));
  }

  /** @internal The release's reply: true when our lock was deleted. */
  released(deleted: unknown): boolean {
    const repliedPerf = performance.now();
    const heldMs = (this.releasedHeldMs = repliedPerf - this.wonPerf);
    if (deleted === 1) {
      this.recordSample('released', heldMs);
      return true;
    }
    this.markLost('gone', heldMs);
    // `lost` (deleted by someone else, lost by Redis) only when certain; else the TTL ran out: see releaseOutcome.
    this.recordSample(releaseOutcome('gone', this.releaseSentPerf, repliedPerf, this.expiresPerf, this.certainExpiryPerf), heldMs);
    return false;
  }

  /** @internal The release failed in Redis (or timed out): false when the lock had expired for certain anyway. */
  releaseFailed(error: unknown): false {
    const failedPerf = performance.now();
    const heldMs = (this.releasedHeldMs = failedPerf - this.wonPerf);
    const outcome = releaseOutcome('failed', this.releaseSentPerf, failedPerf, this.expiresPerf, this.certainExpiryPerf);
    this.recordSample(outcome, heldMs);
    // No reply, but the TTL had run out for certain before we sent the release: the lock expired while held.
    if (outcome !== 'expired') throw new LockRedisError(this.key, 'release', { cause: error });
    this.markLost('gone', heldMs);
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
      const timeoutMs = this.options.commandTimeoutMs;
      const command = new PendingCommand(runScriptOneKey(this.redis, EXTEND, this.key, this.tokenValue!, ttlMs), timeoutMs, sentPerf + timeoutMs);
      try {
        extended = await command.reply;
      } finally {
        command.done();
      }
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

  private startExtending(): void {
    const current = ((generation) => () => this.generation === generation)(this.generation);
    // On an error the lock is not lost for sure (Redis may be back for the release), but no longer safe: stop the work.
    const failed = (error: unknown) => current() && this.lockSignal().abort(this.lossError('extend-failed', this.heldMs, error));
    this.lease = new LeaseLog(this.sentPerf, this.options.autoExtendMs, this.sentPerf + this.options.maxHoldMs + this.options.ttlMs);
    this.extender = new AutoExtender({ isHeld: () => this.isHeld && current(), extend: () => this.extend(), failed }, this.options.autoExtendMs, this.options.maxHoldMs);
  }
}
