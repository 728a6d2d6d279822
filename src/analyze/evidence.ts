import { MIN_SAMPLES_FOR_P99 } from './confidence.js';
import type { ApplyStep, Decision, DecisionFacts, DecisionOptions, Finding, HoldReason, JudgedTtl } from './decision-types.js';
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
 * The scaffold of every decision, fixed lock, lease or refused: its findings in order, and whether
 * `check` fails on them or a human should look. It opens with the entry a pattern lacks in the policy
 * and closes with a deploy pending (the policy's TTL is not the one in use yet) and contention.
 */
export class DecisionFindings {
  readonly list: Finding[] = [];
  /** `check` fails: only on what `apply` would change, or a decision only a human can take. */
  fails = false;
  /** A human should look (an annotation, a note in the row). */
  warns = false;

  constructor(judged: JudgedTtl) {
    if (judged.source === 'default') this.add({ kind: 'not-in-policy', defaultTtlMs: judged.ttlMs }, true);
  }

  /** Adds a finding; `warns`: it wants a human's look. */
  add(finding: Finding, warns = false): void {
    this.list.push(finding);
    if (warns) this.warns = true;
  }

  /** The closing findings, then the level the decision's findings add up to. */
  close(p: DecisionFacts, judged: JudgedTtl): Pick<Decision, 'level' | 'findings'> {
    if (judged.source === 'policy' && p.ttl.currentMs !== judged.ttlMs) this.add({ kind: 'deploy-pending', inUseTtlMs: p.ttl.currentMs, policyTtlMs: judged.ttlMs });
    if (p.contended) this.add({ kind: 'contended', waitP99Ms: p.waitMs.p99, notAcquiredRate: p.count > 0 ? p.outcomes.not_acquired / p.count : 0 }, true);
    return { level: this.fails ? 'fail' : this.warns ? 'warn' : 'info', findings: this.list };
  }
}
