import { MIN_SAMPLES_FOR_P99 } from './confidence.js';
import type { ApplyStep, DecisionFacts, DecisionOptions, Finding, HoldReason, JudgedTtl } from './decision-types.js';
import { MIN_RENEWALS } from './lease.js';

/** What a move stands on: hold times (a fixed lock) or renewals (a lease), and the span of the data. */
export interface Evidence {
  count: number;
  of: 'holds' | 'renewals';
  spanMs: number;
}

/**
 * What `apply` does with a TTL the data recommends moving to `toMs`, on the
 * evidence rules: never a pinned entry; not on too few hold times (renewals) or
 * too short a window; not a move under `minChangePercent` unless `urgent`
 * (locks were lost that the move would save).
 */
export function applyStep(e: Evidence, judged: JudgedTtl, toMs: number, urgent: boolean, o: DecisionOptions): ApplyStep {
  const fromMs = judged.ttlMs;
  if (fromMs === toMs && judged.source !== 'default') return { kind: 'keep' };
  const hold = (why: HoldReason): ApplyStep => ({ kind: 'hold', toMs, why });
  if (judged.pinned) return hold({ kind: 'pinned', reason: judged.reason });
  if (e.of === 'holds' && e.count < MIN_SAMPLES_FOR_P99) return hold({ kind: 'too-few-samples', holdCount: e.count, neededCount: MIN_SAMPLES_FOR_P99 });
  if (e.of === 'renewals' && e.count < MIN_RENEWALS) return hold({ kind: 'too-few-renewals', renewals: e.count, neededCount: MIN_RENEWALS });
  if (e.spanMs < o.minWindowMs) return hold({ kind: 'short-window', spanMs: e.spanMs, minWindowMs: o.minWindowMs });
  if (judged.source === 'default') return { kind: 'write', toMs };
  // A small move is not worth a pull request, unless locks were lost that it would save.
  const changePercent = (Math.abs(toMs - fromMs) / fromMs) * 100;
  if (changePercent < o.minChangePercent && !urgent) return hold({ kind: 'under-min-change', changePercent, minChangePercent: o.minChangePercent });
  return { kind: 'write', toMs };
}

/**
 * The findings every decision ends with, fixed lock or lease: a deploy pending (the policy's TTL is not
 * the one in use yet) and contention. Returns whether they want a human's look.
 */
export function closingFindings(p: DecisionFacts, judged: JudgedTtl, findings: Finding[]): boolean {
  if (judged.source === 'policy' && p.ttl.currentMs !== judged.ttlMs) findings.push({ kind: 'deploy-pending', inUseTtlMs: p.ttl.currentMs, policyTtlMs: judged.ttlMs });
  if (!p.contended) return false;
  findings.push({ kind: 'contended', waitP99Ms: p.waitMs.p99, notAcquiredRate: p.count > 0 ? p.outcomes.not_acquired / p.count : 0 });
  return true;
}
