/** Patterns remembered at most; past it, new patterns are not confirmed (their holds stay unrecorded, and counted). */
export const MAX_CONFIRMED_PATTERNS = 10_000;

/** A set that admits at most `max` members; a member admitted stays admitted. What bounds a door's memory of patterns. */
export class BoundedSet {
  private readonly members = new Set<string>();

  constructor(private readonly max: number) {}

  has(member: string): boolean {
    return this.members.has(member);
  }

  /** Admits `member` if there is room; returns whether it is a member now (false only when full). */
  admit(member: string): boolean {
    if (this.members.has(member)) return true;
    if (this.members.size >= this.max) return false;
    this.members.add(member);
    return true;
  }

  get size(): number {
    return this.members.size;
  }

  clear(): void {
    this.members.clear();
  }
}

/**
 * The rule that tells a lock from a cache entry written the same way
 * (`SET key value NX PX ttl`) when the lock's code is not ours: a pattern is a
 * lock once a release was seen on it — a token-checked release (`instrument`),
 * or the key deleted while held (`watch`). Until then the holds of its keys
 * are not samples; a pattern confirmed stays confirmed. Bounded.
 */
export class ConfirmedPatterns extends BoundedSet {
  constructor() {
    super(MAX_CONFIRMED_PATTERNS);
  }

  /** A release was seen on `pattern`; returns whether it is confirmed now (false only when full). */
  confirm(pattern: string): boolean {
    return this.admit(pattern);
  }

  /** Patterns renamed as their position was learned: a confirmed provisional pattern confirms its learned one. */
  rename(aliases: readonly { from: string; to: string }[]): void {
    for (const { from, to } of aliases) if (this.has(from)) this.admit(to);
  }
}
