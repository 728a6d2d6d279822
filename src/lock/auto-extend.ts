import { performance } from 'node:perf_hooks';

/** What the auto-extender needs of a lock. */
export interface Extendable {
  isHeld(): boolean;
  /** Extends by the TTL; `false` when the lock was found lost (the lock marks itself). */
  extend(): Promise<boolean>;
  /** An extension failed with an error: the lock may run out unseen. */
  failed(error: unknown): void;
}

/**
 * Keeps a held lock alive: extends it by its TTL every `intervalMs`, until it is
 * released, an extension fails, or the next extension would keep it past
 * `maxHoldMs`. Runs on a timer that never throws and never keeps the process alive.
 */
export class AutoExtender {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly startedPerf = performance.now();

  constructor(
    private readonly lock: Extendable,
    private readonly intervalMs: number,
    private readonly maxHoldMs: number,
  ) {
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    // Past the cap, no extension is sent: the lock then runs out at its TTL like any other.
    if (performance.now() - this.startedPerf + this.intervalMs > this.maxHoldMs) return this.stop();
    this.timer = setTimeout(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    if (this.stopped || !this.lock.isHeld()) return;
    try {
      const extended = await this.lock.extend();
      if (!extended) return this.stop();
    } catch (error) {
      this.stop();
      try {
        this.lock.failed(error);
      } catch {
        // nothing may escape a timer
      }
      return;
    }
    this.schedule();
  }
}
