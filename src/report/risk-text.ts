import type { PatternAnalysis } from '../analyze/summarize.js';
import type { Risk } from '../analyze/risk.js';
import { formatCount, formatMs } from '../units.js';
import { rateText } from './decision-text.js';

/**
 * "104 holds outlived it (52 a day)", or `none` when there were none; per hour, with its span, from
 * less than a day of data; "at least" when some holds were not seen to end.
 */
function counted(count: number, r: Risk, rate: number, what: string, none: string): string {
  if (count === 0) return r.lowerBound ? `${none} (of those seen to end)` : none;
  return `${r.lowerBound ? 'at least ' : ''}${formatCount(count)} ${what} (${rateText(rate, r.rate.per, r.rate.spanMs)})`;
}

/** A headroom; `at most` when the hold it divides is a lower bound. */
function times(x: number | null, atMost = false): string {
  return x === null ? '—' : `${atMost ? 'at most ' : ''}${x >= 10 ? `${formatCount(x)}×` : `${x.toFixed(2)}×`}`;
}

/**
 * The trade a TTL change makes, in three plain sentences: what the holds did
 * against the TTL in use, what they would do against the recommended one, and
 * what a crashed holder costs the others either way. Our own words and
 * numbers only (no key or pattern), so they need no escaping in Markdown.
 */
export function riskSentences(p: PatternAnalysis): string[] {
  const r = p.risk;
  const current = formatMs(p.ttl.currentMs);
  const recommended = formatMs(p.recommendedTtlMs);
  const same = p.recommendedTtlMs === p.ttl.currentMs;
  const extended = p.extended > 0 ? ` (${formatCount(p.extended)} locks were extended while held: for them a hold past the TTL was no expiration)` : '';
  return [
    `At the TTL in use (${current}), ${counted(r.overCurrentTtl, r, r.rate.overCurrentTtl, 'holds outlived it', 'no hold outlived it')} and ` +
      `${counted(r.nearMisses, r, r.rate.nearMisses, 'used more than half of it', 'none used more than half of it')}; ` +
      `it is ${times(r.headroom.p99, p.holdLowerBound.p99)} the p99 and ${times(r.headroom.max, p.holdLowerBound.max)} the longest hold${extended}.`,
    same
      ? 'The recommended TTL is the one in use.'
      : `At the recommended ${recommended}, ${counted(r.overRecommendedTtl, r, r.rate.overRecommendedTtl, 'holds would have outlived it', 'no hold would have outlived it')}.`,
    `If a holder crashes while holding, every other instance waits ${current}${same ? '' : ` now, ${recommended} as recommended`}.`,
  ];
}
