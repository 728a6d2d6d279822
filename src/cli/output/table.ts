import type { Analysis } from '../../analyze/analyze.js';
import { MIN_SAMPLES_FOR_P99 } from '../../analyze/confidence.js';
import { bound, recommendationText, unconfirmedText } from '../../report/decision-text.js';
import { unattributedText } from '../../report/pattern-text.js';
import { VERDICT_LABEL } from '../../report/verdict-style.js';
import { displayWidth, pad, printable, truncate } from '../../text.js';
import { formatCount, formatMs } from '../../units.js';

const MAX_PATTERN_WIDTH = 48;

/** A compact plain-text table for the terminal. */
export function renderTable(analysis: Analysis): string {
  // Patterns watch saw only expire come first, in a sentence each: they have no statistics to tabulate.
  const unconfirmed = analysis.unconfirmed.map((u) => `expired, never released: ${truncate(printable(u.pattern), MAX_PATTERN_WIDTH)}: ${unconfirmedText(u)}\n`).join('');
  const other = analysis.unattributed ? `\n${unattributedText(analysis.unattributed)}.\n` : '';
  if (analysis.patterns.length === 0) return unconfirmed + (unconfirmed || other ? '' : 'No samples in the window yet.\n') + other;
  return unconfirmed + (unconfirmed ? '\n' : '') + patternTable(analysis) + other;
}

function patternTable(analysis: Analysis): string {
  const header = ['pattern', 'samples', 'p99', 'current TTL', 'recommended', 'verdict'];
  const rows = analysis.patterns.map((p) => [
    truncate(printable(p.pattern), MAX_PATTERN_WIDTH),
    `${p.incompleteHours > 0 ? '≥ ' : ''}${formatCount(p.count)}`,
    bound(p.holdMs.p99, p.holdLowerBound.p99),
    formatMs(p.ttl.currentMs),
    recommendationText(p.decision, p.holdCount, MIN_SAMPLES_FOR_P99).text,
    VERDICT_LABEL[p.verdict] + (p.contended ? ', contended' : ''),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => displayWidth(r[i]!))));
  const right = new Set([1, 2, 3, 4]);
  const line = (cells: string[]) =>
    cells.map((c, i) => pad(c, widths[i]!, right.has(i) ? 'right' : 'left')).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '─'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}
