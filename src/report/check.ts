import type { Analysis } from '../analyze/analyze.js';
import type { CheckResult, CheckRow } from '../policy/check.js';
import { MIN_SAMPLES_FOR_P99 } from '../analyze/confidence.js';
import { formatCount, formatMs } from '../units.js';
import { bound, findingText, recommendationText, unconfirmedText } from './decision-text.js';
import { FINDING_PLACES } from './finding-style.js';
import { JSON_REPORT_VERSION } from './json.js';
import { VERDICT_LABEL, VERDICT_MARK } from './verdict-style.js';
import { warningSentences } from './hint-text.js';
import { describeRun, markdownCode, markdownText, unconfirmedMarkdown } from './markdown.js';

function change(row: CheckRow): string {
  if (row.decision.insufficient) return '—';
  const sign = row.changePercent > 0 ? '+' : '';
  return `${sign}${Math.round(row.changePercent)} %`;
}

/** The row's state at a glance: the verdict, whether it fails, and the short tags; the sentences follow the table. */
function note(row: CheckRow): string {
  const d = row.decision;
  const parts: string[] = [`${VERDICT_MARK[row.verdict]} ${VERDICT_LABEL[row.verdict]}`];
  if (row.entry === undefined) parts.push('not in the policy');
  // The reason is anyone's text in a PR comment: shown as text, never as links, images, HTML or mentions.
  if (row.entry?.pinned) parts.push(`📌 pinned${row.entry.reason ? `: ${markdownText(row.entry.reason)}` : ''}`);
  if (d.findings.some((f) => f.kind === 'tail')) parts.push('tail beyond the rule');
  if (row.analysis.contended) parts.push('⚠️ contended');
  if (row.failing) parts.push('**fails the check**');
  else if (d.apply.kind === 'write') parts.push(`\`apply\` writes ${formatMs(d.apply.toMs)}`);
  return parts.join(' · ');
}

/** A table row of the check: the recommendation in bold only when it is advice (enough data), `≥` where it is a lower bound. */
function tableRow(row: CheckRow): string {
  const p = row.analysis;
  const rec = recommendationText(row.decision, p.holdCount, MIN_SAMPLES_FOR_P99);
  return (
    `| ${markdownCode(row.pattern)} | ${formatMs(row.configuredTtlMs)} | ${rec.advice ? `**${rec.text}**` : rec.text} | ${change(row)} | ` +
    `${p.incompleteHours > 0 ? '≥ ' : ''}${formatCount(p.count)} | ${bound(p.holdMs.p99, p.holdLowerBound.p99)} | ${formatCount(row.expirations)} | ${note(row)} |`
  );
}

/** The sentences that explain a row: every finding, the user's strings escaped. */
function rowSentences(row: CheckRow): string {
  return row.decision.findings.map((f) => findingText(f, markdownText)).join(' ');
}

/** Rows that need a human: they fail, or they warn. */
function needsHuman(result: CheckResult): { failing: number; warning: number } {
  const all = [...result.rows, ...result.missingFromPolicy];
  const failing = all.filter((r) => r.decision.level === 'fail').length;
  const warning = all.filter((r) => r.decision.level === 'warn').length + result.noData.filter((n) => n.suggestion).length + result.unconfirmed.length;
  return { failing, warning };
}

/**
 * The first line of `check` and `check --code`, stating what the exit code
 * states: it fails (exit 1) only where `apply` would change a TTL or a human
 * must decide; it counts only the rows that need a human (`failing`, `warning`);
 * `allFine` is what it says when none does.
 */
export function headlineText(command: string, need: { exitCode: number; failing: number; warning: number }, allFine: string): string {
  const counts = [need.failing > 0 ? `${need.failing} failing` : '', need.warning > 0 ? `${need.warning} to look at` : ''].filter(Boolean).join(', ');
  if (need.exitCode === 1) return `${command}: fails ❌ — ${counts}`;
  if (need.warning === 0) return `${command}: ${allFine}`;
  return `${command}: passes, with warnings ⚠️ — ${counts}`;
}

/** The first line of `check` (see {@link headlineText}). */
export function checkHeadline(result: CheckResult): string {
  return headlineText('ttl-advisor check', { exitCode: result.exitCode, ...needsHuman(result) }, 'every configured TTL matches the data ✅');
}

