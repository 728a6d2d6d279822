import type { Analysis } from '../analyze/analyze.js';
import type { CodeCheckResult, CodeRow } from '../code/decide.js';
import { printable } from '../text.js';
import { formatCount, formatMs } from '../units.js';
import { codeHeadline, renderCodeCheckMarkdown, rowReason } from './code.js';
import { MAX_ANNOTATIONS } from './github.js';
import { VERDICT_LABEL } from './verdict-style.js';

/**
 * `check --code --format github`: an annotation per call site that needs a
 * human, on the line where its TTL is declared (the literal, or the `const` it
 * comes from — in another module when it was imported): `::error` for what
 * fails the check, `::warning` for the rest, errors first, at most
 * {@link MAX_ANNOTATIONS}; and the Markdown for `$GITHUB_STEP_SUMMARY`.
 */
export function renderCodeCheckGithub(result: CodeCheckResult, analysis: Analysis): { annotations: string; summary: string } {
  const needing = result.rows.filter((r) => r.level !== 'info');
  const ordered = [...needing.filter((r) => r.level === 'fail'), ...needing.filter((r) => r.level === 'warn')];
  const shown = ordered.slice(0, MAX_ANNOTATIONS);
  const annotations = shown.map((row) => {
    const at = row.site.ttl?.declaration ?? row.site.at;
    return `::${row.level === 'fail' ? 'error' : 'warning'} file=${property(at.file)},line=${at.line},title=${property(title(row))}::${data(message(row))}\n`;
  }).join('');
  const more = ordered.length - shown.length;
  const summary = renderCodeCheckMarkdown(result, analysis) + (more > 0 ? `\n${formatCount(more)} more finding(s) without an annotation of their own: see the table above.\n` : '');
  return { annotations: annotations + `${codeHeadline(result)}\n`, summary };
}

function title(row: CodeRow): string {
  const what = row.decision ? VERDICT_LABEL[row.decision.verdict] : row.leftAlone?.kind === 'key-not-mapped' ? 'key not mapped' : 'left alone';
  return `${row.pattern === undefined ? row.site.call : printable(row.pattern)}: ${what}`;
}

function message(row: CodeRow): string {
  const p = row.analysis;
  const evidence = p ? ` (p99 ${formatMs(p.holdMs.p99)}, ${formatCount(p.count)} samples${p.outcomes.expired > 0 ? `, ${formatCount(p.outcomes.expired)} expired` : ''})` : '';
  return `${row.site.call} at ${row.site.at.file}:${row.site.at.line}: ${rowReason(row)}${evidence}`;
}

/** Workflow-command escaping: the message part. */
function data(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Workflow-command escaping: a property value (`:` and `,` separate properties). */
function property(text: string): string {
  return data(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
