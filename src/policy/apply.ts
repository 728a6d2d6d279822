import type { Analysis } from '../analyze/analyze.js';
import { MIN_SAMPLES_FOR_P99 } from '../analyze/confidence.js';
import type { PolicyDocument, TtlPolicy } from './policy.js';

/** Options of {@link applyRecommendations}. */
export interface ApplyOptions {
  /** Leave TTLs alone whose recommendation differs by less than this percentage. @default 10 */
  minChangePercent?: number;
}

export interface PolicyChange {
  pattern: string;
  fromMs: number | undefined;
  toMs: number;
}

export const DEFAULT_APPLY_MIN_CHANGE_PERCENT = 10;

/**
 * The policy with the data's recommended TTLs written in: entries keep their
 * order, pinned entries are untouched, patterns with too few samples are left
 * alone, new patterns are appended in name order. Applying the result again
 * to the same data changes nothing.
 */
export function applyRecommendations(
  analysis: Analysis,
  policy: TtlPolicy,
  options: ApplyOptions = {},
): { document: PolicyDocument; changes: PolicyChange[] } {
  const minChange = options.minChangePercent ?? DEFAULT_APPLY_MIN_CHANGE_PERCENT;
  const locks = { ...policy.document.locks };
  const changes: PolicyChange[] = [];
  const added: [string, number][] = [];
  for (const p of analysis.patterns) {
    if (p.holdCount < MIN_SAMPLES_FOR_P99) continue;
    const found = policy.entryForPattern(p.pattern);
    if (!found) {
      added.push([p.pattern, p.recommendedTtlMs]);
      continue;
    }
    const entry = locks[found.pattern]!;
    if (entry.pinned) continue;
    const change = (Math.abs(p.recommendedTtlMs - entry.ttlMs) / entry.ttlMs) * 100;
    if (p.recommendedTtlMs === entry.ttlMs || change < minChange) continue;
    changes.push({ pattern: found.pattern, fromMs: entry.ttlMs, toMs: p.recommendedTtlMs });
    locks[found.pattern] = { ...entry, ttlMs: p.recommendedTtlMs };
  }
  for (const [pattern, ttlMs] of added.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    locks[pattern] = { ttlMs };
    changes.push({ pattern, fromMs: undefined, toMs: ttlMs });
  }
  return { document: { ...policy.document, locks }, changes };
}
