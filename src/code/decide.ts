import type { Analysis } from '../analyze/analyze.js';
import { decideEntry, type Decision, type DecisionOptions } from '../analyze/decision.js';
import type { PatternAnalysis } from '../analyze/summarize.js';
import { leaseOf, movedRenewalMs } from '../policy/apply.js';
import { checkPolicy, decisionOptions, judgedTtl, type CheckOptions, type CheckRow } from '../policy/check.js';
import { closestPattern } from '../policy/closest.js';
import type { TtlPolicy } from '../policy/policy.js';
import { literalText, literalValue, type LiteralEdit } from './edit.js';
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
  /** The data's pattern for the site (the most demanding of them, where it governs several); its own when the data has none. */
  pattern: string | undefined;
  /** Every data pattern the site governs (an enum's values, a placeholder over literal segments). */
  patterns: string[];
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

/**
 * A data pattern no call site governs: in the samples, not found in the code. Judged as `check` judges
 * it (the policy's entry or default TTL; with no policy, the TTL in use), so that `check --code` is never
 * less strict than `check` on the same data.
 */
export interface UnmatchedPattern {
  pattern: string;
  analysis: PatternAnalysis;
  decision: Decision;
  /** The code's pattern most like it, a hint at why none matched (a key built otherwise, a wrapper not followed). */
  closest: string | undefined;
}

export interface CodeCheckResult {
  rows: CodeRow[];
  /**
   * Data patterns `check` fails on against the policy file where no row here fails already (a site's TTL
   * in the code passes, the policy's default does not): `check --code` is never less strict than `check`.
   */
  failsCheck: CheckRow[];
  /** Data patterns no site governs, each judged as `check` would (see {@link UnmatchedPattern}). */
  unmatched: UnmatchedPattern[];
  /** Files the scan could not read, each with why (see `scanCode`): listed, never passed in silence. */
  skipped: SkippedFile[];
  /** 1 when a row fails, or a data pattern no site governs fails as it would in `check`. */
  exitCode: 0 | 1;
}

