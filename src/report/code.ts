import type { Analysis } from '../analyze/analyze.js';
import { MIN_SAMPLES_FOR_P99 } from '../analyze/confidence.js';
import type { CodeCheckResult, CodeRow, UnmatchedPattern } from '../code/decide.js';
import type { LeftAloneReason } from '../code/types.js';
import { printable } from '../text.js';
import { formatCount, formatMs } from '../units.js';
import { findingText, holdReasonText, recommendationText } from './decision-text.js';
import { headlineText } from './check.js';
import { JSON_REPORT_VERSION } from './json.js';
import { describeRun, markdownCode, markdownText } from './markdown.js';
import { VERDICT_LABEL, VERDICT_MARK } from './verdict-style.js';

/**
 * `check --code` and `apply --code`, in words: each call site at its file and
 * line, its pattern and TTL, the one decision, and why a site is left alone.
 */

/** Why `apply --code` leaves a site alone, in a few words. */
export function leftAloneText(why: LeftAloneReason, text: (s: string) => string = printable): string {
  switch (why.kind) {
    case 'key-not-mapped':
      return `key not mapped: ${text(why.text)} is computed in a way that cannot be read statically`;
    case 'computed':
      return `the TTL is computed (${text(why.text)}), not a literal: change it by hand`;
    case 'shared':
      return `the constant is shared with call sites it would move otherwise (${why.patterns.map(text).join(', ')}): one edit cannot serve them all; give each its own constant`;
    case 'library-default':
      return "no TTL at the call: the library's default applies";
    case 'overridden':
      return `overridden by the policy: the entry ${text(why.entryPattern)} sets this TTL`;
    case 'wrapper-inner':
      return `the lock call inside ${text(why.wrapper)}, the service's own lock API: its ${why.callers} caller(s) give the key and the TTL, each judged as a site`;
    case 'default-not-insertable':
      return `no TTL at the call: the library's default applies, and its options are not an object written at the call to add \`${why.option}\` to: add it by hand`;
  }
}

/** `file:line` of a site's call. */
export function siteName(row: CodeRow): string {
  return `${row.site.at.file}:${row.site.at.line}`;
}

/** `file:line` where a site's TTL is declared (the call's, when it passes none). */
export function declarationName(row: CodeRow): string {
  const at = row.site.ttl?.declaration ?? row.site.at;
  return `${at.file}:${at.line}`;
}

/** The sentences of a row: the decision's findings, or why there is none. */
export function rowReason(row: CodeRow, text: (s: string) => string = printable): string {
  const parts: string[] = [];
  if (row.patterns.length > 1 && row.decision) parts.push(`One TTL for ${row.patterns.length} data patterns (${row.patterns.map(text).join(', ')}): the most demanding decides.`);
  if (row.decision) parts.push(...row.decision.findings.map((f) => findingText(f, text)));
  if (row.noData) parts.push('No data for this pattern in the window.');
  if (row.leftAlone) parts.push(`\`apply --code\` leaves it: ${leftAloneText(row.leftAlone, text)}.`);
  else if (row.decision?.apply.kind === 'hold') parts.push(`\`apply --code\` leaves it: ${holdReasonText(row.decision.apply.why, text)}.`);
  return parts.join(' ');
}

/** The first line of `check --code`, stating what the exit code states (see {@link headlineText}). */
export function codeHeadline(result: CodeCheckResult): string {
  const failing = result.rows.filter((r) => r.level === 'fail').length + result.unmatched.filter((u) => u.decision.level === 'fail').length + result.failsCheck.length;
  // A file not read may hold a lock: a look, as a site left alone is; so is a data pattern no site governs.
  const warning = result.rows.filter((r) => r.level === 'warn').length + result.skipped.length + result.unmatched.filter((u) => u.decision.level === 'warn').length;
  return headlineText('ttl-advisor check --code', { exitCode: result.exitCode, failing, warning }, `every TTL in the code matches the data ✅ (${result.rows.length} call site(s))`);
}

/** A site's TTL as it runs: its value, the environment variable that overrides it, or the library's default. */
export function ttlText(row: CodeRow, code: (s: string) => string = (t) => `\`${t}\``): string {
  const ttl = row.site.ttl;
  if (ttl?.valueMs === undefined) return ttl?.why?.kind === 'computed' ? 'computed' : '—';
  if (ttl.libraryDefault) return `${formatMs(ttl.valueMs)} (library default)`;
  return ttl.env === undefined ? formatMs(ttl.valueMs) : `${formatMs(ttl.valueMs)} (default of ${code(ttl.env)})`;
}

/** Why a data pattern no site governs was not found, in a few words. */
export function unmatchedText(u: UnmatchedPattern, code: (s: string) => string = (t) => `\`${t}\``): string {
  const closest = u.closest === undefined ? '' : ` (the closest in the code: ${code(u.closest)})`;
  return `in the samples, not found in the code: no call site's key reads as this pattern${closest} — a key built in a way not read, a lock in a file not scanned, or another service's`;
}

function recommended(row: CodeRow): string {
  const d = row.decision;
  if (!d || !row.analysis) return '—';
  const rec = recommendationText(d, row.analysis.holdCount, MIN_SAMPLES_FOR_P99);
  return rec.advice ? `**${rec.text}**` : rec.text;
}

