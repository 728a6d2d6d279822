import { PatternHour, type Series } from './pattern-hour.js';
import type { RawBudget } from './raw-budget.js';

/**
 * The (pattern, hour) aggregates an aggregator holds: found per series and bucket, made while there
 * is room (the memory bound), retired when their hour is over. Hours of a renamed provisional
 * pattern (see `PatternNames`) take no new samples and retire with their hour: they do not count
 * against the bound, so that learning a family's position never refuses the samples of others.
 */
export class HoursInMemory {
  private readonly all = new Set<PatternHour>();
  private renamed = 0;

  constructor(
    /** Aggregates held at most, those of renamed patterns aside. */
    readonly max: number,
    private readonly budget: RawBudget,
  ) {}

  get size(): number {
    return this.all.size;
  }

  [Symbol.iterator](): IterableIterator<PatternHour> {
    return this.all.values();
  }

  /** `series`' aggregate of the hour starting at `bucket`, made if new and there is room; undefined when there is none. */
  of(series: Series, bucket: number): PatternHour | undefined {
    let hour = series.hours.find((h) => h.bucketStartMs === bucket);
    if (!hour) {
      if (this.all.size - this.renamed >= this.max) return undefined;
      hour = new PatternHour(series, bucket, this.budget);
      series.hours.push(hour);
      this.all.add(hour);
      // (A renamed pattern given a sample all the same, by an explicit pattern of its old name: its hours count as its others.)
      if (series.renamed) this.renamed++;
    }
    if (!series.current || bucket >= series.current.bucketStartMs) series.current = hour;
    return hour;
  }

  /** Forgets a retired hour. */
  remove(hour: PatternHour): void {
    this.all.delete(hour);
    const series = hour.series;
    if (series.renamed) this.renamed--;
    series.hours.splice(series.hours.indexOf(hour), 1);
    if (series.current === hour) series.current = series.hours.at(-1);
  }

  /** `series` was renamed: its hours held now no longer count against the bound. */
  markRenamed(series: Series): void {
    if (series.renamed) return;
    series.renamed = true;
    this.renamed += series.hours.length;
  }
}
