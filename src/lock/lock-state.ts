import { performance } from 'node:perf_hooks';
import { LockLostError, TtlAdvisorError, type LockLossKind } from '../errors.js';
import { TRUSTED_SAMPLE } from '../sample/check-sample.js';
import type { LockSample, Outcome } from '../sample/sample.js';
import type { AutoExtender } from './auto-extend.js';
import type { LeaseLog } from './lease-log.js';
import { LockSignal } from './lock-signal.js';
import type { ResolvedLockOptions } from './options.js';

type State = 'idle' | 'acquiring' | 'held' | 'released';

/**
 * What a lock knows about one acquisition, and what it tells: whether it is held, its signal, how a loss
 * is reported, and its sample. {@link RedisLock} adds the commands that take, extend and release it.
 */
export abstract class LockState {
  protected state: State = 'idle';
  /** Bumped by every acquire: a reply that arrives for an earlier acquisition changes nothing. */
  protected generation = 0;
  protected tokenValue: string | undefined;
  protected fence: number | undefined;
  protected attempts = 0;
  protected extensions = 0;
  protected startedAtMs = 0;
  protected startPerf = 0;
  protected sentPerf = 0;
  protected wonPerf = 0;
  protected releaseSentPerf = 0;
  /** Monotonic time from which the key may have expired (the TTL counted from when SET was sent), unless extended. */
  protected expiresPerf = 0;
  /** Monotonic time by which the key has expired for certain (the TTL counted from the reply). */
  protected certainExpiryPerf = 0;
  protected threw = false;
  protected lost: LockLostError | undefined;
  protected releasedHeldMs = 0;
  /** Made on first use (most locks never ask for their signal): see {@link signal}. */
  protected abort: LockSignal | undefined;
  protected extender: AutoExtender | undefined;
  /** A lease's renewals (`autoExtend`, or since the first `extend()`). */
  protected lease: LeaseLog | undefined;

  constructor(
    readonly key: string,
    protected readonly options: ResolvedLockOptions,
  ) {}

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

  /** Marks the lock lost (once): aborts the signal and tells `onLockLost`. */
  protected markLost(kind: LockLossKind, heldMs: number, cause?: unknown): void {
    if (this.lost) return;
    this.lost = this.lossError(kind, heldMs, cause);
    this.extender?.stop();
    this.abort?.abort(this.lost); // a signal made later starts aborted (see lockSignal)
    // Wrapped so that it never throws: a failing observer must not turn a completed section into an error.
    this.options.onLockLost?.({ key: this.key, ttlMs: this.options.ttlMs, heldMs });
  }

  /** Stops acquiring because the caller's signal aborted. */
  protected giveUp(reason: unknown): never {
    this.state = 'released';
    this.recordSample('not_acquired', undefined);
    throw reason;
  }
  protected recordSample(outcome: Outcome, holdMs: number | undefined): void {
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
  protected lockSignal(): LockSignal {
    if (!this.abort) {
      this.abort = new LockSignal(() => this.lossError('ttl-ran-out', this.expiresPerf - this.wonPerf));
      if (this.lost) this.abort.abort(this.lost);
      else if (this.state === 'held') this.abort.arm(this.expiresPerf);
    }
    return this.abort;
  }

  protected lossError(kind: LockLossKind, heldMs: number, cause?: unknown): LockLostError {
    return new LockLostError(this.key, this.options.ttlMs, heldMs, kind, {
      ...(cause !== undefined && { cause }),
      ttlStartedBeforeWinMs: this.wonPerf - this.sentPerf,
    });
  }
}
