import type { Analysis } from '../analyze/analyze.js';
import type { PatternAnalysis } from '../analyze/summarize.js';
import { compareVerdicts, verdictFor, type Verdict } from '../analyze/verdict.js';
import type { PolicyEntry, TtlPolicy } from './policy.js';

/** Options of {@link checkPolicy}. */
export interface CheckOptions {
  /** Also fail on TTLs more than 3× the recommendation. @default false */
  strict?: boolean;
  /** Fail when a configured pattern has too few samples. @default false */
  failOnInsufficientData?: boolean;
  /** Hide (and do not fail on) moves smaller than this percentage. @default 0 */
  minChangePercent?: number;
}

/** One configured pattern compared with its data. */
export interface CheckRow {
  /** The policy entry's pattern. */
  pattern: string;
  /** The pattern in the data (differs when the entry is a template). */
  dataPattern: string;
  entry: PolicyEntry;
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
  /** Expirations the policy's TTL does not cover (or whose hold time is unknown): these fail. */
  expirations: number;
  /** Whether this row makes the check fail. */
  failing: boolean;
  analysis: PatternAnalysis;
}

export interface CheckResult {
  /** Configured patterns that need attention, worst first. */
  rows: CheckRow[];
  /** Configured patterns that are fine (or whose move is below `minChangePercent`). */
  fine: CheckRow[];
  /** Patterns in the data with no policy entry (they run with the default TTL). */
  missingFromPolicy: PatternAnalysis[];
  /** Policy entries with no data in the window. */
  noData: string[];
  defaultTtlMs: number;
  /** 0 nothing to do, 1 a TTL must change or a lock expired. */
  exitCode: 0 | 1;
}

/**
 * Compares each configured TTL with the recommendation from the data. Fails
 * (exit 1) when a lock expired, or a TTL must rise; with `strict` also when one
 * is far too long; with `failOnInsufficientData` when a configured pattern lacks data.
 * Pinned entries are reported but only fail on expirations.
 */
export function checkPolicy(analysis: Analysis, policy: TtlPolicy, options: CheckOptions = {}): CheckResult {
  const minChange = options.minChangePercent ?? 0;
  const rows: CheckRow[] = [];
  const fine: CheckRow[] = [];
  const missingFromPolicy: PatternAnalysis[] = [];
  const seen = new Set<string>();

  for (const p of analysis.patterns) {
    const found = policy.entryForPattern(p.pattern);
    if (!found) {
      missingFromPolicy.push(p);
      continue;
    }
    seen.add(found.pattern);
    const configured = found.entry.ttlMs;
    const { beyond, resolved } = judgeExpirations(p, configured);
    const verdict = verdictFor(configured, { expired: beyond, holdCount: p.holdCount, recommendedTtlMs: p.recommendedTtlMs, neededMs: p.neededMs, floorMs: analysis.policy.floorMs });
    const changePercent = ((p.recommendedTtlMs - configured) / configured) * 100;
    const bigEnough = Math.abs(changePercent) >= minChange;
    const failing =
      verdict === 'expired' ||
      (!found.entry.pinned &&
        ((verdict === 'too-short' && bigEnough) ||
          (verdict === 'too-long' && bigEnough && options.strict === true) ||
          (verdict === 'insufficient-data' && options.failOnInsufficientData === true)));
    const row: CheckRow = {
      pattern: found.pattern,
      dataPattern: p.pattern,
      entry: found.entry,
      configuredTtlMs: configured,
      recommendedTtlMs: p.recommendedTtlMs,
      changePercent,
      verdict,
      inUseTtlMs: p.ttl.currentMs,
      resolvedExpirations: resolved,
      expirations: beyond,
      failing,
      analysis: p,
    };
    const attention = verdict === 'expired' || verdict === 'insufficient-data' || resolved > 0 || p.contended || (verdict !== 'ok' && bigEnough);
    (attention ? rows : fine).push(row);
  }
  // Rows never hold `ok` (it is not worth attention), so the report's order of verdicts serves here too.
  rows.sort((a, b) => compareVerdicts(a.verdict, b.verdict) || a.pattern.localeCompare(b.pattern));
  const noData = Object.keys(policy.document.locks).filter((pattern) => !seen.has(pattern));
  return {
    rows,
    fine,
    missingFromPolicy,
    noData,
    defaultTtlMs: policy.defaultTtlMs,
    exitCode: rows.some((r) => r.failing) || missingFromPolicy.some((p) => p.outcomes.expired > 0) ? 1 : 0,
  };
}

/**
 * An expiration recorded under an older, shorter TTL is resolved when the
 * policy's TTL covers its hold time: it no longer fails, so the check turns
 * green once the fix is merged instead of staying red for the whole window.
 * Expirations without a raw row (past a recorder's budget, or older files)
 * cannot be judged and still count.
 */
export function judgeExpirations(p: PatternAnalysis, policyTtlMs: number): { beyond: number; resolved: number } {
  const expired = p.outcomes.expired;
  if (expired === 0) return { beyond: 0, resolved: 0 };
  const holds = p.expiredHoldsMs ?? [];
  const known = Math.min(holds.length, expired);
  const covered = holds.slice(0, known).filter((h) => h < policyTtlMs).length;
  return { beyond: expired - covered, resolved: covered };
}
