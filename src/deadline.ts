import { performance } from 'node:perf_hooks';

/** A Redis reply did not arrive within `commandTimeoutMs`. */
export class CommandTimeoutError extends Error {
  override readonly name = 'CommandTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`no reply from Redis within ${Math.round(timeoutMs)} ms`);
  }
}

/**
 * Command timeouts for the lock's hot path, without a timer per command.
 *
 * Every lock sends two commands; a `setTimeout` + `clearTimeout` pair for each
 * cost more than the rest of the lock's own code, and a `Set` of pending
 * commands more still (hash churn). Pending commands instead sit in an
 * intrusive doubly linked list (O(1) to add and remove, nothing to hash), and
 * one shared watchdog, running only while commands are pending, rejects the
 * overdue ones. Deadlines are absolute monotonic times, so a busy event loop
 * that delays the watchdog does not stretch them: the first check after a
 * deadline fails the command (counting ticks instead turned 500 ms into
 * 1.5 s behind 30 ms turns). A timeout fires at most one tick late.
 */
export const WATCHDOG_TICK_MS = 10;

class PendingCommand<T> {
  prev: PendingCommand<unknown> | Sentinel;
  next: PendingCommand<unknown> | Sentinel;

  constructor(
    /** Monotonic time (performance.now(), ms) after which the command has failed. */
    readonly deadline: number,
    readonly timeoutMs: number,
    private readonly resolve: (value: T) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.prev = sentinel.prev;
    this.next = sentinel;
    sentinel.prev.next = this;
    sentinel.prev = this;
  }

  settle(value: T): void {
    this.unlink();
    this.resolve(value);
  }

  fail(error: unknown): void {
    this.unlink();
    this.reject(error);
  }

  private unlink(): void {
    this.prev.next = this.next;
    this.next.prev = this.prev;
    // Settling twice (a reply after the timeout) must not unlink neighbours again.
    this.prev = this.next = detached;
  }
}

interface Sentinel {
  prev: PendingCommand<unknown> | Sentinel;
  next: PendingCommand<unknown> | Sentinel;
}

const sentinel: Sentinel = { prev: undefined!, next: undefined! };
sentinel.prev = sentinel.next = sentinel;
// Where a settled command points, so a late second unlink is harmless.
const detached: Sentinel = { prev: undefined!, next: undefined! };
detached.prev = detached.next = detached;

let watchdog: NodeJS.Timeout | undefined;

function checkDeadlines(): void {
  if (sentinel.next === sentinel) {
    clearInterval(watchdog);
    watchdog = undefined;
    return;
  }
  const now = performance.now();
  let node = sentinel.next;
  while (node !== sentinel) {
    const command = node as PendingCommand<unknown>;
    node = command.next;
    if (command.deadline <= now) command.fail(new CommandTimeoutError(command.timeoutMs));
  }
}

/** Resolves or rejects as `pending` does, or rejects with {@link CommandTimeoutError} after about `timeoutMs`. */
export function withDeadline<T>(pending: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const deadline = performance.now() + timeoutMs;
    const command = new PendingCommand<T>(deadline, timeoutMs, resolve, reject);
    if (!watchdog) {
      watchdog = setInterval(checkDeadlines, WATCHDOG_TICK_MS);
      watchdog.unref();
    }
    pending.then(
      (value) => command.settle(value),
      (error: unknown) => command.fail(error),
    );
  });
}

/** Waits `ms`, or less when `signal` aborts (the caller then checks it). */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
