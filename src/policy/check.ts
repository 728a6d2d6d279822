import type { Analysis } from '../analyze/analyze.js';
import { DECISION_DEFAULTS, decideEntry, type Decision, type DecisionOptions, type JudgedTtl } from '../analyze/decision.js';
import type { UnconfirmedPattern } from '../analyze/hints.js';
import type { PatternAnalysis } from '../analyze/summarize.js';
import { compareVerdicts, type Verdict } from '../analyze/verdict.js';
import { closestPattern } from './closest.js';
import type { PolicyEntry, TtlPolicy } from './policy.js';

/** Options of {@link checkPolicy}: the decision's, the same `apply` takes (see `DECISION_DEFAULTS`). */
export interface CheckOptions {
  /** Also fail on TTLs more than 3× the recommendation (that `apply` would lower). @default false */
  strict?: boolean | undefined;
  /** Fail when a configured pattern has too few samples. @default false */
  failOnInsufficientData?: boolean | undefined;
  /** A move smaller than this percentage neither fails nor asks for attention, unless locks expired that it would save. @default 10 (as `apply`) */
  minChangePercent?: number | undefined;
  /** TTLs move only on data spanning at least this (ms), as in `apply`. @default 24 h */
  minWindowMs?: number | undefined;
}

/** One pattern of the data compared with the TTL the policy gives it. */
export interface CheckRow {
  /** The policy entry's pattern; the data's pattern when no entry matches. */
  pattern: string;
  /** The pattern in the data (differs when the entry is a template). */
  dataPattern: string;
  /** The entry; `undefined` when no entry matches (the pattern runs with the default TTL). */
  entry: PolicyEntry | undefined;
  configuredTtlMs: number;
  recommendedTtlMs: number;
  /** (recommended − configured) / configured, in percent. */
  changePercent: number;
  /** The verdict for the configured TTL. */
  verdict: Verdict;
  /** The TTL the data was recorded with (the most common); when it differs from the policy's, a deploy is pending. */
  inUseTtlMs: number;
  /** Expirations whose hold the policy's TTL covers: they happened under an older, shorter TTL and no longer fail. */
  resolvedExpirations: number;
  /** Expirations the policy's TTL is not known to cover (longer, or their end unseen). */
  expirations: number;
  /** Whether this row makes the check fail (`decision.level === 'fail'`). */
  failing: boolean;
  /** The one decision report, check and apply share: level, what apply does, the findings. */
  decision: Decision;
  analysis: PatternAnalysis;
}

/** A policy entry no pattern in the data matches, with the closest pattern in the data (a misspelling?). */
export interface UnmatchedEntry {
  pattern: string;
  suggestion: string | undefined;
}

export interface CheckResult {
  /** Configured patterns that fail or want a human's look, worst first. */
  rows: CheckRow[];
  /** Configured patterns with nothing to do. */
  fine: CheckRow[];
  /** Patterns in the data with no policy entry (they run with the default TTL), decided like the rest. */
  missingFromPolicy: CheckRow[];
  /** Policy entries with no data in the window. */
  noData: UnmatchedEntry[];
  /**
   * Patterns `watch` saw only expire, never released: `check` cannot know their true holds, so
   * they warn (never fail), with the entry they resolve to when the policy has one.
   */
  unconfirmed: { pattern: string; entryPattern: string | undefined; analysis: UnconfirmedPattern }[];
  defaultTtlMs: number;
  /** 0: nothing `apply` would change fails; 1: a row fails (see each row's decision). */
  exitCode: 0 | 1;
}

/** The decision options from check's or apply's, with the defaults filled in. */
export function decisionOptions(options: CheckOptions = {}): DecisionOptions {
  return {
    minChangePercent: options.minChangePercent ?? DECISION_DEFAULTS.minChangePercent,
    minWindowMs: options.minWindowMs ?? DECISION_DEFAULTS.minWindowMs,
    strict: options.strict ?? DECISION_DEFAULTS.strict,
    failOnInsufficientData: options.failOnInsufficientData ?? DECISION_DEFAULTS.failOnInsufficientData,
  };
}

