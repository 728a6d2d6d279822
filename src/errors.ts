/**
 * Every error ttl-advisor throws on purpose is a `TtlAdvisorError`, so a caller
 * can tell ours from everything else with one `instanceof`.
 */
export class TtlAdvisorError extends Error {
  override readonly name: string = 'TtlAdvisorError';
}

/**
 * The lock could not be taken within the retry budget: another holder kept it.
 * A service usually maps this to HTTP 429 / 503 with a Retry-After.
 */
export class LockNotAcquiredError extends TtlAdvisorError {
  override readonly name = 'LockNotAcquiredError';
  constructor(
    readonly key: string,
    readonly attempts: number,
    readonly waitedMs: number,
  ) {
    super(`Could not acquire lock \`${key}\` after ${attempts} attempt(s) in ${Math.round(waitedMs)} ms`);
  }
}

/** How a lock was found lost. */
export type LockLossKind =
  /** The TTL ran out by this process's monotonic clock while the lock was held. */
  | 'ttl-ran-out'
  /** Releasing or extending found the key gone or holding another token. */
  | 'gone'
  /** An automatic extension failed (Redis error or timeout): the lock may run out unseen. */
  | 'extend-failed';

/**
 * The lock expired (or was taken over) while the critical section still ran:
 * another holder may have entered. This is exactly the failure a TTL that is
 * too short causes.
 */
export class LockLostError extends TtlAdvisorError {
  override readonly name = 'LockLostError';
  constructor(
    readonly key: string,
    readonly ttlMs: number,
    /** How long the lock had been held, from when it was won (ms). */
    readonly heldMs: number,
    readonly kind: LockLossKind = 'gone',
    options?: { cause?: unknown; ttlStartedBeforeWinMs?: number },
  ) {
    super(lossMessage(key, ttlMs, heldMs, kind, options?.ttlStartedBeforeWinMs ?? 0), options);
  }
}

function lossMessage(key: string, ttlMs: number, heldMs: number, kind: LockLossKind, earlyMs: number): string {
  const held = Math.round(heldMs);
  if (kind === 'ttl-ran-out') {
    // The server starts the TTL when it runs SET, before the reply tells us we won: we see less than the TTL.
    const early = Math.round(earlyMs);
    return `Lock \`${key}\` expired while held: its TTL of ${ttlMs} ms ran out ${held} ms after the lock was won` +
      (early > 0 ? ` (the TTL runs from when SET was sent, ${early} ms before the reply said it was won)` : '');
  }
  if (kind === 'extend-failed') return `Lock \`${key}\` could not be extended after ${held} ms (TTL ${ttlMs} ms); it may expire while held`;
  return `Lock \`${key}\` was lost while held: after ${held} ms (TTL ${ttlMs} ms) its key had expired or belonged to another holder`;
}

/** Redis failed or did not answer in time while taking, extending or releasing a lock. */
export class LockRedisError extends TtlAdvisorError {
  override readonly name = 'LockRedisError';
  constructor(
    readonly key: string,
    readonly operation: 'acquire' | 'release' | 'extend',
    options: { cause: unknown },
  ) {
    super(`Redis failed during ${operation} of lock \`${key}\`: ${describe(options.cause)}`, options);
  }
}

/** An option or argument was invalid; the message names it, what was expected and what was received. */
export class ConfigError extends TtlAdvisorError {
  override readonly name: string = 'ConfigError';
}

/**
 * A samples database could not be read: missing, not SQLite, or written by a
 * newer ttl-advisor than this one.
 */
export class DatabaseError extends TtlAdvisorError {
  override readonly name = 'DatabaseError';
  constructor(
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A policy file could not be read or is invalid: the message names the file, the entry and what was expected. */
export class PolicyFileError extends ConfigError {
  override readonly name = 'PolicyFileError';
  constructor(
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${path}: ${message}`, options);
  }
}

/** `ttl-advisor watch` cannot run against this Redis as it is: notifications off and not to be set, no such server. */
export class WatchError extends TtlAdvisorError {
  override readonly name = 'WatchError';
}

/** Prometheus could not be asked, or did not answer as Prometheus: the message is one line and names no credential. */
export class PrometheusError extends TtlAdvisorError {
  override readonly name = 'PrometheusError';
  constructor(
    /** The URL as it may be shown (credentials redacted). */
    readonly url: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
