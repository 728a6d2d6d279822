import type { Analysis } from '../analyze/analyze.js';
import { decideEntry, type Decision } from '../analyze/decision.js';
import type { PatternAnalysis } from '../analyze/summarize.js';
import { leaseOf, movedRenewalMs } from '../policy/apply.js';
import { decisionOptions, type CheckOptions } from '../policy/check.js';
import type { TtlPolicy } from '../policy/policy.js';
import { literalText, type LiteralEdit } from './edit.js';
import type { CodeScan, SkippedFile } from './scan.js';
import type { CodeSite, LeftAloneReason, TtlValue } from './types.js';

/**
 * `check --code` and `apply --code`: each call site's TTL judged by the one
 * decision `check` and `apply` take for a policy entry (`decideEntry`, with the
 * same options), as if the literal were the entry. Where the decision writes and
 * the literal may be edited, `apply --code` edits it; where it may not (a
 * computed value, a constant shared by other patterns), the site is a warning
 * that says why: `check --code` fails only on what `apply --code` changes.
 */

/** One call site, judged. */
export interface CodeRow {
  site: CodeSite;
  /** The data's pattern for the site (its own when the data has none; see `looseMatch`). */
  pattern: string | undefined;
  analysis: PatternAnalysis | undefined;
  /** The decision for the site's TTL; `undefined` where there is none to take (see `leftAlone`, `noData`). */
  decision: Decision | undefined;
  /** The literals `apply --code` edits for this site. */
  edits: CodeEdit[];
  /** Why `apply --code` leaves this site (or its move) alone. */
  leftAlone: LeftAloneReason | undefined;
  /** No data for the site's pattern in the window. */
  noData: boolean;
  /** `fail`: `check --code` fails on it; `warn`: a human should look; `info`: nothing to do. */
  level: 'fail' | 'warn' | 'info';
}

/** A literal `apply --code` rewrites. */
export interface CodeEdit extends LiteralEdit {
  value: TtlValue;
  fromMs: number;
  toMs: number;
}

export interface CodeCheckResult {
  rows: CodeRow[];
  /** Files the scan could not read, each with why (see `scanCode`): listed, never passed in silence. */
  skipped: SkippedFile[];
  /** 1 when a row fails. */
  exitCode: 0 | 1;
}

/** Judges each call site against the data (and the policy file, which wins where it has an entry). */
export function checkCode({ sites, skipped }: CodeScan, analysis: Analysis, policy: TtlPolicy | undefined, options: CheckOptions = {}): CodeCheckResult {
  const o = decisionOptions(options);
  const byPattern = new Map(analysis.patterns.map((p) => [p.pattern, p]));
  const dataPattern = (site: CodeSite) => (site.pattern === undefined ? undefined : (byPattern.get(site.pattern) ?? looseMatch(site.pattern, analysis.patterns))?.pattern ?? site.pattern);
  const shared = sharedLiterals(sites, dataPattern);
  const rows = sites.map((site): CodeRow => {
    const row: CodeRow = { site, pattern: site.pattern, analysis: undefined, decision: undefined, edits: [], leftAlone: undefined, noData: false, level: 'info' };
    if (site.pattern === undefined) return { ...row, leftAlone: { kind: 'key-not-mapped', text: site.keyText }, level: 'warn' };
    const p = byPattern.get(site.pattern) ?? looseMatch(site.pattern, analysis.patterns);
    row.pattern = p?.pattern ?? site.pattern;
    const entry = policy?.entryForPattern(row.pattern);
    if (entry) return { ...row, analysis: p, leftAlone: { kind: 'overridden', entryPattern: entry.pattern } };
    if (!site.ttl) return { ...row, analysis: p, leftAlone: { kind: 'library-default' } };
    if (!p) return { ...row, noData: true };
    const ttl = site.ttl;
    const why = ttl.why ?? sharedReason(shared, ttl);
    if (ttl.valueMs === undefined) return { ...row, analysis: p, leftAlone: why, level: 'warn' };
    const { decisions } = decideEntry([p], { ttlMs: ttl.valueMs, source: 'policy' }, analysis.policy, o);
    const d = decisions[0]!;
    if (d.apply.kind !== 'write') return { ...row, analysis: p, decision: d, level: d.level };
    // apply --code cannot make the move: never a failure (check fails only on what apply changes), a look that names why.
    if (why || !ttl.literal) return { ...row, analysis: p, decision: d, leftAlone: why, level: 'warn' };
    const toMs = d.apply.toMs;
    const edits: CodeEdit[] = [edit(ttl, ttl.valueMs, toMs)];
    for (const r of site.renewals) {
      if (r.valueMs === undefined || !r.literal || r.why || sharedReason(shared, r)) continue;
      const renewTo = movedRenewalMs(r.role === 'threshold' ? 'threshold' : 'interval', r.valueMs!, ttl.valueMs, toMs, leaseOf(d)?.recommended.thresholdMs ?? 0);
      if (renewTo !== r.valueMs) edits.push(edit(r, r.valueMs, renewTo));
    }
    return { ...row, analysis: p, decision: d, edits, level: d.level };
  });
  return { rows, skipped, exitCode: rows.some((r) => r.level === 'fail') ? 1 : 0 };
}

/**
 * The data's pattern for a key read from code whose id's form the code does not show
 * (`cart:lock:${cartId}` reads as `{id}`; the data says `{uuid}`): the one pattern that
 * differs only in the kind of id, if exactly one does.
 */
function looseMatch(pattern: string, patterns: readonly PatternAnalysis[]): PatternAnalysis | undefined {
  const loose = (text: string) => text.replace(/\{(?:id|uuid|hex)\}/g, '{id}');
  const wanted = loose(pattern);
  const found = patterns.filter((p) => loose(p.pattern) === wanted);
  return found.length === 1 ? found[0] : undefined;
}

function edit(value: TtlValue, fromMs: number, toMs: number): CodeEdit {
  return { value, fromMs, toMs, literal: value.literal!, text: literalText(value.literal!.text, toMs) };
}

const literalKey = (v: TtlValue) => (v.literal ? `${v.literal.path}:${v.literal.start}` : undefined);

/** The patterns of the call sites each literal serves (a key not mapped counts as one more pattern). */
function sharedLiterals(sites: readonly CodeSite[], patternOf: (site: CodeSite) => string | undefined): Map<string, Set<string>> {
  const patterns = new Map<string, Set<string>>();
  for (const site of sites) {
    for (const v of [site.ttl, ...site.renewals]) {
      const key = v && literalKey(v);
      if (key === undefined) continue;
      if (!patterns.has(key)) patterns.set(key, new Set());
      patterns.get(key)!.add(patternOf(site) ?? `(not mapped: ${site.at.file}:${site.at.line})`);
    }
  }
  return patterns;
}

function sharedReason(shared: Map<string, Set<string>>, v: TtlValue): LeftAloneReason | undefined {
  const key = literalKey(v);
  const patterns = key === undefined ? undefined : shared.get(key);
  return patterns && patterns.size > 1 ? { kind: 'shared', patterns: [...patterns].sort() } : undefined;
}

/** The edits `apply --code` makes, one per literal (sites of one pattern may share one), in file order. */
export function codeEdits(result: CodeCheckResult): CodeEdit[] {
  const seen = new Map<string, CodeEdit>();
  for (const row of result.rows) for (const e of row.edits) if (!seen.has(literalKey(e.value)!)) seen.set(literalKey(e.value)!, e);
  return [...seen.values()].sort((a, b) => a.literal.path.localeCompare(b.literal.path) || a.literal.start - b.literal.start);
}
