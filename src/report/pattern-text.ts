import type { UnattributedSamples } from '../analyze/hints.js';
import type { LearnedPattern } from '../keys/learned-names.js';
import { OVERFLOW_PATTERN } from '../keys/pattern.js';
import { formatCount } from '../units.js';

/** How a pattern was learned from the keys, in a sentence; undefined for a pattern named as it was recorded. */
export function learnedText(learned: LearnedPattern | undefined): string | undefined {
  if (!learned) return undefined;
  const positions = learned.positions.map((p) => `position ${p.position}${p.distinct > 1 ? ` (past ${formatCount(p.distinct - 1)} distinct values)` : ''}`);
  const where = positions.length > 0 ? `learned from the keys at ${positions.join(' and ')}` : 'learned from the keys';
  return learned.names > 1 ? `${where}; ${formatCount(learned.names)} recorded names read as this pattern` : where;
}

/** Samples under `{other}`: how many, why they are there, and what to do, in a sentence. */
export function unattributedText(u: UnattributedSamples): string {
  return (
    `${formatCount(u.count)} samples under ${OVERFLOW_PATTERN} belong to no one lock (recorded past the pattern budget, ` +
    'or in keys the pattern learner had no room for), so they get no verdict and no recommendation; ' +
    'name those keys with templates (`patterns`), or raise `maxPatterns`'
  );
}