/** The TTL a policy gives a data pattern, and the entry it comes from. */
export function judgedTtl(policy: TtlPolicy, pattern: string): { entryPattern: string | undefined; judged: JudgedTtl } {
  const found = policy.entryForPattern(pattern);
  if (!found) return { entryPattern: undefined, judged: { ttlMs: policy.defaultTtlMs, source: 'default' } };
  const e = found.entry;
  return { entryPattern: found.pattern, judged: { ttlMs: e.ttlMs, source: 'policy', pinned: e.pinned, reason: e.reason, coverMs: e.coverMs } };
}

/** The data's patterns by the policy entry they resolve to (their own name when none), in the analysis' order. */
export function byEntry(analysis: Analysis, policy: TtlPolicy): Map<string, PatternAnalysis[]> {
  const groups = new Map<string, PatternAnalysis[]>();
  for (const p of analysis.patterns) {
    const key = policy.entryForPattern(p.pattern)?.pattern ?? `\u0000${p.pattern}`;
    const group = groups.get(key);
    if (group) group.push(p);
    else groups.set(key, [p]);
  }
  return groups;
}

/**
 * Compares each pattern's TTL in the policy with its data, through the decision
 * `apply` takes: a row fails only where `apply` (with the same options) would
 * change the TTL, or where only a human can decide (a pinned entry, too little
 * data) and locks expired — and says which. Everything else is a warning or fine.
 */
export function checkPolicy(analysis: Analysis, policy: TtlPolicy, options: CheckOptions = {}): CheckResult {
  const o = decisionOptions(options);
  const rows: CheckRow[] = [];
  const fine: CheckRow[] = [];
  const missingFromPolicy: CheckRow[] = [];
  const seen = new Set<string>();

  for (const members of byEntry(analysis, policy).values()) {
    const { entryPattern, judged } = judgedTtl(policy, members[0]!.pattern);
    if (entryPattern !== undefined) seen.add(entryPattern);
    const { decisions } = decideEntry(members, judged, analysis.policy, o);
    members.forEach((p, i) => {
      const d = decisions[i]!;
      const row: CheckRow = {
        pattern: entryPattern ?? p.pattern,
        dataPattern: p.pattern,
        entry: entryPattern === undefined ? undefined : policy.document.locks[entryPattern],
        configuredTtlMs: judged.ttlMs,
        recommendedTtlMs: d.recommendedTtlMs,
        changePercent: ((d.recommendedTtlMs - judged.ttlMs) / judged.ttlMs) * 100,
        verdict: d.verdict,
        inUseTtlMs: p.ttl.currentMs,
        resolvedExpirations: d.expirations.covered,
        expirations: d.expirations.total - d.expirations.covered,
        failing: d.level === 'fail',
        decision: d,
        analysis: p,
      };
      if (entryPattern === undefined) missingFromPolicy.push(row);
      else (d.level === 'info' ? fine : rows).push(row);
    });
  }
  const worstFirst = (a: CheckRow, b: CheckRow) => Number(b.failing) - Number(a.failing) || compareVerdicts(a.verdict, b.verdict) || a.pattern.localeCompare(b.pattern);
  rows.sort(worstFirst);
  missingFromPolicy.sort(worstFirst);
  const dataPatterns = [...analysis.patterns, ...analysis.unconfirmed].map((p) => p.pattern);
  const unmatched = new Set(missingFromPolicy.map((r) => r.dataPattern));
  const unconfirmed = analysis.unconfirmed.map((u) => {
    const entryPattern = policy.entryForPattern(u.pattern)?.pattern;
    if (entryPattern !== undefined) seen.add(entryPattern);
    return { pattern: u.pattern, entryPattern, analysis: u };
  });
  const noData = Object.keys(policy.document.locks)
    .filter((pattern) => !seen.has(pattern))
    // A pattern the policy does not cover is the likelier meant one; any pattern in the data will do.
    .map((pattern) => ({ pattern, suggestion: closestPattern(pattern, [...unmatched]) ?? closestPattern(pattern, dataPatterns) }));
  return {
    rows,
    fine,
    missingFromPolicy,
    noData,
    unconfirmed,
    defaultTtlMs: policy.defaultTtlMs,
    exitCode: rows.some((r) => r.failing) || missingFromPolicy.some((r) => r.failing) ? 1 : 0,
  };
}
