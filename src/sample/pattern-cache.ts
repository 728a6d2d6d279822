import { idPrefixAt, idStartOf, representativeOf } from '../keys/id-prefix.js';
import { MAX_TEMPLATE_KEY_LENGTH, type CompiledTemplate } from '../keys/pattern.js';
import { ownCopy } from '../text.js';

/** Keys (and id prefixes) remembered at most; a full map is emptied and refilled. */
export const KEY_CACHE_LIMIT = 10_000;
/** Slots of the id-prefix table looked at for one prefix; a prefix that finds no room within them is kept in a map. */
const PROBES = 8;
/** The id-prefix table's first size (slots). */
const MIN_SLOTS = 64;
/** Characters of a prefix hashed at most. */
const SAMPLES = 8;
/** Prefixes shorter than this hash the characters that told their length's prefixes apart; longer ones, {@link SAMPLES} spread evenly. */
const ADAPTIVE_LENGTHS = 128;

/**
 * The one bounded key → pattern cache of every door and recorder (the
 * aggregator, `instrument`, `watch`, the policy's `ttlFor`): what a key's
 * pattern gives (`valueOf`, called with the key or with a key of the same
 * pattern), found without deriving the pattern again.
 *
 * Keys that end in a separator and an id (`order:lock:product:123`) share one
 * entry per prefix (see `idPrefixAt`), so a million distinct ids cost one
 * derivation and no cache churn. Other keys are cached one by one, the map
 * emptied when full. With templates that could tell two ids apart (a digit in
 * their literal text), every key is derived.
 *
 * The prefixes live in an open-addressed table, found by a hash of a few of
 * the prefix's characters and confirmed by one native comparison. A key is a
 * fresh string (no hash computed yet) and reading one of its characters from
 * JavaScript costs a few ns, so hashing the whole prefix, or cutting it and
 * hashing it in a map, cost more than the rest of `record()`. Which characters:
 * for each prefix length, the positions where two prefixes of that length were
 * first seen to differ (`servicea:lock:item:` and `serviceb:lock:item:`: one
 * character, the eighth). Prefixes that still collide past {@link PROBES}
 * slots go to a map: slower, never wrong.
 */
export class PatternCache<V> {
  private readonly byKey = new Map<string, V>();
  private readonly byPrefix = new Map<string, V>();
  /**
   * The id-prefix table: per slot its hash (0: empty), the key's characters
   * before the id, the id's start and kind (see `idStartOf`) and the value.
   * It starts small and doubles while at most half full: an application's few
   * dozen prefixes stay in a few cache lines.
   */
  private hashes = new Int32Array(MIN_SLOTS);
  private starts = new Int32Array(MIN_SLOTS);
  private prefixes = new Array<string | undefined>(MIN_SLOTS).fill(undefined);
  private values = new Array<V | undefined>(MIN_SLOTS).fill(undefined);
  private prefixCount = 0;
  private readonly maxSlots: number;
  /** Per prefix length below {@link ADAPTIVE_LENGTHS}: how many positions are hashed, and which (`SAMPLES` per length). */
  private readonly sampled = new Uint8Array(ADAPTIVE_LENGTHS);
  private readonly positions = new Int32Array(ADAPTIVE_LENGTHS * SAMPLES);
  /**
   * The last key without an id asked, and its value: a lock's key is asked
   * again at its release, a busy key many times. (Not asked first: comparing
   * two different keys of one length cost as much as the table's lookup.)
   */
  private lastKey: string | undefined;
  private lastValue: V | undefined;
  /** Keys ending in a decimal id may share their prefix's entry; with a UUID, only without templates. */
  private readonly decimalShared: boolean;
  private readonly uuidShared: boolean;

  constructor(
    templates: readonly CompiledTemplate[],
    private readonly valueOf: (key: string) => V,
    private readonly limit = KEY_CACHE_LIMIT,
    /**
     * The miner whose patterns `valueOf` gives, if any: when it learns a position, it empties the cache, and
     * every entry is derived anew (told, not asked: a check on every lookup kept it from inlining).
     */
    learner?: { onLearn(listener: () => void): void },
  ) {
    this.uuidShared = templates.length === 0;
    this.decimalShared = templates.every((t) => t.sameForEveryId);
    this.maxSlots = 2 ** Math.ceil(Math.log2(Math.max(MIN_SLOTS, limit * 2)));
    // Emptied in the middle of a lookup too (a key's derivation that learned a position): what the lookup then keeps is derived anew.
    learner?.onLearn(() => this.clear());
  }

  /** What `key`'s pattern gives. */
  get(key: string): V {
    // `=== true`, not a truth test: V8 compiled these fields' tests as those of any value (a dozen instructions each).
    const start = this.decimalShared === true ? idStartOf(key) : -1;
    if (start >= 0 && (this.uuidShared === true || ((start & 1) === 0 && key.length <= MAX_TEMPLATE_KEY_LENGTH))) return this.byIdPrefix(key, start);
    return this.byWholeKey(key);
  }

  /** {@link get} for a key cached alone (apart, so that V8 inlines `get` and the id-prefix lookup into their callers). */
  private byWholeKey(key: string): V {
    if (key === this.lastKey) return this.lastValue!;
    let value = this.byKey.get(key);
    if (value === undefined) {
      value = this.valueOf(key);
      if (this.byKey.size >= this.limit) this.byKey.clear();
      this.byKey.set(key, value);
    }
    this.lastKey = key;
    this.lastValue = value;
    return value;
  }

