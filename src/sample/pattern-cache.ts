import { idPrefixAt, idStartOf, representativeOf, samePrefixAt } from '../keys/id-prefix.js';
import { MAX_TEMPLATE_KEY_LENGTH, resolvePattern, type CompiledTemplate } from '../keys/pattern.js';

/** Keys (and id prefixes) remembered at most; a full map is emptied and refilled. */
export const KEY_CACHE_LIMIT = 10_000;
/** Id prefixes compared in place, before any string is cut or hashed. */
const RECENT = 8;

interface Recent<V> {
  readonly key: string;
  readonly start: number;
  readonly value: V;
}

/**
 * The one bounded key → pattern cache of every door and recorder (the
 * aggregator, `instrument`, `watch`, the policy's `ttlFor`): what a key's
 * pattern gives (`valueOf`, called with the key or with a key of the same
 * pattern), found without deriving the pattern again.
 *
 * Keys that end in a separator and an id (`order:lock:product:123`) share one
 * entry per prefix (see `idPrefixAt`), so a million distinct ids cost one
 * derivation and no cache churn; the last few prefixes are compared in place,
 * so most such keys are found without cutting or hashing a string. Other keys
 * are cached one by one, the map emptied when full. With templates that could
 * tell two ids apart (a digit in their literal text), every key is derived.
 */
export class PatternCache<V> {
  private readonly byKey = new Map<string, V>();
  private readonly byPrefix = new Map<string, V>();
  private readonly recent: (Recent<V> | undefined)[] = new Array<Recent<V> | undefined>(RECENT).fill(undefined);
  private next = 0;
  /** The last key asked and its value: a lock's key is asked again at its release, a busy key many times. */
  private lastKey: string | undefined;
  private lastValue: V | undefined;
  /** Keys ending in a decimal id may share their prefix's entry; with a UUID, only without templates. */
  private readonly decimalShared: boolean;
  private readonly uuidShared: boolean;

  constructor(
    templates: readonly CompiledTemplate[],
    private readonly valueOf: (key: string) => V,
    private readonly limit = KEY_CACHE_LIMIT,
  ) {
    this.uuidShared = templates.length === 0;
    this.decimalShared = templates.every((t) => t.sameForEveryId);
  }

  /** What `key`'s pattern gives. */
  get(key: string): V {
    if (key === this.lastKey) return this.lastValue!;
    const start = this.decimalShared ? idStartOf(key) : -1;
    let value: V | undefined;
    if (start >= 0 && (start & 1 ? this.uuidShared : this.uuidShared || key.length <= MAX_TEMPLATE_KEY_LENGTH)) value = this.byIdPrefix(key, start);
    else {
      value = this.byKey.get(key);
      if (value === undefined) {
        value = this.valueOf(key);
        if (this.byKey.size >= this.limit) this.byKey.clear();
        this.byKey.set(key, value);
      }
    }
    this.lastKey = key;
    this.lastValue = value;
    return value;
  }

  clear(): void {
    this.lastKey = undefined;
    this.lastValue = undefined;
    this.byKey.clear();
    this.byPrefix.clear();
    this.recent.fill(undefined);
  }

  private byIdPrefix(key: string, start: number): V {
    const recent = this.recent;
    for (let i = 0; i < RECENT; i++) {
      const r = recent[i];
      if (r !== undefined && r.start === start && samePrefixAt(r.key, key, start)) return r.value;
    }
    const prefix = idPrefixAt(key, start);
    let value = this.byPrefix.get(prefix);
    if (value === undefined) {
      value = this.valueOf(representativeOf(prefix));
      if (this.byPrefix.size >= this.limit) this.byPrefix.clear();
      this.byPrefix.set(prefix, value);
    }
    recent[this.next] = { key, start, value };
    this.next = (this.next + 1) % RECENT;
    return value;
  }
}

/** A {@link PatternCache} of patterns: the first matching template, else the heuristics of `patternOf`. */
export function patternCache(templates: readonly CompiledTemplate[]): PatternCache<string> {
  return new PatternCache(templates, (key) => resolvePattern(key, templates));
}
