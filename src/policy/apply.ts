import type { Analysis } from '../analyze/analyze.js';
import { MIN_SAMPLES_FOR_P99 } from '../analyze/confidence.js';
import type { PatternAnalysis } from '../analyze/summarize.js';
import { formatMs, formatSpan } from '../units.js';
import type { PolicyDocument, TtlPolicy } from './policy.js';

/** Options of {@link applyRecommendations}. */
export interface ApplyOptions {
  /** Leave TTLs alone whose recommendation differs by less than this percentage. @default 10 */
  minChangePercent?: number;
  /** Move no TTL on a pattern whose data spans less than this (ms): daily peaks may be missing. @default 24 h */
  minWindowMs?: number;
}

export interface PolicyChange {
  pattern: string;
  fromMs: number | undefined;
  toMs: number;
}

/** A recommendation `apply` did not write, and why. */
export interface SkippedChange {
  pattern: string;
  /** The TTL in the policy file; `undefined` for a pattern not in it. */
  fromMs: number | undefined;
  toMs: number;
  /** `shared-entry`: the entry is shared (a template) with a pattern that needs a longer TTL. */
  reason: 'pinned' | 'too-few-samples' | 'short-window' | 'under-min-change' | 'shared-entry';
  /** The reason in words, with its numbers. */
  detail: string;
}

export const DEFAULT_APPLY_MIN_CHANGE_PERCENT = 10;
export const DEFAULT_APPLY_MIN_WINDOW_MS = 24 * 3_600_000;

/**
 * The policy with the data's recommended TTLs written in: entries keep their
 * order, pinned entries are untouched, new patterns are appended in name
 * order. A TTL moves only on evidence: at least 299 hold times (below that no
 * p99 claim holds at 95 %) spanning at least `minWindowMs`, and by at least
 * `minChangePercent`; every recommendation left out is returned with its
 * reason. Data patterns that share an entry (a template) give it the TTL the
 * most demanding of them needs, judged on that pattern's evidence. Changes
 * come in the file's order. Applying the result again to the same data
 * changes nothing.
 */
export function applyRecommendations(
  analysis: Analysis,
  policy: TtlPolicy,
  options: ApplyOptions = {},
): { document: PolicyDocument; changes: PolicyChange[]; skipped: SkippedChange[] } {
  const minChange = options.minChangePercent ?? DEFAULT_APPLY_MIN_CHANGE_PERCENT;
  const minWindowMs = options.minWindowMs ?? DEFAULT_APPLY_MIN_WINDOW_MS;
  const locks = { ...policy.document.locks };
  const changed = new Map<string, PolicyChange>();
  const skipped: SkippedChange[] = [];
  const added: [string, number][] = [];
  for (const [key, group] of byEntry(analysis, policy)) {
    // An entry several data patterns resolve to (a template) has one TTL: the one the most demanding needs.
    const p = group.reduce((a, b) => (b.recommendedTtlMs > a.recommendedTtlMs ? b : a));
    const found = policy.entryForPattern(p.pattern);
    const entry = found ? locks[found.pattern]! : undefined;
    const fromMs = entry?.ttlMs;
    const toMs = p.recommendedTtlMs;
    const skip = (reason: SkippedChange['reason'], detail: string, recommendedMs = toMs): void => void skipped.push({ pattern: key, fromMs, toMs: recommendedMs, reason, detail });
    const pinned = `pinned${entry?.reason ? ` (${entry.reason})` : ''}`;
    const decide = (): void => {
      if (fromMs === toMs) return;
      if (entry?.pinned) return skip('pinned', pinned);
      if (p.holdCount < MIN_SAMPLES_FOR_P99) return skip('too-few-samples', `too few samples: ${p.holdCount} hold times, ${MIN_SAMPLES_FOR_P99} needed`);
      const spanMs = p.lastMs - p.firstMs;
      if (spanMs < minWindowMs) return skip('short-window', `short window: ${formatSpan(spanMs)} of data, --min-window is ${formatSpan(minWindowMs)}`);
      if (!found || fromMs === undefined) return void added.push([p.pattern, toMs]);
      const change = (Math.abs(toMs - fromMs) / fromMs) * 100;
      if (change < minChange) return skip('under-min-change', `under --min-change: ${change.toFixed(1)} % < ${minChange} %`);
      changed.set(found.pattern, { pattern: found.pattern, fromMs, toMs });
      locks[found.pattern] = { ...entry!, ttlMs: toMs };
    };
    decide();
    // The others' own recommendations are left out, and said so, unless the entry ends at theirs or kept it.
    const endsWithMs = found ? locks[found.pattern]!.ttlMs : undefined;
    for (const other of group) {
      if (other === p || other.recommendedTtlMs === endsWithMs || other.recommendedTtlMs === fromMs) continue;
      if (entry?.pinned) skip('pinned', pinned, other.recommendedTtlMs);
      else skip('shared-entry', `${other.pattern} shares the entry with ${p.pattern}, which needs ${formatMs(toMs)}`, other.recommendedTtlMs);
    }
  }
  // In the file's order, then the new patterns in name order.
  const changes = Object.keys(policy.document.locks).flatMap((pattern) => changed.get(pattern) ?? []);
  for (const [pattern, ttlMs] of added.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    locks[pattern] = { ttlMs };
    changes.push({ pattern, fromMs: undefined, toMs: ttlMs });
  }
  return { document: { ...policy.document, locks }, changes, skipped };
}

/** The data's patterns by the policy entry they resolve to (their own name when none), in the analysis' order. */
function byEntry(analysis: Analysis, policy: TtlPolicy): Map<string, PatternAnalysis[]> {
  const groups = new Map<string, PatternAnalysis[]>();
  for (const p of analysis.patterns) {
    const key = policy.entryForPattern(p.pattern)?.pattern ?? p.pattern;
    const group = groups.get(key);
    if (group) group.push(p);
    else groups.set(key, [p]);
  }
  return groups;
}