/** Judges each call site against the data (and the policy file, which wins where it has an entry). */
export function checkCode({ sites, skipped }: CodeScan, analysis: Analysis, policy: TtlPolicy | undefined, options: CheckOptions = {}): CodeCheckResult {
  const o = decisionOptions(options);
  // What `check` says of the same data with the same policy: a pattern it fails on fails here too.
  const checked = policy ? checkPolicy(analysis, policy, options) : undefined;
  const checkRows = new Map([...(checked?.rows ?? []), ...(checked?.fine ?? []), ...(checked?.missingFromPolicy ?? [])].map((r) => [r.analysis, r]));
  // A data pattern a site names exactly is that site's: another's placeholder does not take it too.
  const exact = new Set(sites.flatMap((site) => (site.inner ? [] : governedPatterns(site.patterns, analysis.patterns, 'exact'))));
  const governed = new Map(sites.map((site) => [site, site.inner ? [] : governedPatterns(site.patterns, analysis.patterns.filter((p) => !exact.has(p) || governedPatterns(site.patterns, [p], 'exact').length > 0))]));
  const shared = sharedLiterals(sites, (site) => governed.get(site)![0]?.pattern ?? site.pattern);
  // A literal several sites share (a constant, a wrapper's own TTL) is one TTL for all their data patterns.
  const byLiteral = new Map<string, Set<PatternAnalysis>>();
  for (const site of sites) {
    const key = site.ttl && !site.inner ? literalKey(site.ttl) : undefined;
    if (key !== undefined) for (const p of governed.get(site)!) (byLiteral.get(key) ?? byLiteral.set(key, new Set()).get(key)!).add(p);
  }
  const rows = sites.map((site): CodeRow => {
    const literal = site.ttl ? literalKey(site.ttl) : undefined;
    const members = [...(literal !== undefined && byLiteral.has(literal) ? byLiteral.get(literal)! : governed.get(site)!)].sort((a, b) => b.recommendedTtlMs - a.recommendedTtlMs);
    const own = governed.get(site)!;
    const row: CodeRow = { site, pattern: own[0]?.pattern ?? site.pattern, patterns: members.map((m) => m.pattern), analysis: own[0], decision: undefined, edits: [], leftAlone: undefined, noData: false, level: 'info' };
    if (site.inner) return { ...row, leftAlone: { kind: 'wrapper-inner', ...site.inner } };
    if (site.pattern === undefined) return { ...row, leftAlone: { kind: 'key-not-mapped', text: site.keyText }, level: 'warn' };
    const entry = own.map((m) => policy?.entryForPattern(m.pattern)).find((e) => e !== undefined) ?? policy?.entryForPattern(site.pattern);
    if (entry) {
      // The policy's TTL is the lock's: its decision is check's, failing where check fails.
      const decided = own.map((m) => checkRows.get(m)).filter((r): r is CheckRow => r !== undefined);
      const worstRow = decided.find((r) => r.failing) ?? decided[0];
      return { ...row, leftAlone: { kind: 'overridden', entryPattern: entry.pattern }, ...(worstRow && { decision: worstRow.decision, analysis: worstRow.analysis, level: worstRow.decision.level === 'fail' ? 'fail' : 'info' }) };
    }
    if (!site.ttl) return { ...row, leftAlone: { kind: 'library-default' } };
    if (own.length === 0) return { ...row, noData: true };
    const ttl = site.ttl;
    const why = ttl.why ?? sharedReason(shared, ttl);
    // A TTL no literal says: judged as it runs (the TTL in use); a look where it should move — never a failure, as apply --code cannot move it.
    if (ttl.valueMs === undefined) {
      const settled = worst(own.map((m) => m.decision)) === 'info';
      return { ...row, decision: own[0]!.decision, leftAlone: settled ? undefined : why, level: settled ? 'info' : 'warn' };
    }
    // One TTL for every data pattern the site (and any site sharing its literal) governs, as one policy entry for several: the most demanding decides.
    const entryDecision = decideEntry(members, { ttlMs: ttl.valueMs, source: 'policy' }, analysis.policy, o);
    const d = entryDecision.decisions[entryDecision.neediest]!;
    const neediest = members[entryDecision.neediest]!;
    const judged = { ...row, ...(own.includes(neediest) && { pattern: neediest.pattern, analysis: neediest }), decision: d };
    const level = worst(entryDecision.decisions);
    if (entryDecision.apply.kind !== 'write') return { ...judged, level };
    // apply --code cannot make the move: never a failure (check fails only on what apply changes), a look that names why.
    if (why || !ttl.literal) return { ...judged, leftAlone: why, level: 'warn' };
    const toMs = entryDecision.apply.toMs;
    const edits: CodeEdit[] = [edit(ttl, ttl.valueMs, toMs)];
    for (const r of site.renewals) {
      if (r.valueMs === undefined || !r.literal || r.why || sharedReason(shared, r)) continue;
      const renewTo = movedRenewalMs(r.role === 'threshold' ? 'threshold' : 'interval', r.valueMs!, ttl.valueMs, toMs, leaseOf(d)?.recommended.thresholdMs ?? 0);
      if (renewTo !== r.valueMs) edits.push(edit(r, r.valueMs, renewTo));
    }
    return { ...judged, edits, level };
  });
  holdConflictingEdits(rows);
  const unmatched = unmatchedPatterns(analysis, new Set([...governed.values()].flat()), sites, policy, o);
  const failingHere = new Set([...rows.filter((r) => r.level === 'fail').flatMap((r) => r.patterns), ...unmatched.filter((u) => u.decision.level === 'fail').map((u) => u.pattern)]);
  const failsCheck = [...checkRows.values()].filter((r) => r.failing && !failingHere.has(r.dataPattern));
  const fails = failingHere.size > 0 || failsCheck.length > 0 || rows.some((r) => r.level === 'fail');
  return { rows, failsCheck, unmatched, skipped, exitCode: fails ? 1 : 0 };
}

/**
 * One literal two rows would write differently (a renewal constant two locks share, a TTL constant that is
 * another lock's renewal): neither edit is made; each row says why, a look and not a failure (apply would not change it).
 */
function holdConflictingEdits(rows: CodeRow[]): void {
  const texts = new Map<string, Set<string>>();
  for (const row of rows) for (const e of row.edits) (texts.get(literalKey(e.value)!) ?? texts.set(literalKey(e.value)!, new Set()).get(literalKey(e.value)!)!).add(e.text);
  const conflicting = new Map(rows.map((row) => [row, new Set(row.edits.filter((e) => texts.get(literalKey(e.value)!)!.size > 1).map((e) => literalKey(e.value)))]));
  for (const row of rows) {
    const mine = conflicting.get(row)!;
    if (mine.size === 0) continue;
    const others = rows.filter((r) => r !== row && r.edits.some((e) => mine.has(literalKey(e.value)))).map((r) => r.pattern ?? r.site.keyText);
    row.leftAlone = { kind: 'shared', patterns: [...new Set([row.pattern ?? row.site.keyText, ...others])].sort() };
    row.level = 'warn';
  }
  for (const [row, mine] of conflicting) if (mine.size > 0) row.edits = [];
}

function worst(decisions: readonly Decision[]): 'fail' | 'warn' | 'info' {
  return decisions.some((d) => d.level === 'fail') ? 'fail' : decisions.some((d) => d.level === 'warn') ? 'warn' : 'info';
}

/**
 * The data patterns a site's key patterns govern, as a reader would match them: the same pattern (an
 * id's form apart: `{id}`, `{uuid}`, `{hex}`), or — where the code's pattern has a literal of its own —
 * a placeholder from the code over a literal segment of the data (`${notificationType}` over `limitReached`).
 */
