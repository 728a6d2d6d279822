import type { RawRow } from '../store/input.js';

/**
 * How many raw rows one (pattern, hour) keeps, beyond the rollups that count
 * every lock. Raw rows explain a distribution; they are not the distribution.
 */
export interface RawBudget {
  /** Failed locks (not released, or the section threw) kept per pattern-hour. */
  failed: number;
  /** The slowest holds kept per pattern-hour: the tail behind a p99 (written when the hour ends, or at close). */
  slowest: number;
  /** A uniform random sample kept per pattern-hour (written when the hour ends, or at close). */
  uniform: number;
}

/** Raw rows already handed over for writing, so a row chosen twice (failed, slow, uniform) is written once. */
const handedOver = new WeakSet<RawRow>();

/** Marks a row as written (a failure, or one `rawSampleRate` picked). */
export function markWritten(row: RawRow): void {
  handedOver.add(row);
}

/**
 * The raw-row budget of one pattern-hour: failures up to a cap (written at
 * once), the hour's slowest holds (a min-heap of rows) and a uniform sample
 * (Li's algorithm L: one comparison per lock, a random draw only when a row
 * enters). The slowest and the uniform sample are only known when the hour
 * ends, so they are written then (or at close): exactly `slowest + uniform`
 * rows per pattern-hour, however many locks it saw.
 */
export class HourBudget {
  private failedKept = 0;
  /** Min-heap of the slowest holds seen this hour, and their rows. */
  private readonly slowest: Float64Array;
  private readonly slowRows: RawRow[] = [];
  private slowestSize = 0;
  private seen = 0;
  private readonly reservoir: RawRow[] = [];
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

  /** Whether a hold would enter the hour's slowest set; if so, {@link addSlow} must follow with its row. */
  isSlow(holdUs: number): boolean {
    return holdUs >= 0 && this.budget.slowest > 0 && (this.slowestSize < this.budget.slowest || holdUs > this.slowest[0]!);
  }

  /** Puts a row into the hour's slowest set (after {@link isSlow} said it belongs there). */
  addSlow(holdUs: number, row: RawRow): void {
    const k = this.budget.slowest;
    const heap = this.slowest;
    const rows = this.slowRows;
    let i: number;
    if (this.slowestSize < k) {
      i = this.slowestSize++;
      heap[i] = holdUs;
      rows[i] = row;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent]! <= heap[i]!) break;
        this.swap(parent, i);
        i = parent;
      }
      return;
    }
    heap[0] = holdUs;
    rows[0] = row;
    i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < k && heap[l]! < heap[m]!) m = l;
      if (r < k && heap[r]! < heap[m]!) m = r;
      if (m === i) break;
      this.swap(m, i);
      i = m;
    }
  }

  /** The reservoir slot this lock takes, or -1: called once per lock; the row then goes in with {@link putUniform}. */
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

  putUniform(slot: number, row: RawRow): void {
    this.reservoir[slot] = row;
  }

  /** The hour's slowest and uniform rows not written already, each once: what is written when the hour ends. */
  rowsAtEnd(): RawRow[] {
    const rows = new Set<RawRow>();
    for (const row of this.slowRows) if (!handedOver.has(row)) rows.add(row);
    for (const row of this.reservoir) if (!handedOver.has(row)) rows.add(row);
    return [...rows];
  }

  private swap(a: number, b: number): void {
    const heap = this.slowest;
    const rows = this.slowRows;
    [heap[a], heap[b]] = [heap[b]!, heap[a]!];
    [rows[a], rows[b]] = [rows[b]!, rows[a]!];
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
