import type { Analysis } from '../analyze/analyze.js';
import type { CheckResult, CheckRow } from '../policy/check.js';
import { formatCount, formatMs } from '../units.js';
import { VERDICT_LABEL, VERDICT_MARK } from './verdict-style.js';
import { warningSentences } from './hint-text.js';
import { describeRun, markdownCode, markdownText } from './markdown.js';

function change(row: CheckRow): string {
  const sign = row.changePercent > 0 ? '+' : '';
  return `${sign}${Math.round(row.changePercent)} %`;
}

function note(row: CheckRow): string {
  const parts: string[] = [`${VERDICT_MARK[row.verdict]} ${VERDICT_LABEL[row.verdict]}`];
  if (row.resolvedExpirations > 0) {
    parts.push(`✅ ${formatCount(row.resolvedExpirations)} expiration(s) under the ${formatMs(row.inUseTtlMs)} in use, covered by the policy's TTL`);
  }
  if (row.inUseTtlMs !== row.configuredTtlMs) parts.push(`deploy pending: ${formatMs(row.inUseTtlMs)} in use`);
  const p = row.analysis;
  if (p.contended) {
    const gaveUp = p.count > 0 ? ((p.outcomes.not_acquired / p.count) * 100).toFixed(1) : '0.0';
    parts.push(`⚠️ contended: wait p99 ${formatMs(p.waitMs.p99)}, ${gaveUp} % not acquired — the key is probably too broad`);
  }
  // The reason is anyone's text in a PR comment: shown as text, never as links, images, HTML or mentions.
  if (row.entry.pinned) parts.push(`📌 pinned${row.entry.reason ? `: ${markdownText(row.entry.reason)}` : ''}`);
  if (row.failing) parts.push('**fails the check**');
  return parts.join(' · ');
}

/**
 * The first line, stating what the exit code states: it fails (exit 1) only
 * when a TTL must rise or a lock expired, and says so; anything else is at
 * most a warning.
 */
export function checkHeadline(result: CheckResult): string {
  const failing = result.rows.filter((r) => r.failing).length;
  const missingExpired = result.missingFromPolicy.filter((p) => p.outcomes.expired > 0).length;
  const missing = result.missingFromPolicy.length;
  const missingNote = missing > 0 ? `${missing} pattern(s) missing from the policy${missingExpired ? `, ${missingExpired} with expired locks` : ''}` : '';
  if (result.exitCode === 1) {
    const parts = [failing > 0 ? `${result.rows.length} TTL(s) need attention, ${failing} failing` : '', missingNote].filter(Boolean);
    return `### ttl-advisor check: fails ❌ — ${parts.join('; ')}`;
  }
  if (result.rows.length === 0 && missing === 0) return '### ttl-advisor check: every configured TTL matches the data ✅';
  const parts = [result.rows.length > 0 ? `${result.rows.length} TTL(s) need attention` : '', missingNote].filter(Boolean);
  return `### ttl-advisor check: passes, with warnings ⚠️ — ${parts.join('; ')}`;
}

/** The `check` result as Markdown for a PR comment: only what needs attention, with its evidence. */
export function renderCheckMarkdown(result: CheckResult, analysis: Analysis): string {
  const lines = [checkHeadline(result), '', describeRun(analysis), ''];
  // The evidence rules: a short window, notes on the inputs. Findings, not failures.
  for (const warning of warningSentences(analysis)) lines.push(`> ⚠️ ${markdownText(warning)}`, '');
  if (result.rows.length > 0) {
    lines.push('| pattern | TTL | recommended | change | samples | p99 | expired | |', '|---|---:|---:|---:|---:|---:|---:|---|');
    for (const row of result.rows) {
      const p = row.analysis;
      lines.push(
        `| ${markdownCode(row.pattern)} | ${formatMs(row.configuredTtlMs)} | **${formatMs(row.recommendedTtlMs)}** | ${change(row)} | ` +
          `${p.incompleteHours > 0 ? '≥ ' : ''}${formatCount(p.count)} | ${formatMs(p.holdMs.p99)} | ${formatCount(row.expirations)} | ${note(row)} |`,
      );
    }
    lines.push('');
  }
  if (result.missingFromPolicy.length > 0) {
    lines.push(`**In the data but not in the policy** (these get the default ${formatMs(result.defaultTtlMs)}):`, '');
    for (const p of result.missingFromPolicy) {
      const expired = p.outcomes.expired > 0 ? `, ${formatCount(p.outcomes.expired)} expired` : '';
      lines.push(`- ${markdownCode(p.pattern)}: ${formatCount(p.count)} samples, p99 ${formatMs(p.holdMs.p99)}, recommended ${formatMs(p.recommendedTtlMs)}${expired}`);
    }
    lines.push('');
  }
  if (result.noData.length > 0) {
    lines.push('**In the policy but no data in this window:** ' + result.noData.map(markdownCode).join(', '), '');
  }
  return lines.join('\n');
}

/** The `check` result as JSON, for machines. */
export function renderCheckJson(result: CheckResult, analysis: Analysis): string {
  const r3 = (ms: number) => Math.round(ms * 1000) / 1000;
  const row = (r: CheckRow) => ({
    pattern: r.pattern,
    dataPattern: r.dataPattern,
    configuredTtlMs: r.configuredTtlMs,
    recommendedTtlMs: r.recommendedTtlMs,
    changePercent: Math.round(r.changePercent * 10) / 10,
    verdict: r.verdict,
    failing: r.failing,
    pinned: r.entry.pinned === true,
    reason: r.entry.reason ?? null,
    count: r.analysis.count,
    holdCount: r.analysis.holdCount,
    p99Ms: r3(r.analysis.holdMs.p99),
    expired: r.expirations,
    resolvedExpirations: r.resolvedExpirations,
    inUseTtlMs: r.inUseTtlMs,
  });
  return (
    JSON.stringify(
      {
        version: 1,
        exitCode: result.exitCode,
        policy: { ...analysis.policy },
        attention: result.rows.map(row),
        fine: result.fine.map(row),
        missingFromPolicy: result.missingFromPolicy.map((p) => ({
          pattern: p.pattern,
          count: p.count,
          p99Ms: r3(p.holdMs.p99),
          recommendedTtlMs: p.recommendedTtlMs,
          expired: p.outcomes.expired,
          // Runs with the default TTL; fails the check only when a lock expired.
          failing: p.outcomes.expired > 0,
        })),
        noData: result.noData,
      },
      null,
      2,
    ) + '\n'
  );
}
