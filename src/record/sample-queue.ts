import { isPlainValid, isTrustedSample, outcomeCodeOf, refusalOf } from '../sample/check-sample.js';
import { OUTCOME_CODE, type LockSample } from '../sample/sample.js';
import { FOLD, type Aggregator } from './aggregator.js';
import { SAMPLE_SLOTS, putNumbers } from './sample-numbers.js';

/** Samples queued at most; the one that fills the queue folds them all. */
const CAPACITY = 256;
/** Numbers per queued sample (see `putNumbers`). */
const STRIDE = SAMPLE_SLOTS;
/** What {@link SampleQueue.take} answers for a sample it does not hold (see there): fold it as it is. */
export const FOLD_AS_IS = -1;

/**
 * The samples `record()` took and has not folded yet, copied out of their
 * objects (which the caller may reuse) into typed arrays. Folded in one loop,
 * when the queue is full and before anything reads the aggregates (a seal,
 * `stats()`), a sample costs a third of what it did folded inside a lock's
 * cycle: in between, the lock's own code had pushed the aggregates' and the
 * fold's memory out of the CPU caches (220 against 100 ns per lock, measured).
 * Samples with a field the queue does not hold (an explicit pattern or
 * instance, `censored`, `unconfirmed`, `renewal`) are folded as they are.
 */
export class SampleQueue {
  length = 0;
  /** Why the last refused sample was refused. */
  refusal = '';
  private readonly numbers = new Float64Array(CAPACITY * STRIDE);
  private readonly keys = new Array<string>(CAPACITY).fill('');

  get full(): boolean {
    return this.length === CAPACITY;
  }

  /**
   * Queues a sample (checked as `fold` checks it), answering FOLD.counted; FOLD.invalid
   * (see {@link refusal}) for an invalid one, or one whose getter throws; {@link FOLD_AS_IS}
   * for one to fold as it is. Never throws. One function with its try, not a wrapper around
   * one that throws: the wrapper's size left V8 no inlining budget for `isPlainValid` in
   * `record()`, whose call (boxing `at` and `holdMs`) cost 213 instructions per sample.
   */
  take(sample: LockSample): number {
    try {
      const { key, at, holdMs, waitMs, ttlMs, attempts, outcome, threw, pattern, instance, extensions, censored, unconfirmed, renewal } = sample;
      if (pattern || instance || (censored !== undefined && censored !== null && censored !== false)) return FOLD_AS_IS;
      if ((unconfirmed !== undefined && unconfirmed !== null && unconfirmed !== false) || (renewal !== undefined && renewal !== null)) return FOLD_AS_IS;
      // Most locks are released: that outcome without the switch, whose inlined size took the same budget.
      const code = outcome === 'released' ? OUTCOME_CODE.released : outcomeCodeOf(outcome);
      if (!isTrustedSample(sample) && !isPlainValid(key, code, at, holdMs, waitMs, ttlMs, attempts, extensions, pattern, instance)) {
        const refusal = refusalOf(key, at, holdMs, waitMs, ttlMs, attempts, outcome, pattern, instance, extensions, censored, unconfirmed, renewal);
        if (refusal !== undefined) {
          this.refusal = refusal;
          return FOLD.invalid;
        }
      }
      // Counted once written: a trusted sample's number whose valueOf throws leaves no half-written slot behind.
      const i = this.length;
      this.keys[i] = key;
      putNumbers(this.numbers, i * STRIDE, at, holdMs, waitMs, ttlMs, attempts, code, threw, extensions);
      this.length = i + 1;
      return FOLD.counted;
    } catch (error) {
      this.refusal = `reading the sample threw: ${error instanceof Error ? error.message : String(error)}`;
      return FOLD.invalid;
    }
  }

  /** Folds every queued sample, in order, into `aggregator`; returns how many found no room there (see its `lastRefusal`). */
  foldInto(aggregator: Aggregator): number {
    const n = this.numbers;
    const keys = this.keys;
    let refused = 0;
    for (let i = 0; i < this.length; i++) {
      let code: number;
      try {
        code = aggregator.foldChecked(keys[i]!, n, i * STRIDE);
      } catch (error) {
        // Not expected (checked numbers); `record()` never throws, so the sample is dropped and counted.
        aggregator.lastRefusal = `folding the sample threw: ${error instanceof Error ? error.message : String(error)}`;
        code = FOLD.invalid;
      }
      if (code !== FOLD.counted) refused++;
    }
    this.length = 0;
    return refused;
  }
}
