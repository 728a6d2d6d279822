/** Patterns remembered at most; past it, new patterns are not confirmed (their holds stay unrecorded, and counted). */
export const MAX_CONFIRMED_PATTERNS = 10_000;

/**
 * The rule that tells a lock from a cache entry written the same way
 * (`SET key value NX PX ttl`) when the lock's code is not ours: a pattern is a
 * lock once a release was seen on it — a token-checked release (`instrument`),
 * or the key deleted while held (`watch`). Until then the holds of its keys
 * are not samples; a pattern confirmed stays confirmed. Bounded.
 */
export class ConfirmedPatterns {
  private readonly patterns = new Set<string>();

  /** Whether a release was seen on `pattern`. */
  has(pattern: string): boolean {
    return this.patterns.has(pattern);
  }

  /** A release was seen on `pattern`; returns whether it is confirmed now (false only when full). */
  confirm(pattern: string): boolean {
    if (this.patterns.has(pattern)) return true;
    if (this.patterns.size >= MAX_CONFIRMED_PATTERNS) return false;
    this.patterns.add(pattern);
    return true;
  }

  /** Patterns renamed as their position was learned: a confirmed provisional pattern confirms its learned one. */
  rename(aliases: readonly { from: string; to: string }[]): void {
    for (const { from, to } of aliases) if (this.patterns.has(from)) this.confirm(to);
  }

  get size(): number {
    return this.patterns.size;
  }

  clear(): void {
    this.patterns.clear();
  }
}
