import type { Analysis } from '../analyze/analyze.js';
import type { CodeCheckResult, CodeRow } from '../code/decide.js';
import { printable } from '../text.js';
import { codeHeadline, renderCodeCheckMarkdown, rowReason, unmatchedText } from './code.js';
import { evidenceText, findingText } from './decision-text.js';
import { MAX_ANNOTATIONS, renderGithub, type Annotation, type GithubOutput } from './annotations.js';
import { VERDICT_LABEL } from './verdict-style.js';

/**
 * `check --code --format github`: an annotation per call site that needs a
 * human, on the line where its TTL is declared (the literal, or the `const` it
 * comes from — in another module when it was imported): `::error` for what
 * fails the check, `::warning` for the rest, errors first, at most
 * {@link MAX_ANNOTATIONS}; and the Markdown for `$GITHUB_STEP_SUMMARY`.
 */
export function renderCodeCheckGithub(result: CodeCheckResult, analysis: Analysis): GithubOutput {
  const annotations = result.rows
    .filter((row) => row.level !== 'info')
    .map((row): Annotation => {
      const at = row.site.ttl?.declaration ?? row.site.at;
      return { level: row.level === 'fail' ? 'error' : 'warning', file: at.file, line: at.line, title: title(row), message: message(row) };
    });
  for (const u of result.unmatched) {
    if (u.decision.level === 'info') continue;
    annotations.push({ level: u.decision.level === 'fail' ? 'error' : 'warning', file: undefined, line: undefined, title: `${printable(u.pattern)}: ${VERDICT_LABEL[u.decision.verdict]}, not found in the code`, message: `${u.decision.findings.map((f) => findingText(f)).join(' ')} ${unmatchedText(u)}.` });
  }
  for (const r of result.failsCheck) {
    annotations.push({ level: 'error', file: undefined, line: undefined, title: `${printable(r.dataPattern)}: fails check against the policy file`, message: r.decision.findings.map((f) => findingText(f)).join(' ') });
  }
  for (const f of result.skipped) annotations.push({ level: 'warning', file: f.file, line: 1, title: 'file not read', message: `${f.reason}: any lock in it is not checked` });
  return renderGithub(annotations, codeHeadline(result), renderCodeCheckMarkdown(result, analysis));
}

function title(row: CodeRow): string {
  const what = row.decision ? VERDICT_LABEL[row.decision.verdict] : row.leftAlone?.kind === 'key-not-mapped' ? 'key not mapped' : 'left alone';
  return `${row.pattern === undefined ? row.site.call : printable(row.pattern)}: ${what}`;
}

function message(row: CodeRow): string {
  const p = row.analysis;
  const evidence = p ? ` ${evidenceText(p)}` : '';
  return `${row.site.call} at ${row.site.at.file}:${row.site.at.line}: ${rowReason(row)}${evidence}`;
}
