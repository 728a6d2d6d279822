import { KeyPatternMiner } from './miner.js';
import { TAGGED_ID, isPlaceholder, segmentsOfName } from './segments.js';
import { OVERFLOW_PATTERN } from './pattern.js';

/**
 * Pattern names as recorded (by one or many learners: several files, Prometheus series) read as
 * one learner would name them: renames each learner recorded are followed, and the same miner that
 * learns from keys learns from the names, so that what one lock left under several names (a file
 * that learned `lock:user:{id}`, another that saw a few users only, a metric series exported before
 * its position was learned) is read as one pattern.
 */

/** A rename a learner recorded: `from` is read as `to` (see `store/input.ts`'s `AliasRow`). */
export type RecordedAlias = readonly [from: string, to: string, distinct: number];

/** How one pattern as read came to be: the names merged into it and the positions learned. */
export interface LearnedPattern {
  /** Names recorded that are read as this pattern (itself included when recorded). */
  names: number;
  /** Positions (1-based) learned from the values seen there, with how many distinct values were seen. */
  positions: { position: number; distinct: number }[];
}

export interface LearnedNames {
  /** Each recorded name → the pattern it is read as. */
  nameOf: Map<string, string>;
  /** Per pattern as read: how it was learned. */
  learned: Map<string, LearnedPattern>;
}

/** Renames followed at most in a chain (a → b → c): a learner makes one per position it learns. */
const MAX_CHAIN = 64;

/** Reads `names` as one learner would (see the module comment). `{other}` stays `{other}`. */
export function learnNames(names: Iterable<string>, aliases: readonly RecordedAlias[]): LearnedNames {
  const renamed = new Map<string, string>();
  for (const [from, to] of aliases) if (from !== to && !renamed.has(from)) renamed.set(from, to);
  const follow = (name: string) => {
    let at = name;
    for (let i = 0; i < MAX_CHAIN; i++) {
      const next = renamed.get(at);
      if (next === undefined || next === name) break;
      at = next;
    }
    return at;
  };

  // Names are not keys: a learner saw the keys (their shapes, their count) and decided; here its decisions are
  // followed (a position it learned is learned here too), and no position is learned again from counting names,
  // which would merge what a learner kept apart (fifty services' patterns, a team's explicit ones).
  const miner = new KeyPatternMiner({ literalValues: Number.POSITIVE_INFINITY, maxNodes: Number.MAX_SAFE_INTEGER });
  for (const [from, to, distinct] of aliases) for (const position of learnedPositions(from, to)) miner.markLearned(follow(to), position, distinct);
  const all = [...new Set(names)];
  const followed = all.map(follow);
  // Learn from every name first; then read each with what was learned from all of them.
  for (const name of followed) if (name !== OVERFLOW_PATTERN) miner.learnName(name);
  const nameOf = new Map<string, string>();
  const learned = new Map<string, LearnedPattern>();
  all.forEach((name, i) => {
    const read = name === OVERFLOW_PATTERN ? name : miner.learnName(followed[i]!);
    nameOf.set(name, read);
    let entry = learned.get(read);
    if (!entry) learned.set(read, (entry = { names: 0, positions: read === OVERFLOW_PATTERN ? [] : miner.learnedPositions(read) }));
    entry.names++;
  });
  return { nameOf, learned };
}

/** The positions (1-based) where `to` has a placeholder and `from` another value: what a rename learned. */
export function learnedPositions(from: string, to: string): number[] {
  const a = segmentsOfName(from).values;
  const b = segmentsOfName(to).values;
  const positions: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i] && (isPlaceholder(b[i]!) || b[i] === TAGGED_ID)) positions.push(i + 1);
  }
  return positions;
}