/** The `check` result as Markdown for a PR comment: what needs a human, with its evidence and the reason in words. */
export function renderCheckMarkdown(result: CheckResult, analysis: Analysis): string {
  const lines = [`### ${checkHeadline(result)}`, '', describeRun(analysis), ''];
  // The evidence rules: a short window, notes on the inputs. Findings, not failures.
  for (const warning of warningSentences(analysis)) lines.push(`> ⚠️ ${markdownText(warning)}`, '');
  // Never released: their true holds are unknown, so a warning each, never a failure.
  lines.push(...unconfirmedMarkdown(analysis));
  const shown = [...result.rows, ...result.missingFromPolicy.filter((r) => r.decision.level !== 'info')];
  if (shown.length > 0) {
    lines.push('| pattern | TTL | recommended | change | samples | p99 | expired | |', '|---|---:|---:|---:|---:|---:|---:|---|');
    for (const row of shown) lines.push(tableRow(row));
    lines.push('');
    for (const row of shown) lines.push(`- ${markdownCode(row.pattern)}${row.dataPattern !== row.pattern ? ` (${markdownCode(row.dataPattern)})` : ''}: ${rowSentences(row)}`);
    lines.push('');
  }
  // Fine rows are not listed, except for what the data says about them that a reviewer should know.
  // A TTL apply would move is said too, so a reviewer is not surprised by its diff.
  const noted = result.fine.filter((r) => r.decision.apply.kind === 'write' || r.decision.findings.some((f) => FINDING_PLACES[f.kind].checkFine === 'lists'));
  if (noted.length > 0) {
    lines.push('**Fine, with notes:**', '');
    for (const row of noted) {
      const sentences = row.decision.findings.filter((f) => FINDING_PLACES[f.kind].checkFine !== false).map((f) => findingText(f, markdownText));
      const apply = row.decision.apply;
      if (apply.kind === 'write') sentences.unshift(`\`apply\` would write ${formatMs(apply.toMs)} (the recommendation; not needed to pass).`);
      lines.push(`- ${markdownCode(row.pattern)}: ${sentences.join(' ')}`);
    }
    lines.push('');
  }
  if (result.noData.length > 0) {
    lines.push('**In the policy but no data in this window:** ' + result.noData.map((n) => markdownCode(n.pattern) + (n.suggestion ? ` (did you mean ${markdownCode(n.suggestion)}?)` : '')).join(', '), '');
  }
  return lines.join('\n');
}

/** The `check` result as JSON, for machines. */
export function renderCheckJson(result: CheckResult, analysis: Analysis): string {
  const r3 = (ms: number) => Math.round(ms * 1000) / 1000;
  const row = (r: CheckRow) => ({
    pattern: r.pattern,
    dataPattern: r.dataPattern,
    inPolicy: r.entry !== undefined,
    configuredTtlMs: r.configuredTtlMs,
    // No recommendation from too little data: the need is in `holdCount` and `level`.
    recommendedTtlMs: r.decision.insufficient ? null : r.recommendedTtlMs,
    recommendationIsLowerBound: r.decision.atLeast,
    changePercent: Math.round(r.changePercent * 10) / 10,
    verdict: r.verdict,
    level: r.decision.level,
    failing: r.failing,
    apply: r.decision.apply.kind === 'hold' ? { kind: 'hold', toMs: r.decision.apply.toMs, reason: r.decision.apply.why.kind } : r.decision.apply,
    pinned: r.entry?.pinned === true,
    reason: r.entry?.reason ?? null,
    count: r.analysis.count,
    holdCount: r.analysis.holdCount,
    p99Ms: r3(r.analysis.holdMs.p99),
    p99IsLowerBound: r.analysis.holdLowerBound.p99,
    expired: r.expirations,
    resolvedExpirations: r.resolvedExpirations,
    inUseTtlMs: r.inUseTtlMs,
    findings: r.decision.findings.map((f) => ({ kind: f.kind, text: findingText(f) })),
  });
  return (
    JSON.stringify(
      {
        version: JSON_REPORT_VERSION,
        exitCode: result.exitCode,
        policy: { ...analysis.policy },
        attention: result.rows.map(row),
        fine: result.fine.map(row),
        missingFromPolicy: result.missingFromPolicy.map(row),
        noData: result.noData.map((n) => ({ pattern: n.pattern, suggestion: n.suggestion ?? null })),
    unconfirmed: result.unconfirmed.map((u) => ({ pattern: u.pattern, entryPattern: u.entryPattern ?? null, expired: u.analysis.expired, ttlMs: u.analysis.ttl.currentMs, text: unconfirmedText(u.analysis) })),
      },
      null,
      2,
    ) + '\n'
  );
}
