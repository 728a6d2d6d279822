import type { PatternAnalysis } from '../analyze/summarize.js';
import type { Decision, Finding, HoldReason, P99Bucket } from '../analyze/decision.js';
import type { UnconfirmedPattern } from '../analyze/hints.js';
import { thresholdTooShort } from '../analyze/lease.js';
import { TOO_LONG_FACTOR } from '../analyze/recommend.js';
import { LEASE_LIBRARY_FACTS } from '../sample/libraries.js';
import { formatCount, formatMs, formatSpan } from '../units.js';
import { leaseText, ranOutText } from './lease-text.js';

/**
 * The sentences of a decision (`analyze/decision.ts`) for every report, `check`
 * and `apply`: its findings and the reasons `apply` leaves a TTL alone. Our own
 * words and numbers only (no pattern, no pinned reason unless the caller's
 * escaping function is given), so they need no escaping.
 */

/** A figure that may be a lower bound: `≥ 500 ms`. */
export function bound(ms: number, atLeast: boolean): string {
  return `${atLeast ? '≥ ' : ''}${formatMs(ms)}`;
}

/** The evidence an annotation ends with: the p99 (a lower bound where holds were not seen to end), the samples, the expirations. */
export function evidenceText(p: Pick<PatternAnalysis, 'holdMs' | 'holdLowerBound' | 'count' | 'outcomes'>): string {
  return `(p99 ${bound(p.holdMs.p99, p.holdLowerBound.p99)}, ${formatCount(p.count)} samples${p.outcomes.expired > 0 ? `, ${formatCount(p.outcomes.expired)} expired` : ''})`;
}

/** A count as a rate: "52 a day" from a day of data or more, else "3.1 an hour, from 40 s of data". */
export function rateText(rate: number, per: 'day' | 'hour', spanMs: number): string {
  const n = rate >= 10 ? formatCount(rate) : rate >= 1 ? rate.toFixed(1) : rate.toFixed(2);
  return per === 'day' ? `${n} a day` : `${n} an hour, from ${formatSpan(spanMs)} of data`;
}

/**
 * Too few hold times for a recommendation, in every form an output says it, here
 * together so that they change together: `need` — "119 of 299 hold times", a table's
 * recommendation cell and the core of the others; `finding` — the decision's sentence;
 * `held` — why `apply` leaves the TTL; `annotation` — a GitHub annotation's lead;
 * `formula` — the HTML report's formula line.
 */
export function tooFewHoldTimesText(form: 'need' | 'finding' | 'held' | 'annotation' | 'formula', holdCount: number, neededCount: number): string {
  const need = `${formatCount(holdCount)} of ${formatCount(neededCount)} hold times`;
  switch (form) {
    case 'need':
      return need;
    case 'finding':
      return `${need}: too few for a p99 at 95 % confidence, no recommendation yet.`;
    case 'held':
      return `too few samples: ${need}`;
    case 'annotation':
      return `${need}: too few for a recommendation.`;
    case 'formula':
      return `No recommendation yet: ${need} needed for a p99 at 95 % confidence.`;
  }
}

/** Why `apply` leaves a TTL alone, in a few words: "pinned (payment provider limit)", "too few samples: 72 of 299 hold times". */
export function holdReasonText(why: HoldReason, text: (s: string) => string = (s) => s): string {
  switch (why.kind) {
    case 'pinned':
      return `pinned${why.reason ? ` (${text(why.reason)})` : ''}`;
    case 'too-few-samples':
      return tooFewHoldTimesText('held', why.holdCount, why.neededCount);
    case 'too-few-renewals':
      return `too few renewals: ${formatCount(why.renewals)} of ${formatCount(why.neededCount)}`;
    case 'short-window':
      return `short window: ${formatSpan(why.spanMs)} of data, --min-window is ${formatSpan(why.minWindowMs)}`;
    case 'under-min-change':
      return `under --min-change: ${why.changePercent.toFixed(1)} % < ${why.minChangePercent} %`;
    case 'shared-entry':
      return `the entry is shared with ${text(why.other)}, which needs ${formatMs(why.otherMs)}`;
    case 'beyond-buckets':
      return beyondBucketsText(why.lastBoundMs);
  }
}

/** The human decision a held move asks for: its direction only when the data's recommendation is advice. */
function heldText(toMs: number, fromMs: number | undefined, why: HoldReason, advice: boolean, text: (s: string) => string): string {
  const next =
    why.kind === 'pinned'
      ? advice && fromMs !== undefined
        ? `: ${toMs > fromMs ? 'raise' : 'lower'} it by hand, or unpin it`
        : ''
      : why.kind === 'too-few-samples' || why.kind === 'too-few-renewals' || why.kind === 'short-window'
        ? ': collect more data, or set it by hand'
        : why.kind === 'shared-entry'
          ? ': give the patterns entries of their own to set each'
          : '';
  return `\`apply\` leaves it — ${holdReasonText(why, text)}${advice ? ` — where the data recommends ${formatMs(toMs)}` : ''}${next}.`;
}

