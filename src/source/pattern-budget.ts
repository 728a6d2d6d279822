import { learnNames, type RecordedAlias } from '../keys/learned-names.js';
import { DEFAULT_MAX_PATTERNS, OVERFLOW_PATTERN } from '../keys/pattern.js';
import type { CheckedSeries } from './prometheus-answer.js';
import type { SourceLeftOut } from './types.js';

/**
 * Which pattern each pattern label is read as, within a samples file's budget: a Prometheus server
 * may hold any number of label values (2,000 made a 2.8 GB HTML report, 20,000 were projected at
 * 28 GB), where a samples file keeps {@link DEFAULT_MAX_PATTERNS} patterns and counts the rest under
 * `{other}`. The same here: the busiest patterns, by the locks their series say, are reported; the
 * others are read as `{other}`, counted, never advised on, and said.
 */

/** Labels learned from at most this many, the busiest: learning costs about 2.6 KB a name (40,000 labels: 105 MB). */
const MAX_LEARNED_LABELS = 10 * DEFAULT_MAX_PATTERNS;

/** The locks each label's series say: hold counts (classic `+Inf` buckets, native counts) or outcomes, whichever are more. */
export function locksByLabel(series: { holds: readonly CheckedSeries[]; native: readonly CheckedSeries[]; outcomes: readonly CheckedSeries[] }): Map<string, number> {
  const holds = new Map<string, number>();
  const outcomes = new Map<string, number>();
  const add = (into: Map<string, number>, s: CheckedSeries, n: number) => {
    if (s.pattern !== undefined) into.set(s.pattern, (into.get(s.pattern) ?? 0) + n);
  };
  for (const s of series.holds) for (let i = 1; i < s.values.length; i += 2) add(holds, s, s.values[i]!);
  for (const s of series.native) for (const [, h] of s.histograms) add(holds, s, Number(h.count));
  for (const s of series.outcomes) for (let i = 1; i < s.values.length; i += 2) add(outcomes, s, s.values[i]!);
  for (const [recorded, n] of outcomes) holds.set(recorded, Math.max(holds.get(recorded) ?? 0, n));
  return holds;
}

/**
 * Each label (as recorded) → the pattern it is reported under, for the labels whose pattern `accept`s;
 * past the budget, `{other}`. Labels exported before their position was learned are read as the learned
 * pattern (`learnNames`). `locks` are each label's locks (see {@link locksByLabel}); a label with none counts 0.
 */
export function readAsPatterns(
  labels: ReadonlySet<string>,
  locks: ReadonlyMap<string, number>,
  aliases: readonly RecordedAlias[],
  accept: (pattern: string) => boolean,
): { readAs: Map<string, string>; overBudget: SourceLeftOut['overBudget'] } {
  const busiestFirst = (a: [string, number], b: [string, number]) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  const ranked = [...labels].map((l): [string, number] => [l, locks.get(l) ?? 0]).sort(busiestFirst);
  const learned = ranked.slice(0, MAX_LEARNED_LABELS).map(([l]) => l);
  const { nameOf } = learnNames(learned, aliases);
  const readAs = new Map<string, string>();
  const patternLocks = new Map<string, number>();
  for (const [recorded, n] of ranked) {
    // Past the labels learned from, a label is read as recorded.
    const pattern = nameOf.get(recorded) ?? recorded;
    if (!accept(pattern)) continue;
    readAs.set(recorded, pattern);
    if (pattern !== OVERFLOW_PATTERN) patternLocks.set(pattern, (patternLocks.get(pattern) ?? 0) + n);
  }
  if (patternLocks.size <= DEFAULT_MAX_PATTERNS) return { readAs, overBudget: undefined };
  const kept = new Set([...patternLocks].sort(busiestFirst).slice(0, DEFAULT_MAX_PATTERNS).map(([p]) => p));
  for (const [recorded, pattern] of readAs) if (!kept.has(pattern)) readAs.set(recorded, OVERFLOW_PATTERN);
  return { readAs, overBudget: { patterns: patternLocks.size, kept: kept.size } };
}
