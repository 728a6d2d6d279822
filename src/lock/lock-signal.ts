import { performance } from 'node:perf_hooks';

/**
 * The `AbortSignal` of a held lock: aborts when the TTL runs out by this
 * process's monotonic clock, or at once when the lock is found lost. The
 * controller and its timer exist only once someone asks for the signal, so
 * locks that never do pay nothing.
 */
export class LockSignal {
  private controller: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private expiresPerf = 0;
  private armed = false;
  private reason: Error | undefined;

  /** @param expired makes the abort reason when the TTL runs out. */
  constructor(private readonly expired: () => Error) {}

  /** The signal, created (and, when armed, timed) on first access. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      // Already lost, or already past the deadline: aborted from the first look, not a tick later.
      if (this.reason) this.controller.abort(this.reason);
      else if (this.armed && performance.now() >= this.expiresPerf) this.controller.abort(this.expired());
      else if (this.armed) this.startTimer();
    } else if (this.armed && !this.controller.signal.aborted && performance.now() >= this.expiresPerf) {
      // Past the deadline, but the timer has not run (a blocked event loop, a long GC pause).
      this.controller.abort(this.expired());
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller?.signal.aborted ?? false;
  }

  /** Aborts when the TTL runs out at `expiresPerf` (monotonic ms), unless re-armed or cleared first. */
  arm(expiresPerf: number): void {
    this.expiresPerf = expiresPerf;
    this.armed = true;
    if (this.controller && !this.controller.signal.aborted) this.startTimer();
  }

  /** Aborts now (once), with `reason`; a signal asked for later is aborted from the start. */
  abort(reason: Error): void {
    this.clear();
    this.reason ??= reason;
    if (this.controller && !this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** No more timed abort (released, or aborted). */
  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armed = false;
  }

  /** Starts over for a new acquisition. */
  reset(): void {
    this.clear();
    this.controller = undefined;
    this.reason = undefined;
  }

  private startTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.controller && !this.controller.signal.aborted) this.controller.abort(this.expired());
    }, Math.max(0, this.expiresPerf - performance.now()));
    this.timer.unref();
  }
}