/** One finding as a sentence. `text` escapes the user's strings (a pinned reason, a pattern) for the format. */
export function findingText(f: Finding, text: (s: string) => string = (s) => s): string {
  switch (f.kind) {
    case 'lease':
      return leaseText(f.lease, f.ttlMs, f.floorMs);
    case 'lease-at-risk': {
      const ranOut = ranOutText(f.lease, f.ranOut);
      if (f.lease.renewals === 0) {
        return `${ranOut || `${formatCount(f.atRisk)} lease(s) came near running out`} before any renewal was seen (a holder gone, or blocked past the ${formatMs(f.ttlMs)} lease): too few renewals yet to say what lease it needs.`;
      }
      const l = f.lease;
      const need = thresholdTooShort(l)
        ? `raise the threshold (node-redlock's \`${LEASE_LIBRARY_FACTS.redlock.options!.threshold}\`) from ${formatMs(l.thresholdMs ?? 0)} to at least ${formatMs(l.recommended.thresholdMs ?? 0)}: a renewal is sent when that much is left, so a longer duration does not help.`
        : f.recommendedTtlMs > f.ttlMs
          ? `renewal lateness needs ${formatMs(f.recommendedTtlMs)}.`
          : `the lateness rule needs no more than ${formatMs(f.ttlMs)}: these were the far tail — look at what blocked the holders (event loop, GC, Redis latency).`;
      return (
        `${formatCount(f.atRisk)} of ${formatCount(f.holds)} lease(s) had under ${formatMs(f.lease.atRiskBelowMs)} left at a renewal${ranOut ? `, ${ranOut}` : ''}: ` +
        `the latest renewal came ${formatMs(f.latestLateMs)} late, ${f.minMarginMs <= 0 ? 'with nothing left' : `with ${formatMs(f.minMarginMs)} left`} of a ${formatMs(f.ttlMs)} lease; ${need}`
      );
    }
    case 'lease-too-long':
      return `The lease of ${formatMs(f.ttlMs)} is over ${TOO_LONG_FACTOR} × what renewal lateness needs (${formatMs(f.recommendedTtlMs)}, from q99.9 lateness ${formatMs(f.p999LateMs)}): a crashed holder blocks the others that long.`;
    case 'insufficient-renewals':
      return `${formatCount(f.renewals)} of ${formatCount(f.neededCount)} renewals: too few to advise the lease yet.`;
    case 'expired': {
      const seen = f.count - f.unseen;
      const head = `${formatCount(f.count)} lock(s) expired while the critical section still ran (TTL ${formatMs(f.inUseTtlMs)} in use)`;
      if (f.unseen === 0) return `${head}; the recommended ${formatMs(f.recommendedTtlMs)} covers them.`;
      const unseen = `${seen > 0 ? `${formatCount(f.unseen)} of them were` : 'they were'} not seen to end (each held at least its TTL)`;
      return `${head}; ${seen > 0 ? `the recommended ${formatMs(f.recommendedTtlMs)} covers the ${formatCount(seen)} seen to end; ` : ''}${unseen}, so the recommended ${formatMs(f.recommendedTtlMs)} is the least they need.`;
    }
    case 'too-short':
      return `The TTL of ${formatMs(f.ttlMs)} is under ${f.multiplier} × p99 (${formatMs(f.scaledP99Ms)}) or under the p99's 95 % upper bound: recommended ${formatMs(f.recommendedTtlMs)}.`;
    case 'too-long':
      return `The TTL of ${formatMs(f.ttlMs)} is over ${TOO_LONG_FACTOR} × the recommended ${formatMs(f.recommendedTtlMs)}: a crashed holder blocks the others needlessly.`;
    case 'below-floor':
      return `The TTL of ${formatMs(f.ttlMs)} covers the data but is under the ${formatMs(f.floorMs)} floor.`;
    case 'insufficient-data':
      return tooFewHoldTimesText('finding', f.holdCount, f.neededCount);
    case 'not-in-policy':
      return `Not in the policy: runs with the default ${formatMs(f.defaultTtlMs)}.`;
    case 'held':
      return heldText(f.toMs, f.fromMs, f.why, f.advice, text);
    case 'tail':
      return (
        `${f.atLeast ? 'At least ' : ''}${formatCount(f.holds)} hold(s) (${rateText(f.rate, f.per, f.spanMs)}) would outlive the recommended ${formatMs(f.recommendedTtlMs)}` +
        `${f.expired > 0 ? `, ${formatCount(f.expired)} of them expired` : ''}: the longest ${bound(f.longestMs, f.atLeast)}. ` +
        `The rule covers p99 ${f.multiplier} times over; a holder that hangs is what a timeout or \`maxHoldMs\` is for ` +
        '(to cover them anyway: `--cover max`, or `coverMs` on the entry).'
      );
    case 'unseen-expirations':
      return (
        `${formatCount(f.count)} expiration(s) whose end was not seen (or not kept as a raw row): each held at least the TTL it ran with, ` +
        `so whether ${formatMs(f.ttlMs)} covers them cannot be told. Record through \`withLock\` or \`instrument\` for a day to see the true tail.`
      );
    case 'censored': {
      const ceiling =
        f.p99CeilingMs === null || f.ceilingTtlMs === null
          ? 'more than 1 % of holds were not seen to end, so the p99 has no upper bound'
          : f.ceilingTtlMs === f.recommendedTtlMs
            ? `even if they ran on for ever, p99 would be ${formatMs(f.p99CeilingMs)} and the recommendation the same`
            : `if they ran on for ever, p99 would be ${formatMs(f.p99CeilingMs)} and the recommendation ${formatMs(f.ceilingTtlMs)}`;
      return (
        `${formatCount(f.censored)} hold(s) were not seen to end (their keys expired, or their holder never released them): ` +
        `p99 ≥ ${formatMs(f.p99Ms)} and the recommendation is at least ${formatMs(f.recommendedTtlMs)}; ${ceiling}. ` +
        'Record through `withLock` or `instrument` for a day to see the true tail.'
      );
    }
    case 'resolved':
      return `${formatCount(f.count)} expiration(s) under the ${formatMs(f.inUseTtlMs)} in use are covered by the policy's TTL.`;
    case 'deploy-pending':
      return `Deploy pending: the locks ran with ${formatMs(f.inUseTtlMs)}, the policy has ${formatMs(f.policyTtlMs)}.`;
    case 'resolution':
      return resolutionText(f.bucket);
    case 'beyond-buckets':
      return `${beyondBucketsText(f.lastBoundMs)}: no recommendation. Buckets up to the longest holds (or a native histogram) would say.`;
    case 'contended':
      return (
        `Contended: wait p99 ${formatMs(f.waitP99Ms)}, ${(f.notAcquiredRate * 100).toFixed(1)} % not acquired — the key is probably too broad.`
      );
  }
}

