import type { Analysis } from '../analyze/analyze.js';
import { printable } from '../text.js';
import { formatCount, formatMs, formatSpan, formatTime } from '../units.js';
import { MIN_SAMPLES_FOR_P99 } from '../analyze/confidence.js';
import { bound, findingText, recommendationText, unconfirmedText } from './decision-text.js';
import { warningSentences } from './hint-text.js';
import { unattributedText } from './pattern-text.js';
import { riskSentences } from './risk-text.js';
import { FINDING_PLACES } from './finding-style.js';
import { VERDICT_LABEL, VERDICT_MARK } from './verdict-style.js';

/** A pattern as a Markdown code span that survives pipes, backticks and control characters in a GFM table. */
export function markdownCode(text: string): string {
  const safe = printable(text).replace(/\|/g, '\\|');
  const longestRun = Math.max(0, ...[...safe.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longestRun + 1);
  const pad = safe.startsWith('`') || safe.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${safe}${pad}${fence}`;
}

/**
 * Untrusted text as Markdown that renders as that text: every ASCII punctuation
 * character backslash-escaped (no link, image, HTML, emphasis or table cell can
 * start), and every `@` in a code span of its own, so that GitHub makes no
 * mention (no `@team` is pinged by a bot's comment). Line breaks become spaces.
 */
export function markdownText(text: string): string {
  return printable(text.replace(/[\r\n]+/g, ' '))
    .replace(/[!-/:-@[-`{-~]/g, (c) => (c === '@' ? '`@`' : `\\${c}`));
}

/** One line: the window and the policy. */
export function describeRun(analysis: Analysis): string {
  const { policy, window } = analysis;
  // With no floor (--floor 0) the rule is the multiple alone, not "max(0 µs, …)".
  const scaled = `${policy.multiplier} × p99`;
  const leases = analysis.patterns.some((p) => p.lease) ? '; leases (renewed locks) from renewal lateness' : '';
  const rule = `TTL = ${policy.floorMs > 0 ? `max(${formatMs(policy.floorMs)}, ${scaled})` : scaled}, rounded up to ${formatMs(policy.stepMs)}${leases}`;
  if (analysis.patterns.length === 0 && analysis.unconfirmed.length === 0) return `No samples yet · ${rule}`;
  return `${formatTime(window.fromMs)} → ${formatTime(window.toMs)} (${formatSpan(window.toMs - window.fromMs)}) · ${rule}`;
}

/** Patterns `watch` saw only expire, never released: first, as a list of their own (no advice for them). */
export function unconfirmedMarkdown(analysis: Analysis): string[] {
  if (analysis.unconfirmed.length === 0) return [];
  return ['**🔴 Expired, never released** (seen by `ttl-advisor watch`; their true hold times are unknown):', '', ...analysis.unconfirmed.map((u) => `- ${markdownCode(u.pattern)}: ${unconfirmedText(u)}`), ''];
}

/** The Markdown report: one table, worst first, short enough for a PR comment. */
export function renderMarkdown(analysis: Analysis): string {
  const lines = [`### ttl-advisor: lock TTLs from measured hold times`, '', describeRun(analysis), ''];
  for (const warning of warningSentences(analysis)) lines.push(`> ⚠️ ${markdownText(warning)}`, '');
  lines.push(...unconfirmedMarkdown(analysis));
  if (analysis.patterns.length > 0) {
    lines.push('| pattern | samples | p99 | current TTL | recommended TTL | verdict |', '|---|---:|---:|---:|---:|---|');
    for (const p of analysis.patterns) {
      // Expirations are counted as expired: `lost` is the outcome of a key that vanished before its TTL could have run out.
      const n = p.outcomes.expired;
      const verdict = n > 0 && p.verdict === 'expired' ? `${formatCount(n)} expired` : `${VERDICT_LABEL[p.verdict]}${n > 0 ? ` (${formatCount(n)} expired)` : ''}`;
      // Advice in bold; too little data shows the need instead; `≥` where holds were not seen to end.
      const rec = recommendationText(p.decision, p.holdCount, MIN_SAMPLES_FOR_P99);
      lines.push(
        `| ${markdownCode(p.pattern)} | ${p.incompleteHours > 0 ? '≥ ' : ''}${formatCount(p.count)} | ${bound(p.holdMs.p99, p.holdLowerBound.p99)} | ${formatMs(p.ttl.currentMs)} | ` +
          `${rec.advice ? `**${rec.text}**` : rec.text} | ${VERDICT_MARK[p.verdict]} ${verdict}${p.contended ? ' · ⚠️ contended' : ''} |`,
      );
    }
    lines.push('');
    // The trade, for the patterns whose TTL should change: what it risks now and with the recommendation;
    // and the findings the table cannot show (holds beyond the rule, holds not seen to end).
    for (const p of analysis.patterns) {
      const changing = !p.lease && (p.verdict === 'expired' || p.verdict === 'too-short' || p.verdict === 'too-long');
      const notes = p.decision.findings.filter((f) => FINDING_PLACES[f.kind].markdownNote).map((f) => findingText(f));
      const sentences = [...(changing ? riskSentences(p) : []), ...notes];
      if (sentences.length > 0) lines.push(`- ${markdownCode(p.pattern)}: ${sentences.join(' ')}`);
    }
    if (lines.at(-1) !== '') lines.push('');
  }
  if (analysis.unattributed) lines.push(`> ${markdownText(unattributedText(analysis.unattributed))}`, '');
  return lines.join('\n');
}
