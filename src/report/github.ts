import type { Analysis } from '../analyze/analyze.js';
import type { CheckResult } from '../policy/check.js';
import { printable } from '../text.js';
import { formatCount, formatMs } from '../units.js';
import { VERDICT_LABEL } from './verdict-style.js';
import { checkHeadline, renderCheckMarkdown } from './check.js';

/** GitHub shows at most this many annotations per step usefully; the rest are counted in the summary. */
export const MAX_ANNOTATIONS = 10;

interface Finding {
  level: 'error' | 'warning';
  /** Line of the policy entry (1-based). */
  line: number;
  title: string;
  message: string;
}

/**
 * `check --format github`: workflow-command annotations on the policy file —
 * `::error` for what fails the check, `::warning` for the rest, each on the
 * line of its entry, worst first, at most {@link MAX_ANNOTATIONS} — and the
 * Markdown summary for `$GITHUB_STEP_SUMMARY` (which works for pull requests
 * from forks, where a token cannot comment), ending with how many findings had
 * no annotation of their own.
 */
export function renderCheckGithub(
  result: CheckResult,
  analysis: Analysis,
  policy: { path: string; text: string },
): { annotations: string; summary: string } {
  const lines = policy.text.split('\n');
  const lineOf = (pattern: string) => {
    const key = `${JSON.stringify(pattern)}`;
    const index = lines.findIndex((l) => l.includes(key));
    return index >= 0 ? index + 1 : Math.max(1, lines.findIndex((l) => l.includes('"locks"')) + 1);
  };
  const findings: Finding[] = [];
  for (const row of result.rows) {
    const p = row.analysis;
    findings.push({
      level: row.failing ? 'error' : 'warning',
      line: lineOf(row.pattern),
      title: `${printable(row.pattern)}: ${VERDICT_LABEL[row.verdict]}`,
      message:
        `TTL ${formatMs(row.configuredTtlMs)}, recommended ${formatMs(row.recommendedTtlMs)} (p99 ${formatMs(p.holdMs.p99)} over ${formatCount(p.count)} samples` +
        `${p.outcomes.expired > 0 ? `, ${formatCount(p.outcomes.expired)} expired` : ''})${row.entry.pinned ? '; pinned' : ''}`,
    });
  }
  for (const p of result.missingFromPolicy) {
    findings.push({
      level: p.outcomes.expired > 0 ? 'error' : 'warning',
      line: lineOf(''),
      title: `${printable(p.pattern)}: not in the policy`,
      message: `runs with the default ${formatMs(result.defaultTtlMs)}; recommended ${formatMs(p.recommendedTtlMs)} (p99 ${formatMs(p.holdMs.p99)}${p.outcomes.expired > 0 ? `, ${formatCount(p.outcomes.expired)} expired` : ''})`,
    });
  }
  // Errors first, then in the report's order (worst verdict first).
  const ordered = [...findings.filter((f) => f.level === 'error'), ...findings.filter((f) => f.level === 'warning')];
  const shown = ordered.slice(0, MAX_ANNOTATIONS);
  const annotations = shown.map((f) => `::${f.level} file=${property(policy.path)},line=${f.line},title=${property(f.title)}::${data(f.message)}\n`).join('');
  const more = ordered.length - shown.length;
  const summary =
    renderCheckMarkdown(result, analysis) +
    (more > 0 ? `\n${formatCount(more)} more finding(s) without an annotation of their own: see the table above.\n` : '');
  return { annotations: annotations + `${checkHeadline(result).replace(/^### /, '')}\n`, summary };
}

/** Workflow-command escaping: the message part. */
function data(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Workflow-command escaping: a property value (`:` and `,` separate properties). */
function property(text: string): string {
  return data(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
