import type { Analysis } from '../analyze/analyze.js';
import type { Decision } from '../analyze/decision.js';
import type { CheckResult } from '../policy/check.js';
import { printable } from '../text.js';
import { MIN_SAMPLES_FOR_P99 } from '../analyze/confidence.js';
import { formatMs } from '../units.js';
import { bound, evidenceText, findingText, tooFewHoldTimesText, unconfirmedText } from './decision-text.js';
import { FINDING_PLACES } from './finding-style.js';
import { VERDICT_LABEL } from './verdict-style.js';
import { checkHeadline, renderCheckMarkdown } from './check.js';
import { MAX_ANNOTATIONS, renderGithub, type Annotation, type GithubOutput } from './annotations.js';

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
): GithubOutput {
  const lines = policy.text.split('\n');
  // An entry's line; a pattern not in the file points at `"locks"`.
  const lineOf = (pattern: string | undefined) => {
    const key = pattern === undefined ? undefined : `${JSON.stringify(pattern)}:`;
    const index = key === undefined ? -1 : lines.findIndex((l) => l.includes(key));
    return index >= 0 ? index + 1 : Math.max(1, lines.findIndex((l) => l.includes('"locks"')) + 1);
  };
  const annotations: Annotation[] = [];
  // Only rows that need a human get an annotation, each with its reason; fine rows never do.
  for (const row of [...result.rows, ...result.missingFromPolicy]) {
    const d = row.decision;
    if (d.level === 'info') continue;
    const p = row.analysis;
    // The reason first; the recommendation where no sentence states it; the evidence last.
    const sentences = d.findings.filter((f) => FINDING_PLACES[f.kind].annotation !== 'left-out').map((f) => findingText(f, printable));
    const statesRecommendation = d.findings.some((f) => FINDING_PLACES[f.kind].annotation === 'recommends');
    const lead = d.insufficient
      ? tooFewHoldTimesText('annotation', p.holdCount, MIN_SAMPLES_FOR_P99)
      : statesRecommendation
        ? ''
        : `TTL ${formatMs(row.configuredTtlMs)}, recommended ${bound(d.recommendedTtlMs, d.atLeast)}.`;
    const evidence = evidenceText(p);
    annotations.push({
      level: d.level === 'fail' ? 'error' : 'warning',
      file: policy.path,
      line: lineOf(row.entry === undefined ? undefined : row.pattern),
      title: `${printable(row.pattern)}: ${row.entry === undefined ? 'not in the policy' : row.verdict === 'ok' ? okTitle(d) : VERDICT_LABEL[row.verdict]}`,
      message: [lead, ...sentences, evidence].filter(Boolean).join(' '),
    });
  }
  // A pattern watch saw only expire: a warning on the entry it resolves to (the summary lists the others).
  for (const u of result.unconfirmed) {
    if (u.entryPattern === undefined) continue;
    annotations.push({ level: 'warning', file: policy.path, line: lineOf(u.entryPattern), title: `${printable(u.pattern)}: expired, never released`, message: `${printable(u.pattern)}: ${printable(unconfirmedText(u.analysis))}` });
  }
  for (const entry of result.noData) {
    if (!entry.suggestion) continue;
    annotations.push({
      level: 'warning',
      file: policy.path,
      line: lineOf(entry.pattern),
      title: `${printable(entry.pattern)}: no data`,
      message: `No pattern in the data matches this entry; did you mean ${printable(entry.suggestion)}?`,
    });
  }
  // In the report's order (worst verdict first): renderGithub puts the errors first.
  return renderGithub(annotations, checkHeadline(result), renderCheckMarkdown(result, analysis));
}

/** What an annotation's title says of a row whose TTL is right: the first finding that wants a look. */
function okTitle(d: Decision): string {
  return d.findings.map((f) => FINDING_PLACES[f.kind].okTitle).find((t) => t !== undefined) ?? 'ok';
}