/**
 * What a pattern `watch` saw only expire says, after its name: "3 holds taken with a TTL of 200 ms
 * all expired and none was released — a lock whose every hold outlives its TTL, or …".
 */
export function unconfirmedText(u: UnconfirmedPattern): string {
  // The most common TTL (a watched TTL can read a little low on a busy host), and how far others reached.
  const ttl = `a TTL of ${formatMs(u.ttl.currentMs)}${u.ttl.maxMs > u.ttl.currentMs * 1.05 ? ` (up to ${formatMs(u.ttl.maxMs)})` : ''}`;
  const what = u.expired === 1 ? `1 hold taken with ${ttl} expired and was never released` : `${formatCount(u.expired)} holds taken with ${ttl} all expired and none was released`;
  return `${what} — a lock whose every hold outlives its TTL, or a cache the lock glob also matches (narrow \`--match\` to exclude it).`;
}

/** The refusal, in the one wording every output shares: "p99 is above 10 s, the last bucket: the buckets cannot say how far". */
export function beyondBucketsText(lastBoundMs: number): string {
  return `p99 is above ${formatMs(lastBoundMs)}, the last bucket: the buckets cannot say how far`;
}

/** How finely histogram buckets resolve the p99: "p99 between 15 ms and 20 ms (…)". */
export function resolutionText(b: P99Bucket): string {
  if (b.highMs === null) return beyondBucketsText(b.lowMs) + '.';
  const layout =
    b.nativeSchema === undefined
      ? 'a histogram bucket'
      : `a native histogram of schema ${b.nativeSchema}: its buckets are ${(nativeWidth(b.nativeSchema) * 100).toPrecision(2)} % wide`;
  const estimate = b.estimateMs === undefined ? '' : `; histogram_quantile would say ${formatMs(b.estimateMs)}`;
  return `p99 between ${formatMs(b.lowMs)} and ${formatMs(b.highMs)} (${layout}; the figures use its upper bound, never below the truth${estimate}).`;
}

function nativeWidth(schema: number): number {
  return 2 ** (2 ** -schema) - 1;
}

/** What the recommendation column shows: `≥ 3 s` for a lower bound; for too little data, the need instead. */
export function recommendationText(d: Decision, holdCount: number, neededCount: number): { text: string; advice: boolean } {
  const renewals = d.findings.find((f) => f.kind === 'insufficient-renewals');
  if (renewals) return { text: `${formatCount(renewals.renewals)} of ${formatCount(renewals.neededCount)} renewals`, advice: false };
  const beyond = d.findings.find((f) => f.kind === 'beyond-buckets');
  if (beyond) return { text: `none: p99 > ${formatMs(beyond.lastBoundMs)}`, advice: false };
  if (d.insufficient) return { text: tooFewHoldTimesText('need', holdCount, neededCount), advice: false };
  return { text: bound(d.recommendedTtlMs, d.atLeast), advice: true };
}
