import type { Analysis } from '../analyze/analyze.js';
import type { AnalysisWarning, HeldData, Hint } from '../analyze/hints.js';
import type { PatternAnalysis } from '../analyze/summarize.js';
import { OVERFLOW_PATTERN } from '../keys/pattern.js';
import { formatCount, formatMs, formatSpan, formatTime } from '../units.js';

/**
 * The sentences of the analysis' hints and warnings, for every report and the
 * CLI: the analysis returns them as data (`analyze/hints.ts`), and they are
 * worded here only. Plain text; paths and pattern names in warnings are the
 * user's, so each renderer escapes the sentence for its format.
 */

const percent = (fraction: number) => (fraction * 100).toFixed(1);

/** One hint about a pattern, as a sentence. */
export function hintText(hint: Hint): string {
  switch (hint.kind) {
    case 'lost':
      return (
        `${hint.lost} lock(s) vanished before their TTL could have run out: deleted by someone else or lost by Redis ` +
        '(a restart without persistence, a failover). Not a sign of a short TTL; fencing tokens protect against it.'
      );
    case 'extended':
      return (
        `${hint.extended} lock(s) (${percent(hint.extended / hint.count)} %) were extended while held, ${hint.extensions} time(s) in all: ` +
        'for them the TTL is not the hold budget, and a hold longer than the TTL was no expiration.'
      );
    case 'waits-unknown':
      return hint.waitCount === 0
        ? 'Wait times are unknown: these locks were seen by `ttl-advisor watch`, and Redis does not see a client wait or retry.'
        : `Wait times are known for ${hint.waitCount} of ${hint.count} locks: the others were seen by \`ttl-advisor watch\`, which does not see a client wait or retry.`;
    case 'several-ttls': {
      // Close TTLs (4,998 ms and 5 s) would read alike rounded: then both in ms.
      const alike = formatMs(hint.minMs) === formatMs(hint.maxMs);
      const [lo, hi] = alike ? [`${hint.minMs} ms`, `${hint.maxMs} ms`] : [formatMs(hint.minMs), formatMs(hint.maxMs)];
      return `Several TTLs in use (${lo}–${hi}); the most common is compared.`;
    }
    case 'incomplete':
      return (
        `Counts are lower bounds: \`ttl-advisor watch\` lost sight of locks in ${hint.hours} hour(s) of this pattern (see the gaps), ` +
        'so locks of those hours may be missing. The percentiles stand on the locks that were seen.'
      );
  }
}

/** One gap in what was seen, as a sentence. */
export function gapText(gap: Analysis['gaps'][number]): string {
  const why =
    gap.reason === 'output-buffer-limit'
      ? "Redis closed the watcher's notification connection (its pubsub output-buffer limit: notifications came faster than they were read)"
      : gap.reason === 'stopped-while-down'
        ? 'the watcher stopped while its connection was down'
        : gap.reason === 'open-limit'
          ? 'the watcher followed as many open locks as it may and took no new one until one ended (keys set and never deleted?)'
          : 'the connection to Redis was lost';
  const lost = gap.reason === 'open-limit' ? 'lock(s) taken meanwhile were not recorded' : 'lock(s) held then were not followed to their end';
  const held = gap.openHolds > 0 ? `; ${formatCount(gap.openHolds)} ${lost}` : '';
  const span = gap.toMs - gap.fromMs < 60_000 ? `${((gap.toMs - gap.fromMs) / 1000).toFixed(1)} s` : formatSpan(gap.toMs - gap.fromMs);
  return `${gap.source} (${gap.instance}), from ${formatTime(gap.fromMs)} for ${span}: ${why}${held}.`;
}

/** A pattern's hints, in the analysis' order. */
export function hintSentences(p: PatternAnalysis): string[] {
  return p.hints.map(hintText);
}

/** Why there is nothing to report: nothing recorded yet, or nothing in the window and patterns asked for. */
export function nothingMatchedText(held: HeldData): string {
  if (held.samples === 0 || held.firstMs === undefined || held.lastMs === undefined) {
    return 'No samples yet: wrap your locks with a recorder and come back after a day or two.';
  }
  return `No samples in the window and patterns asked for: the database holds ${formatCount(held.samples)} samples from ${formatTime(held.firstMs)} to ${formatTime(held.lastMs)}.`;
}

/** How many names a warning lists before it says `…`. */
const NAMES_SHOWN = 3;

/** One warning about the analysis, as a sentence. */
export function warningText(warning: AnalysisWarning): string {
  switch (warning.kind) {
    case 'same-file':
      return `${warning.path} is the same file as ${warning.firstPath}; read once.`;
    case 'shared-instances':
      return (
        `${warning.instances} instance(s) appear in more than one file (a merged file and its inputs?); ` +
        `each is counted once, from the first file given that holds it (${warning.firstPath}, …).`
      );
    case 'unreadable-rows': {
      const names = warning.patterns;
      const more = names.length > NAMES_SHOWN ? ', …' : '';
      return `${warning.rows} rollup row(s) could not be read (a damaged file?) and were left out: ${names.slice(0, NAMES_SHOWN).join(', ')}${more}.`;
    }
    case 'gaps': {
      const more = warning.count > warning.gaps.length ? ` (and ${warning.count - warning.gaps.length} more)` : '';
      return (
        `Not every lock was seen: \`ttl-advisor watch\` lost sight of locks ${warning.count} time(s)${more}, so the counts of the hours they touch ` +
        `(up to ${warning.hours} per pattern, marked in each pattern) are lower bounds. ${warning.gaps.map(gapText).join(' ')}`
      );
    }
    case 'short-window':
      return `The samples span ${formatSpan(warning.spanMs)}, less than 24 h: daily peaks may be missing, so p99 may be too low.`;
    case 'nothing-matched':
      return nothingMatchedText(warning.held);
    case 'outside-window':
      return `Prometheus answered ${formatCount(warning.points)} point(s) outside the window asked for (timestamps before it or after it): left out.`;
    case 'invalid-values':
      return `Prometheus answered ${formatCount(warning.values)} value(s) that are not valid (NaN, infinite, negative, out of range, or not shaped as the API answers): left out.`;
    case 'pattern-budget':
      return (
        `Prometheus has ${formatCount(warning.patterns)} patterns, more than the ${formatCount(warning.kept)} a samples file keeps: the ${formatCount(warning.kept)} with the most locks are reported, ` +
        `the other ${formatCount(warning.patterns - warning.kept)} counted under ${OVERFLOW_PATTERN} (--pattern picks the ones to report).`
      );
  }
}

/** The analysis' warnings, in its order. */
export function warningSentences(analysis: Analysis): string[] {
  return analysis.warnings.map(warningText);
}
