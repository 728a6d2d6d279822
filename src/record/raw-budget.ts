import type { RawRow } from '../store/input.js';

/**
 * How many raw rows one (pattern, hour) keeps, beyond the rollups that count
 * every lock. Raw rows explain a distribution; they are not the distribution.
 */
export interface RawBudget {
  /** Failed locks (not released, or the section threw) kept per pattern-hour. */
  failed: number;
  /** The slowest holds kept per pattern-hour: the tail behind a p99. */
  slowest: number;
  /** A uniform random sample kept per pattern-hour (written when the hour ends, or at close). */
  uniform: number;
}

/**
 * A slow hold is written when it enters the hour's top `slowest`; in random
 * order that happens about slowest × (1 + ln(n / slowest)) times in n locks.
 * Past this multiple of `slowest` (holds growing all hour long) the set on
 * disk stops following the top, so a pathological order cannot fill the disk.
 */
const SLOW_ROWS_FACTOR = 32;

/**
 * The raw-row budget of one pattern-hour: failures up to a cap, every hold
 * that enters the hour's slowest set, and a reservoir sample (Li's
 * algorithm L: one comparison per lock, a random draw only when a row enters).
 */
export class HourBudget {
  private failedKept = 0;
  private slowKept = 0;
  /** Min-heap of the slowest holds seen this hour. */
  private readonly slowest: Float64Array;
  private slowestSize = 0;
  private seen = 0;
  /** The uniform sample, and whether each row was already written for another reason. */
  readonly reservoir: RawRow[] = [];
  readonly reservoirWritten: boolean[] = [];
  private nextPick = 0;
  private w = 1;

  constructor(private readonly budget: RawBudget) {
    this.slowest = new Float64Array(budget.slowest);
  }

  /** Whether a failed lock gets its row. */
  takeFailed(): boolean {
    if (this.failedKept >= this.budget.failed) return false;
    this.failedKept++;
    return true;
  }

  /** Whether a hold enters the hour's slowest set (and gets its row). */
  takeSlow(holdUs: number): boolean {
    const k = this.budget.slowest;
    if (k === 0 || holdUs < 0) return false;
    const heap = this.slowest;
    if (this.slowestSize < k) {
      let i = this.slowestSize++;
      heap[i] = holdUs;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent]! <= heap[i]!) break;
        [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
        i = parent;
      }
    } else {
      if (holdUs <= heap[0]!) return false;
      heap[0] = holdUs;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < k && heap[l]! < heap[m]!) m = l;
        if (r < k && heap[r]! < heap[m]!) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i]!, heap[m]!];
        i = m;
      }
    }
    if (this.slowKept >= k * SLOW_ROWS_FACTOR) return false;
    this.slowKept++;
    return true;
  }

  /** The reservoir slot this lock takes, or -1: called once per lock. */
  pickUniform(): number {
    const n = this.budget.uniform;
    const index = this.seen++;
    if (n === 0) return -1;
    if (index < n) {
      if (index === n - 1) this.skipAhead();
      return index;
    }
    if (index < this.nextPick) return -1;
    this.skipAhead();
    return Math.floor(Math.random() * n);
  }

  /** Draws the index of the next lock to enter the full reservoir (algorithm L). */
  private skipAhead(): void {
    const n = this.budget.uniform;
    this.w *= Math.exp(Math.log(nonZeroRandom()) / n);
    this.nextPick = this.seen + Math.floor(Math.log(nonZeroRandom()) / Math.log1p(-this.w));
  }
}

function nonZeroRandom(): number {
  return Math.random() || Number.MIN_VALUE;
}
