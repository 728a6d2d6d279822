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

const ignore = (): void => undefined;

/**
 * The resolve and reject of the promise {@link newPromise} made last, taken without a closure per promise:
 * read them right after the call, before anything makes another.
 */
export const lastResolvers = { resolve: ignore as (value: never) => void, reject: ignore as (error: unknown) => void };
function capture(resolve: (value: never) => void, reject: (error: unknown) => void): void {
  lastResolvers.resolve = resolve;
  lastResolvers.reject = reject;
}

/** A new pending promise, its resolvers in {@link lastResolvers}. */
export function newPromise<T>(): Promise<T> {
  return new Promise<T>(capture);
}

/**
 * Something the watchdog watches: a node of its list, with a deadline (monotonic ms), told once it
 * has passed. A {@link PendingCommand} is one; `withLock` makes its own lock cycle one, so that a
 * command's timeout costs no promise of its own.
 */
export interface Watched {
  prev: Watched;
  next: Watched;
  deadline: number;
  /** Called by the watchdog once the deadline has passed, after {@link unwatch}: must not throw. */
  timeOut(): void;
}

/** Starts watching `node` until {@link unwatch}; its `deadline` must be set. O(1). */
export function watch(node: Watched): void {
  // Watched twice would link it twice and leave the list pointing at it once it is unwatched.
  unwatch(node);
  node.prev = sentinel.prev;
  node.next = sentinel;
  sentinel.prev.next = node;
  sentinel.prev = node;
  if (!watchdog) {
    watchdog = setInterval(checkDeadlines, WATCHDOG_TICK_MS);
    watchdog.unref();
  }
}

/** Stops watching `node` (its reply came, or it timed out). Idempotent; O(1). */
export function unwatch(node: Watched): void {
  node.prev.next = node.next;
  node.next.prev = node.prev;
  // Unwatched twice (after a timeout) must not unlink neighbours again.
  node.prev = node.next = detached;
}

/**
 * A command under a deadline: {@link reply} settles as the command does, or rejects with
 * {@link CommandTimeoutError} once the deadline has passed. The command's own promise settles
 * {@link reply} directly (no wrapper callbacks: one promise, its two resolvers and this node per
 * command), so the caller says {@link done} once it has the reply, and the watchdog forgets it.
 */
export class PendingCommand<T> implements Watched {
  prev: Watched = detached;
  next: Watched = detached;
  readonly reply: Promise<T>;
  private readonly reject: (error: unknown) => void;

  constructor(
    pending: Promise<T>,
    readonly timeoutMs: number,
    /** Monotonic time (performance.now(), ms) after which the command has failed; the caller's clock reading saves one. */
    readonly deadline: number = performance.now() + timeoutMs,
  ) {
    if (timeoutMs === 0) {
      // No timeout: the command's own promise, and nothing for the watchdog.
      this.reply = pending;
      this.reject = ignore;
      return;
    }
    this.reply = newPromise<T>();
    const { resolve, reject } = lastResolvers;
    this.reject = reject;
    // A reply after the timeout settles nothing: the promise has already rejected.
    void pending.then(resolve as (value: T) => void, reject);
    watch(this);
  }

  /** The reply was awaited (or abandoned): the watchdog need not look at this command again. Idempotent. */
  done(): void {
    unwatch(this);
  }

  /** @internal The watchdog's verdict. */
  timeOut(): void {
    this.reject(new CommandTimeoutError(this.timeoutMs));
  }
}

// The list's head and tail; a node points to itself when the list is empty.
const sentinel: Watched = { prev: undefined!, next: undefined!, deadline: Number.POSITIVE_INFINITY, timeOut: ignore };
sentinel.prev = sentinel.next = sentinel;
// Where an unwatched node points, so a late second unlink is harmless.
const detached: Watched = { prev: undefined!, next: undefined!, deadline: Number.POSITIVE_INFINITY, timeOut: ignore };
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
    const watched = node;
    node = watched.next;
    if (watched.deadline <= now) {
      unwatch(watched);
      watched.timeOut();
    }
  }
}

/** Resolves or rejects as `pending` does, or rejects with {@link CommandTimeoutError} after about `timeoutMs`. */
export function withDeadline<T>(pending: Promise<T>, timeoutMs: number): Promise<T> {
  const command = new PendingCommand(pending, timeoutMs);
  return command.reply.finally(() => command.done());
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
