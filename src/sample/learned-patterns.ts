import { KeyPatternMiner, type PatternAlias } from '../keys/miner.js';
import type { CompiledTemplate } from '../keys/pattern.js';
import { KEY_CACHE_LIMIT, PatternCache } from './pattern-cache.js';

/**
 * A door's key → pattern: the first matching template, else what its miner learned from the keys
 * (see `keys/miner.ts`), through the one bounded cache. When a position is learned, the renames it
 * made go to `onRename` (a door keeps per-pattern state — confirmed locks, the last TTL seen — under
 * the learned name from then on).
 */
export class LearnedPatterns {
  private readonly miner = new KeyPatternMiner();
  private readonly cache: PatternCache<string>;
  private generation = 0;

  constructor(
    templates: readonly CompiledTemplate[],
    private readonly onRename: (aliases: PatternAlias[]) => void = () => {},
    /** A door's own naming tried before the miner (`watch`'s BullMQ job locks); undefined to learn. */
    named: (key: string) => string | undefined = () => undefined,
  ) {
    this.cache = new PatternCache(templates, (key) => templateOf(key, templates) ?? named(key) ?? this.miner.patternOf(key), KEY_CACHE_LIMIT, this.miner);
  }

  get(key: string): string {
    const pattern = this.cache.get(key);
    if (this.miner.generation !== this.generation) {
      this.generation = this.miner.generation;
      const aliases = this.miner.takeAliases();
      if (aliases.length > 0) this.onRename(aliases);
    }
    return pattern;
  }

  clear(): void {
    this.cache.clear();
  }
}

/**
 * A key's pattern where patterns are learned: an explicit pattern wins, then the first matching
 * template, then what `miner` learned from the keys (see `miner.ts`).
 */
export function resolveLearned(key: string, templates: readonly CompiledTemplate[], miner: KeyPatternMiner, explicit?: string): string {
  if (explicit !== undefined && explicit !== '') return explicit;
  return templateOf(key, templates) ?? miner.patternOf(key);
}

/** The first template `key` matches, or undefined. */
function templateOf(key: string, templates: readonly CompiledTemplate[]): string | undefined {
  for (const t of templates) if (t.matches(key)) return t.template;
  return undefined;
}
