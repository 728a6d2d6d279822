import type { Finding } from '../analyze/decision.js';

/**
 * Where a finding's sentence shows, beyond the row it explains (the JSON, the
 * code check and `check`'s rows that need a human say every finding).
 */
export interface FindingPlaces {
  /** Said under the Markdown report's table: what the table cannot show, or what stands behind a row's too little data or contention. */
  readonly markdownNote: boolean;
  /** Said in the HTML report's pattern section (the verdict and the risk sentences say the rest). */
  readonly htmlSection: boolean;
  /** `check`'s "Fine, with notes": `lists` names a fine row for it, `says` only adds it to a row listed anyway. */
  readonly checkFine: 'lists' | 'says' | false;
  /**
   * In a GitHub annotation's message: `recommends` — the sentence states the TTL and the
   * recommendation, so the message needs no lead; `sentence` — said as it is; `left-out` —
   * the lead or the title says it already.
   */
  readonly annotation: 'recommends' | 'sentence' | 'left-out';
  /** The annotation's title on a row whose TTL is right: the finding that wants a look (the first such finding names it). */
  readonly okTitle?: string;
}

/**
 * Every finding kind and where it shows, in one table: a new kind does not
 * compile until it is placed, as a new verdict does not until it is styled
 * (`verdict-style.ts`).
 */
export const FINDING_PLACES: Readonly<Record<Finding['kind'], FindingPlaces>> = Object.freeze({
  expired: { markdownNote: false, htmlSection: true, checkFine: false, annotation: 'recommends' },
  'too-short': { markdownNote: false, htmlSection: false, checkFine: false, annotation: 'recommends' },
  'too-long': { markdownNote: false, htmlSection: false, checkFine: false, annotation: 'recommends' },
  'below-floor': { markdownNote: false, htmlSection: false, checkFine: false, annotation: 'recommends' },
  'insufficient-data': { markdownNote: true, htmlSection: false, checkFine: false, annotation: 'left-out' },
  'not-in-policy': { markdownNote: false, htmlSection: false, checkFine: false, annotation: 'left-out' },
  held: { markdownNote: false, htmlSection: false, checkFine: false, annotation: 'sentence' },
  tail: { markdownNote: true, htmlSection: true, checkFine: 'lists', annotation: 'recommends', okTitle: 'holds beyond the rule' },
  'unseen-expirations': { markdownNote: true, htmlSection: true, checkFine: 'lists', annotation: 'sentence', okTitle: 'expirations not seen to end' },
  censored: { markdownNote: true, htmlSection: true, checkFine: 'lists', annotation: 'sentence' },
  resolved: { markdownNote: false, htmlSection: true, checkFine: 'lists', annotation: 'sentence' },
  'deploy-pending': { markdownNote: false, htmlSection: false, checkFine: 'says', annotation: 'sentence' },
  contended: { markdownNote: true, htmlSection: true, checkFine: false, annotation: 'sentence', okTitle: 'contended' },
  lease: { markdownNote: true, htmlSection: true, checkFine: 'lists', annotation: 'sentence' },
  'lease-at-risk': { markdownNote: true, htmlSection: true, checkFine: false, annotation: 'recommends', okTitle: 'late renewals' },
  'lease-too-long': { markdownNote: true, htmlSection: true, checkFine: false, annotation: 'recommends' },
  'insufficient-renewals': { markdownNote: false, htmlSection: true, checkFine: false, annotation: 'sentence' },
  resolution: { markdownNote: true, htmlSection: true, checkFine: false, annotation: 'sentence' },
  'beyond-buckets': { markdownNote: true, htmlSection: false, checkFine: false, annotation: 'sentence' },
});
