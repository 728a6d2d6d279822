import { TRUSTED_SAMPLE, isTrustedSample, refusalOf } from '../sample/check-sample.js';
import type { LockSample, Outcome } from '../sample/sample.js';
import { FOLD, type Aggregator } from './aggregator.js';

/** Samples queued at most; the one that fills the queue folds them all. */
const CAPACITY = 256;
/** Numbers per queued sample: at, holdMs, waitMs, ttlMs, attempts, extensions, threw. */
const STRIDE = 8;
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
  private readonly outcomes = new Array<Outcome>(CAPACITY).fill('released');
  /** What a queued sample is folded as: valid already (checked when taken), so trusted. */
  private readonly scratch: LockSample = { key: '', at: 0, holdMs: 0, waitMs: 0, ttlMs: 0, attempts: 1, outcome: 'released', threw: false, extensions: 0, [TRUSTED_SAMPLE]: true } as LockSample;

  get full(): boolean {
    return this.length === CAPACITY;
  }

  /** {@link take} for `record()`: a sample whose getter throws is an invalid one. Never throws. */
  takeSafely(sample: LockSample): number {
    try {
      return this.take(sample);
    } catch (error) {
      this.refusal = `reading the sample threw: ${error instanceof Error ? error.message : String(error)}`;
      return FOLD.invalid;
    }
  }

  /**
   * Queues a sample (checked as `fold` checks it), answering FOLD.counted; FOLD.invalid
   * (see {@link refusal}) for an invalid one; {@link FOLD_AS_IS} for one to fold as it
   * is. Throws when a getter of the sample throws.
   */
  take(sample: LockSample): number {
    const { key, at, holdMs, waitMs, ttlMs, attempts, outcome, threw, pattern, instance, extensions, censored, unconfirmed, renewal } = sample;
    if (pattern || instance || (censored !== undefined && censored !== null && censored !== false)) return FOLD_AS_IS;
    if ((unconfirmed !== undefined && unconfirmed !== null && unconfirmed !== false) || (renewal !== undefined && renewal !== null)) return FOLD_AS_IS;
    if (!isTrustedSample(sample)) {
      const refusal = refusalOf(key, at, holdMs, waitMs, ttlMs, attempts, outcome, pattern, instance, extensions, censored, unconfirmed, renewal);
      if (refusal !== undefined) {
        this.refusal = refusal;
        return FOLD.invalid;
      }
    }
    const i = this.length++;
    const at8 = i * STRIDE;
    const n = this.numbers;
    this.keys[i] = key;
    this.outcomes[i] = outcome;
    n[at8] = at;
    // NaN stands for what the fold tells apart from a number: no hold (undefined or null), a wait not measured (null).
    n[at8 + 1] = holdMs === undefined || holdMs === null ? Number.NaN : holdMs;
    n[at8 + 2] = waitMs === undefined ? 0 : waitMs === null ? Number.NaN : waitMs;
    n[at8 + 3] = ttlMs;
    n[at8 + 4] = attempts === undefined || attempts === null ? 1 : attempts;
    n[at8 + 5] = extensions === undefined || extensions === null ? 0 : extensions;
    n[at8 + 6] = threw === true ? 1 : 0;
    return FOLD.counted;
  }

  /** Folds every queued sample, in order, into `aggregator`; returns how many found no room there (see its `lastRefusal`). */
  foldInto(aggregator: Aggregator): number {
    const s = this.scratch as { -readonly [K in keyof LockSample]: LockSample[K] };
    const n = this.numbers;
    let refused = 0;
    for (let i = 0; i < this.length; i++) {
      const at8 = i * STRIDE;
      const hold = n[at8 + 1]!;
      const wait = n[at8 + 2]!;
      s.key = this.keys[i]!;
      s.outcome = this.outcomes[i]!;
      s.at = n[at8]!;
      s.holdMs = Number.isNaN(hold) ? undefined : hold;
      s.waitMs = Number.isNaN(wait) ? null : wait;
      s.ttlMs = n[at8 + 3]!;
      s.attempts = n[at8 + 4]!;
      s.extensions = n[at8 + 5]!;
      s.threw = n[at8 + 6] === 1;
      if (aggregator.foldSafely(s, false) !== FOLD.counted) refused++;
    }
    this.length = 0;
    return refused;
  }
}
