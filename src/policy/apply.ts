import type { Analysis } from '../analyze/analyze.js';
import { MIN_SAMPLES_FOR_P99 } from '../analyze/confidence.js';
import { formatSpan } from '../units.js';
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
  reason: 'pinned' | 'too-few-samples' | 'short-window' | 'under-min-change';
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
 * reason. Changes come in the file's order. Applying the result again to the
 * same data changes nothing.
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
  for (const p of analysis.patterns) {
    const found = policy.entryForPattern(p.pattern);
    const entry = found ? locks[found.pattern]! : undefined;
    const fromMs = entry?.ttlMs;
    const toMs = p.recommendedTtlMs;
    if (fromMs === toMs) continue;
    const skip = (reason: SkippedChange['reason'], detail: string) => skipped.push({ pattern: found?.pattern ?? p.pattern, fromMs, toMs, reason, detail });
    if (entry?.pinned) {
      skip('pinned', `pinned${entry.reason ? ` (${entry.reason})` : ''}`);
      continue;
    }
    if (p.holdCount < MIN_SAMPLES_FOR_P99) {
      skip('too-few-samples', `too few samples: ${p.holdCount} hold times, ${MIN_SAMPLES_FOR_P99} needed`);
      continue;
    }
    const spanMs = p.lastMs - p.firstMs;
    if (spanMs < minWindowMs) {
      skip('short-window', `short window: ${formatSpan(spanMs)} of data, --min-window is ${formatSpan(minWindowMs)}`);
      continue;
    }
    if (!found || fromMs === undefined) {
      added.push([p.pattern, toMs]);
      continue;
    }
    const change = (Math.abs(toMs - fromMs) / fromMs) * 100;
    if (change < minChange) {
      skip('under-min-change', `under --min-change: ${change.toFixed(1)} % < ${minChange} %`);
      continue;
    }
    changed.set(found.pattern, { pattern: found.pattern, fromMs, toMs });
    locks[found.pattern] = { ...entry!, ttlMs: toMs };
  }
  // In the file's order, then the new patterns in name order.
  const changes = Object.keys(policy.document.locks).flatMap((pattern) => changed.get(pattern) ?? []);
  for (const [pattern, ttlMs] of added.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    locks[pattern] = { ttlMs };
    changes.push({ pattern, fromMs: undefined, toMs: ttlMs });
  }
  return { document: { ...policy.document, locks }, changes, skipped };
}
