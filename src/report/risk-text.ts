import type { PatternAnalysis } from '../analyze/summarize.js';
import type { RiskRate } from '../analyze/risk.js';
import { formatCount, formatMs } from '../units.js';
import { rateText } from './decision-text.js';

/** "104 holds outlived it (52 a day)", or `none` when there were none; per hour, with its span, from less than a day of data. */
function counted(count: number, r: RiskRate, rate: number, what: string, none: string): string {
  return count === 0 ? none : `${formatCount(count)} ${what} (${rateText(rate, r.per, r.spanMs)})`;
}

function times(x: number | null): string {
  return x === null ? '—' : x >= 10 ? `${formatCount(x)}×` : `${x.toFixed(2)}×`;
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
    `At the TTL in use (${current}), ${counted(r.overCurrentTtl, r.rate, r.rate.overCurrentTtl, 'holds outlived it', 'no hold outlived it')} and ` +
      `${counted(r.nearMisses, r.rate, r.rate.nearMisses, 'used more than half of it', 'none used more than half of it')}; ` +
      `it covers p99 ${times(r.headroom.p99)} and the longest hold ${times(r.headroom.max)}${extended}.`,
    same
      ? 'The recommended TTL is the one in use.'
      : `At the recommended ${recommended}, ${counted(r.overRecommendedTtl, r.rate, r.rate.overRecommendedTtl, 'holds would have outlived it', 'no hold would have outlived it')}.`,
    `If a holder crashes while holding, every other instance waits ${current}${same ? '' : ` now, ${recommended} as recommended`}.`,
  ];
}
