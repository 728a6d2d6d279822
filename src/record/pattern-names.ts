import { OVERFLOW_PATTERN, MAX_PATTERN_LENGTH, type CompiledTemplate } from '../keys/pattern.js';
import { KeyPatternMiner } from '../keys/miner.js';
import { resolveLearned } from '../sample/learned-patterns.js';
import type { AliasRow } from '../store/input.js';
import { truncate } from '../text.js';

/**
 * How an aggregator names what it folds: a key's pattern (a template, else learned by the miner,
 * see `keys/miner.ts`), the renames learning makes (kept for the next seal, so that the samples
 * file reads provisional patterns as learned ones), and the pattern budget per instance, where a
 * renamed provisional pattern no longer takes a place and `{other}` never does.
 */
export class PatternNames {
  /** Learns the patterns of keys with neither an explicit pattern nor a template. */
  readonly miner = new KeyPatternMiner();
  private generation = 0;
  /**
   * Renames since the last seal. Bounded without a cap: each renames a pattern the miner remembers (at most
   * `maxIssued`), and a pattern is renamed at most once per position it has.
   */
  private pending: AliasRow[] = [];
  private readonly budget = new Map<string, Set<string>>();

  constructor(
    private readonly templates: readonly CompiledTemplate[],
    private readonly maxPatterns: number,
    /** Told of each provisional pattern renamed (its series takes no more samples). */
    private readonly onRename: (from: string) => void = () => {},
  ) {}

  /** A key's pattern, from a template or learned; a position learned on the way renames patterns. */
  of(key: string): string {
    const pattern = resolveLearned(key, this.templates, this.miner);
    if (this.miner.generation !== this.generation) {
      this.generation = this.miner.generation;
      for (const { from, to, distinct } of this.miner.takeAliases()) {
        // A provisional pattern's samples are read as the learned one's: it no longer takes a place in the budget.
        for (const names of this.budget.values()) names.delete(from);
        this.pending.push([from, to, distinct]);
        this.onRename(from);
      }
    }
    return pattern;
  }

  /**
   * The name a new series of `instance` gets for `pattern` (capped in length, as an explicit pattern
   * of 1 MB once made a 4.4 MB report): itself, or `{other}` past `maxPatterns` patterns.
   */
  admit(instance: string, pattern: string): string {
    const name = truncate(pattern, MAX_PATTERN_LENGTH);
    if (name === OVERFLOW_PATTERN) return name;
    let names = this.budget.get(instance);
    if (!names) this.budget.set(instance, (names = new Set()));
    if (names.has(name)) return name;
    if (names.size >= this.maxPatterns) return OVERFLOW_PATTERN;
    names.add(name);
    return name;
  }

  /** Renames a seal carried that never reached a file or a stream: sent again with the next seal. */
  restore(aliases: readonly AliasRow[]): void {
    for (const alias of aliases) this.pending.push(alias);
  }

  /** The renames since the last call, for a seal. */
  takeAliases(): AliasRow[] | undefined {
    if (this.pending.length === 0) return undefined;
    const taken = this.pending;
    this.pending = [];
    return taken;
  }
}
