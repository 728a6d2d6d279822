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
    readonly heldMs: number,
  ) {
    super(`Lock \`${key}\` was lost: held ${Math.round(heldMs)} ms with a TTL of ${ttlMs} ms`);
  }
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

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