function state(row: CodeRow): string {
  const parts: string[] = [];
  if (row.leftAlone?.kind === 'overridden') parts.push('overridden by the policy');
  else if (row.decision) parts.push(`${VERDICT_MARK[row.decision.verdict]} ${VERDICT_LABEL[row.decision.verdict]}`);
  else if (row.leftAlone?.kind === 'wrapper-inner') parts.push(`lock API: ${row.leftAlone.callers} caller(s)`);
  else if (row.leftAlone) parts.push('left alone');
  else if (row.noData) parts.push('no data');
  if (row.level === 'fail') parts.push('**fails the check**');
  else if (row.edits.length > 0) parts.push(`\`apply --code\` writes ${formatMs(row.edits[0]!.toMs)}`);
  return parts.join(' · ');
}

/** `check --code` as Markdown: one row per call site, the sentences after the table. */
export function renderCodeCheckMarkdown(result: CodeCheckResult, analysis: Analysis): string {
  const lines = [`### ${codeHeadline(result)}`, '', describeRun(analysis), ''];
  if (result.rows.length === 0 && result.skipped.length === 0) return [...lines, 'No lock call sites found.', ''].join('\n');
  lines.push('| call site | call | pattern | TTL | declared at | recommended | samples | |', '|---|---|---|---:|---|---:|---:|---|');
  for (const row of result.rows) {
    const more = row.patterns.length > 1 ? ` (+${row.patterns.length - 1})` : '';
    lines.push(
      `| ${markdownCode(siteName(row))} | ${markdownText(row.site.call)} | ${row.pattern === undefined ? 'not mapped' : markdownCode(row.pattern) + more} | ` +
        `${ttlText(row, markdownCode)} | ${markdownCode(declarationName(row))} | ${recommended(row)} | ${row.analysis ? formatCount(row.analysis.count) : '—'} | ${state(row)} |`,
    );
  }
  lines.push('');
  for (const row of result.rows) {
    const reason = rowReason(row, markdownText);
    if (reason !== '' && row.level !== 'info') lines.push(`- ${markdownCode(siteName(row))}: ${reason}`);
  }
  const fine = result.rows.filter((r) => r.level === 'info' && rowReason(r, markdownText) !== '');
  if (fine.length > 0) lines.push('', '**Fine, with notes:**', '', ...fine.map((r) => `- ${markdownCode(siteName(r))}: ${rowReason(r, markdownText)}`));
  if (result.unmatched.length > 0) {
    lines.push('', '**In the samples, not found in the code** (judged as `check` judges them):', '');
    for (const u of result.unmatched) {
      const verdict = `${VERDICT_MARK[u.decision.verdict]} ${VERDICT_LABEL[u.decision.verdict]}${u.decision.level === 'fail' ? ' · **fails the check**' : ''}`;
      const findings = u.decision.findings.map((f) => findingText(f, markdownText)).join(' ');
      lines.push(`- ${markdownCode(u.pattern)}: ${verdict} — ${formatCount(u.analysis.count)} samples. ${findings} Why no site: ${unmatchedText(u, markdownCode)}.`);
    }
  }
  if (result.failsCheck.length > 0) {
    lines.push('', '**Fails `check` against the policy file** (the code\'s TTL passes, the policy\'s does not: `check` would fail, so this fails too):', '');
    for (const r of result.failsCheck) lines.push(`- ${markdownCode(r.dataPattern)}: ${r.decision.findings.map((f) => findingText(f, markdownText)).join(' ')}`);
  }
  if (result.skipped.length > 0) lines.push('', '**Files not read** (any lock in them is not checked):', '', ...result.skipped.map((f) => `- ${markdownCode(f.file)}: ${f.reason}.`));
  return lines.join('\n') + '\n';
}

/** `check --code` as JSON, for machines: each call site, its TTL, the decision and what `apply --code` does with it. */
export function renderCodeCheckJson(result: CodeCheckResult): string {
  const sites = result.rows.map((r) => ({
    at: r.site.at,
    library: r.site.library,
    call: r.site.call,
    pattern: r.pattern ?? null,
    // Every data pattern the site governs (several for an enum in the key), and the wrappers the call goes through.
    patterns: r.patterns,
    via: r.site.via,
    ttl: r.site.ttl
      ? { option: r.site.ttl.option, ms: r.site.ttl.valueMs ?? null, declaration: r.site.ttl.declaration, env: r.site.ttl.env ?? null, libraryDefault: r.site.ttl.libraryDefault === true }
      : null,
    level: r.level,
    decision: r.decision ?? null,
    edits: r.edits.map((e) => ({ at: e.value.declaration, option: e.value.option, fromMs: e.fromMs, toMs: e.toMs, text: e.text })),
    leftAlone: r.leftAlone ?? (r.noData ? { kind: 'no-data' } : null),
  }));
  const unmatched = result.unmatched.map((u) => ({ pattern: u.pattern, level: u.decision.level, verdict: u.decision.verdict, closest: u.closest ?? null, decision: u.decision }));
  const failsCheck = result.failsCheck.map((r) => ({ pattern: r.dataPattern, entry: r.entry === undefined ? null : r.pattern, ttlMs: r.configuredTtlMs, decision: r.decision }));
  return JSON.stringify({ version: JSON_REPORT_VERSION, exitCode: result.exitCode, sites, unmatched, failsCheck, skipped: result.skipped }, null, 2) + '\n';
}