export function governedPatterns(codePatterns: readonly string[], data: readonly PatternAnalysis[], only?: 'exact'): PatternAnalysis[] {
  const loose = (text: string) => text.replace(/\{(?:id|uuid|hex)\}/g, '{id}');
  const out = new Set<PatternAnalysis>();
  for (const code of codePatterns) {
    const exact = data.filter((p) => loose(p.pattern) === loose(code));
    if (exact.length > 0 || only === 'exact') {
      exact.forEach((p) => out.add(p));
      continue;
    }
    // A pattern of placeholders only would cover every key of its shape: it matches only by form.
    if (!/\p{L}/u.test(code.replace(/\{(?:id|uuid|hex)\}/g, ''))) continue;
    const re = new RegExp(`^${code.split(/(\{(?:id|uuid|hex)\})/).map((part, i) => (i % 2 === 1 ? '[^:/|#]+' : escapeRegExp(part))).join('')}$`);
    for (const p of data) if (re.test(p.pattern)) out.add(p);
  }
  return [...out];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The data patterns no site governs, judged as `check` judges them (see {@link UnmatchedPattern}). */
function unmatchedPatterns(analysis: Analysis, governed: ReadonlySet<PatternAnalysis>, sites: readonly CodeSite[], policy: TtlPolicy | undefined, o: DecisionOptions): UnmatchedPattern[] {
  const codePatterns = [...new Set(sites.flatMap((s) => s.patterns))];
  return analysis.patterns
    .filter((p) => !governed.has(p))
    .map((p) => {
      const decision = policy ? decideEntry([p], judgedTtl(policy, p.pattern).judged, analysis.policy, o).decisions[0]! : decideEntry([p], { ttlMs: p.ttl.currentMs, source: 'in-use' }, analysis.policy, o).decisions[0]!;
      return { pattern: p.pattern, analysis: p, decision, closest: closestPattern(p.pattern, codePatterns) };
    })
    .sort((a, b) => Number(b.decision.level === 'fail') - Number(a.decision.level === 'fail') || a.pattern.localeCompare(b.pattern));
}

/**
 * The edit that makes a value `toMs`: the literal in its own unit (seconds rounded up: `EX` takes whole
 * seconds), or the option added where the call had none (a library's default).
 */
function edit(value: TtlValue, fromMs: number, toMs: number): CodeEdit {
  const units = value.msPerUnit > 1 ? Math.ceil(toMs / value.msPerUnit - 1e-9) : toMs;
  if (value.insert) return { value, fromMs, toMs: units * value.msPerUnit, literal: value.literal!, text: `${value.insert.before}${units}${value.insert.after}` };
  const text = literalText(value.literal!.text, units);
  // What the literal says now (a factor may round up to one decimal): never under what was asked.
  return { value, fromMs, toMs: literalValue(text) * value.msPerUnit, literal: value.literal!, text };
}

const literalKey = (v: TtlValue) => (v.literal ? `${v.literal.path}:${v.literal.start}` : undefined);

/** The patterns of the call sites each literal serves; a site whose key is not mapped adds one no decision can know the needs of. */
function sharedLiterals(sites: readonly CodeSite[], patternOf: (site: CodeSite) => string | undefined): Map<string, Set<string>> {
  const patterns = new Map<string, Set<string>>();
  for (const site of sites) {
    // A wrapper's inner call is its callers' TTL, not one more user of it.
    if (site.inner) continue;
    for (const v of [site.ttl, ...site.renewals]) {
      const key = v && literalKey(v);
      if (key === undefined) continue;
      if (!patterns.has(key)) patterns.set(key, new Set());
      patterns.get(key)!.add(patternOf(site) ?? `(not mapped: ${site.at.file}:${site.at.line})`);
    }
  }
  return patterns;
}

/** A literal a site whose key is not mapped shares too: moving it would move a lock whose needs are unknown. */
function sharedReason(shared: Map<string, Set<string>>, v: TtlValue): LeftAloneReason | undefined {
  const key = literalKey(v);
  const patterns = key === undefined ? undefined : shared.get(key);
  return patterns && patterns.size > 1 && [...patterns].some((p) => p.startsWith('(not mapped')) ? { kind: 'shared', patterns: [...patterns].sort() } : undefined;
}

/** The edits `apply --code` makes, one per literal (sites of one pattern may share one), in file order. */
export function codeEdits(result: CodeCheckResult): CodeEdit[] {
  const seen = new Map<string, CodeEdit>();
  for (const row of result.rows) for (const e of row.edits) if (!seen.has(literalKey(e.value)!)) seen.set(literalKey(e.value)!, e);
  return [...seen.values()].sort((a, b) => a.literal.path.localeCompare(b.literal.path) || a.literal.start - b.literal.start);
}