  clear(): void {
    this.lastKey = undefined;
    this.lastValue = undefined;
    this.byKey.clear();
    this.clearPrefixes();
  }

  private clearPrefixes(): void {
    this.byPrefix.clear();
    this.sampled.fill(0);
    this.resize(MIN_SLOTS);
  }

  /** Empties the table and makes it `slots` long. */
  private resize(slots: number): void {
    this.hashes = new Int32Array(slots);
    this.starts = new Int32Array(slots);
    this.prefixes = new Array<string | undefined>(slots).fill(undefined);
    this.values = new Array<V | undefined>(slots).fill(undefined);
    this.prefixCount = 0;
  }

  /** Puts every prefix back into a table `slots` long, hashed anew; any that find no room go to the map. */
  private rebuild(slots: number): void {
    const { hashes, starts, prefixes, values } = this;
    this.resize(slots);
    for (let i = 0; i < hashes.length; i++) if (hashes[i] !== 0) this.put(this.hashOf(prefixes[i]!, starts[i]!), prefixes[i]!, starts[i]!, values[i]!);
  }

  private put(hash: number, prefix: string, start: number, value: V): void {
    const mask = this.hashes.length - 1;
    for (let probe = 0, slot = hash & mask; probe < PROBES; probe++, slot = (slot + 1) & mask) {
      if (this.hashes[slot] === 0) {
        this.hashes[slot] = hash;
        this.starts[slot] = start;
        this.prefixes[slot] = prefix;
        this.values[slot] = value;
        this.prefixCount++;
        return;
      }
    }
    this.byPrefix.set(idPrefixAt(prefix, start), value);
  }

  /** The value of `key`'s id prefix in the table, or undefined. Apart from {@link byIdPrefix}'s miss path so that V8 inlines it into `get`. */
  private find(key: string, start: number, hash: number): V | undefined {
    const { hashes } = this;
    const mask = hashes.length - 1;
    for (let probe = 0, slot = hash & mask; probe < PROBES; probe++, slot = (slot + 1) & mask) {
      const h = hashes[slot]!;
      if (h === 0) return undefined;
      // Compared natively, without cutting the key: reading its characters one by one from JavaScript is slow.
      if (h === hash && this.starts[slot] === start && key.lastIndexOf(this.prefixes[slot]!, 0) === 0) return this.values[slot]!;
    }
    return undefined;
  }

  private byIdPrefix(key: string, start: number): V {
    const hash = this.hashOf(key, start);
    return this.find(key, start, hash) ?? this.addPrefix(key, start, hash);
  }

  /** A prefix not in the table: its value found (or derived) and kept. */
  private addPrefix(key: string, start: number, hash: number): V {
    const { hashes, prefixes } = this;
    const mask = hashes.length - 1;
    const length = start >> 1;
    // The last prefix of the same length that hashed alike, to learn where they differ.
    let collided: string | undefined;
    for (let probe = 0, slot = hash & mask; probe < PROBES && hashes[slot] !== 0; probe++, slot = (slot + 1) & mask) {
      if (hashes[slot] === hash && this.starts[slot] === start) collided = prefixes[slot]!;
    }
    const prefix = idPrefixAt(key, start);
    // The map holds what found no room in the table: nothing, but for prefixes made to collide.
    let value = this.byPrefix.size > 0 ? this.byPrefix.get(prefix) : undefined;
    if (value !== undefined) return value;
    value = this.valueOf(representativeOf(prefix));
    if (this.prefixCount + this.byPrefix.size >= this.limit) this.clearPrefixes();
    else if (collided !== undefined && this.learn(key, collided, length)) this.rebuild(hashes.length);
    else if (this.prefixCount * 2 >= hashes.length && hashes.length < this.maxSlots) this.rebuild(hashes.length * 2);
    const own = ownCopy(key.slice(0, length));
    this.put(this.hashOf(own, start), own, start, value);
    return value;
  }

  /** Hashes, from now on, the first position where `key` and a prefix of the same length that hashed alike differ; false when there is no room for it. */
  private learn(key: string, other: string, length: number): boolean {
    if (length >= ADAPTIVE_LENGTHS || this.sampled[length]! >= SAMPLES) return false;
    let at = 0;
    while (at < length && key.charCodeAt(at) === other.charCodeAt(at)) at++;
    if (at === length) return false;
    this.positions[length * SAMPLES + this.sampled[length]!] = at;
    this.sampled[length]!++;
    return true;
  }

  /** A hash (never 0) of an id prefix's start and some of its characters (see the class comment), read from `text` (a key or a prefix). */
  private hashOf(text: string, start: number): number {
    const length = start >> 1;
    let h = Math.imul(start ^ 0x9e3779b9, 0x85ebca6b);
    if (length < ADAPTIVE_LENGTHS) {
      const n = this.sampled[length]!;
      const base = length * SAMPLES;
      for (let j = 0; j < n; j++) h = Math.imul(h ^ text.charCodeAt(this.positions[base + j]!), 0x01000193);
    } else {
      for (let j = 0; j < SAMPLES; j++) h = Math.imul(h ^ text.charCodeAt(((j * (length - 1)) / (SAMPLES - 1)) | 0), 0x01000193);
    }
    h ^= h >>> 15;
    return h === 0 ? 1 : h;
  }
}

