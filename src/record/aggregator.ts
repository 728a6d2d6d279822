import { OVERFLOW_PATTERN, compileTemplates, type CompiledTemplate } from '../keys/pattern.js';
import { BUCKET_MS } from '../store/format.js';
import type { DeltaBatch, GapRow, RawRow } from '../store/input.js';
import { truncate } from '../text.js';
import { SAMPLE_LIMITS, isTrustedSample, isValidGap, outcomeCodeOf, refusalOf } from '../sample/check-sample.js';
import { KEY_CACHE_LIMIT, PatternCache } from '../sample/pattern-cache.js';
import type { LockSample, ObservationGap, RenewalTimings } from '../sample/sample.js';
import type { WarnOnce } from '../sample/warn-once.js';
import { PagedHistogram } from '../store/histogram/paged.js';
import { DeferredInserts } from './deferred-inserts.js';
import { SAMPLE_SLOTS, putNumbers } from './sample-numbers.js';
import { HoursInMemory } from './hours-in-memory.js';
import { LeaseFold, type PatternHour, Series } from './pattern-hour.js';
import { PatternNames } from './pattern-names.js';
import { markWritten, type RawBudget } from './raw-budget.js';

export interface AggregatorOptions {
  /** The recording process; samples without an `instance` belong to it. */
  instance: string;
  templates: readonly CompiledTemplate[];
  /** Distinct patterns per instance; further ones are folded into `{other}`. */
  maxPatterns: number;
  /** Raw rows kept per pattern-hour. */
  budget: RawBudget;
  /** Fraction of all locks also kept as raw rows, on top of the budget. */
  rawSampleRate: number;
  /** Raw rows waiting for the next seal at most; further ones are dropped and counted. */
  maxPendingRawRows: number;
}

/** An aggregator for a recorder's resolved options (`SqliteRecorder`, `RedisStreamSink`): its instance, templates and limits. */
export function aggregatorFor(instance: string, patterns: readonly string[], o: Pick<AggregatorOptions, 'maxPatterns' | 'budget' | 'rawSampleRate' | 'maxPendingRawRows'>): Aggregator {
  const { maxPatterns, budget, rawSampleRate, maxPendingRawRows } = o;
  return new Aggregator({ instance, templates: compileTemplates(patterns), maxPatterns, budget, rawSampleRate, maxPendingRawRows });
}

/** What {@link Aggregator.fold} did with a sample. */
export const FOLD = Object.freeze({ counted: 0, invalid: 1, noRoom: 2 });

/** An hour's aggregate is retired this long after the hour ended, once a seal found nothing new in it. */
const RETIRE_AFTER_MS = 2 * 60 * 1000;
/**
 * Folds samples, as they are recorded, into per-(pattern, hour) histograms and
 * counters in the recording process, and keeps raw rows by a budget: what both
 * `SqliteRecorder` and `RedisStreamSink` send is the result of {@link seal},
 * so their statistics never depend on a writer or Redis keeping up. A fold is
 * O(1) and allocates nothing in the steady state (a raw row kept allocates it).
 * Memory: one aggregate per active pattern-hour, and the raw rows waiting.
 */
export class Aggregator {
  /** Samples folded since the last seal. */
  unsealed = 0;
  /** Raw rows the budget chose that found no room while waiting for a seal. */
  rawDropped = 0;
  /** Samples folded into `{other}` because `maxPatterns` was reached. */
  patternOverflow = 0;
  /** Why the last refused sample was refused. */
  lastRefusal = '';

  /** Key → its series in this instance, by the one key → pattern cache (see `PatternCache`). */
  private readonly byKey: PatternCache<Series>;
  private readonly byPattern = new Map<string, Series>();
  private readonly byInstance = new Map<string, Map<string, Series>>();
  private readonly hours: HoursInMemory;
  /** Hold and wait inserts, done together (see `DeferredInserts`); {@link seal} does what is left. */
  private readonly inserts = new DeferredInserts();
  private pendingRaw: RawRow[] = [];
  private pendingGaps: { instance: string; row: GapRow }[] = [];
  private pendingRawInstance: string[] = [];
  /** Patterns of keys (templates, else learned), the renames learning makes, the pattern budget. */
  private readonly names: PatternNames;
  /** Where {@link fold} puts a sample's numbers for {@link foldAt}. */
  private readonly scratch = new Float64Array(SAMPLE_SLOTS);

  constructor(private readonly options: AggregatorOptions) {
    // Each pattern's current hour, the one before, and room for stragglers.
    this.hours = new HoursInMemory(options.maxPatterns * 3 + 64, options.budget);
    this.names = new PatternNames(options.templates, options.maxPatterns, (from) => this.renamed(from));
    this.byKey = new PatternCache(options.templates, (key) => this.seriesFor(options.instance, this.names.of(key), this.byPattern), KEY_CACHE_LIMIT, this.names.miner);
  }

  /**
   * {@link fold} for a recorder's `record()`: after close there is no room, and a
   * sample whose getter throws is an invalid one. Never throws.
   */
  foldSafely(sample: LockSample, closed: boolean): number {
    if (closed) return FOLD.noRoom;
    try {
      return this.fold(sample);
    } catch (error) {
      this.lastRefusal = `reading the sample threw: ${error instanceof Error ? error.message : String(error)}`;
      return FOLD.invalid;
    }
  }

  /** Folds one sample; returns a {@link FOLD} code. Never throws on a hostile sample (a throwing getter is the caller's to catch). */
  fold(sample: LockSample): number {
    const { key, at, holdMs, waitMs, ttlMs, attempts, outcome, threw, pattern, instance, extensions, censored, unconfirmed, renewal } = sample;
    if (!isTrustedSample(sample)) {
      const refusal = refusalOf(key, at, holdMs, waitMs, ttlMs, attempts, outcome, pattern, instance, extensions, censored, unconfirmed, renewal);
      if (refusal !== undefined) {
        this.lastRefusal = refusal;
        return FOLD.invalid;
      }
    }
    const series = this.seriesOf(key, pattern, instance);
    // A pattern seen only to expire (a cache, perhaps) must not be mixed into {other}'s locks: dropped, counted.
    if (unconfirmed === true && series.overflow) {
      this.lastRefusal = `no room for a new pattern (maxPatterns ${this.options.maxPatterns}) for an expiry on a pattern never seen released`;
      return FOLD.noRoom;
    }
    putNumbers(this.scratch, 0, at, holdMs, waitMs, ttlMs, attempts, outcomeCodeOf(outcome), threw, extensions);
    return this.foldAt(series, key, this.scratch, 0, censored === true, unconfirmed === true, renewal ?? undefined);
  }

  /** {@link fold} for a checked sample of this instance, its numbers at `offset` of `numbers`, with no pattern, `watch`'s or a lease's fields (see `SampleQueue`). */
  foldChecked(key: string, numbers: Float64Array, offset: number): number {
    return this.foldAt(this.ownSeriesOf(key), key, numbers, offset, false, false, undefined);
  }

  /** The fold of {@link fold} and {@link foldChecked}. The numbers come in a typed array (see `putNumbers`): as arguments, each fraction was boxed anew. */
  private foldAt(series: Series, key: string, n: Float64Array, offset: number, censored: boolean, unconfirmed: boolean, renewal: RenewalTimings | undefined): number {
    const threw = n[offset + 6] === 1;
    const code = n[offset + 7]!;
    const tsMs = Math.round(n[offset]!);
    let hour = series.current;
    // Most samples fall in their series' current hour: two comparisons, where the bucket's floating-point modulo costs more.
    if (hour === undefined || tsMs < hour.bucketStartMs || tsMs >= hour.bucketStartMs + BUCKET_MS) {
      hour = this.hours.of(series, tsMs - (((tsMs % BUCKET_MS) + BUCKET_MS) % BUCKET_MS));
      if (hour === undefined) {
        this.lastRefusal = `more than ${this.hours.max} (pattern, hour) aggregates in memory`;
        return FOLD.noRoom;
      }
    }
    // Whole µs, as `toMicros` gives them for the finite numbers they are here (checked, or the lock's own): written
    // out, because the call (not inlined into a fold this size) cost as much as the histogram inserts.
    const holdMs = n[offset + 1]!;
    const holdUs = Number.isNaN(holdMs) ? -1 : Math.max(0, Math.round(holdMs * 1000));
    // A wait not measured (`watch` sees no attempts): left out of the wait histogram, -1 in a raw row.
    const waitMs = n[offset + 2]!;
    const waitUs = Number.isNaN(waitMs) ? -1 : Math.max(0, Math.round(waitMs * 1000));
    const ttl = Math.round(n[offset + 3]!);
    const extended = Math.round(n[offset + 5]!);
    hour.count++;
    hour.outcomes[code]!++;
    if (threw) hour.threw++;
    if (unconfirmed) hour.unconfirmed++;
    if (holdUs >= 0) {
      hour.holdSumUs += holdUs;
      // A hold whose end was not seen goes to its own histogram: its true length is at least this.
      if (censored) (hour.censored ??= new PagedHistogram()).record(holdUs);
      else this.inserts.add(hour.hold, holdUs);
    }
    if (waitUs >= 0) {
      hour.waitSumUs += waitUs;
      // A wait of 0 (won at the first try) is an increment in the hour's own object: nothing to gain from putting it off.
      if (waitUs === 0) hour.wait.record(0);
      else this.inserts.add(hour.wait, waitUs);
    }
    if (tsMs < hour.firstTsMs) hour.firstTsMs = tsMs;
    if (tsMs > hour.lastTsMs) hour.lastTsMs = tsMs;
    if (extended > 0) {
      hour.extended++;
      hour.extensions += extended;
    }
    if (renewal !== undefined) (hour.lease ??= new LeaseFold()).fold(renewal);
    if (ttl === hour.ttl) hour.ttlCount++;
    else if (hour.ttlCount === 0) {
      hour.ttl = ttl;
      hour.ttlCount = 1;
    } else {
      const other = (hour.otherTtls ??= new Map());
      other.set(ttl, (other.get(ttl) ?? 0) + 1);
    }
    this.unsealed++;

    // The raw-row budget: every failure (up to a cap) now; the hour's slowest and a uniform sample when it ends.
    const budget = hour.budget;
    const rate = this.options.rawSampleRate;
    const keep = ((code !== 0 || threw) && budget.takeFailed()) || (rate > 0 && (rate >= 1 || Math.random() < rate));
    const slow = budget.isSlow(holdUs);
    const slot = budget.pickUniform();
    if (keep || slow || slot >= 0) {
      const flags = (code === 4 ? 1 : code) | ((threw ? 1 : 0) << 2) | (Math.round(n[offset + 4]!) * 8);
      const row: RawRow = [tsMs, key, series.pattern, holdUs, waitUs, ttl, flags, extended, code === 4 ? 1 : 0, censored && holdUs >= 0 ? 1 : 0];
      if (keep) {
        markWritten(row);
        this.pushRaw(row, series.instance);
      }
      if (slow) budget.addSlow(holdUs, row);
      if (slot >= 0) budget.putUniform(slot, row);
    }
    return FOLD.counted;
  }

  /**
   * Keeps a gap in what a door saw until the next seal; refused (false) when
   * malformed. Gaps are rare (a watcher's lost connection): at most 1,000 wait.
   */
  addGap(gap: ObservationGap): boolean {
    const { source, fromMs, toMs, reason, openHolds, instance } = gap ?? ({} as Partial<ObservationGap>);
    if (!isValidGap(source, fromMs, toMs, reason, openHolds, instance) || this.pendingGaps.length >= 1000) return false;
    const own = instance === undefined || instance === '' ? this.options.instance : truncate(instance, SAMPLE_LIMITS.maxInstanceLength);
    this.pendingGaps.push({ instance: own, row: [truncate(source!, 200), Math.round(fromMs!), Math.round(toMs!), truncate(reason!, 40), openHolds!] });
    return true;
  }

  /**
   * Takes what was folded since the last seal: one batch per instance with a
   * delta per pattern-hour that saw locks, and the raw rows kept. Hours that
   * ended a while ago are retired, adding their uniform sample; `final` retires
   * every hour (at close).
   */
  seal(nowMs: number, final = false): { batches: DeltaBatch[]; samples: number } {
    this.inserts.flush();
    const byInstance = new Map<string, DeltaBatch>();
    const batchOf = (instance: string) => {
      let batch = byInstance.get(instance);
      if (!batch) byInstance.set(instance, (batch = { instance, rollups: [], raw: [] }));
      return batch;
    };
    for (const hour of this.hours) {
      const touched = hour.count > 0;
      if (touched) batchOf(hour.series.instance).rollups.push(hour.seal());
      if (final || (!touched && hour.bucketStartMs + BUCKET_MS + RETIRE_AFTER_MS <= nowMs)) this.retire(hour, batchOf);
    }
    const raw = this.pendingRaw;
    const instances = this.pendingRawInstance;
    for (let i = 0; i < raw.length; i++) batchOf(instances[i]!).raw.push(raw[i]!);
    this.pendingRaw = [];
    this.pendingRawInstance = [];
    for (const { instance, row } of this.pendingGaps) (batchOf(instance).gaps ??= []).push(row);
    this.pendingGaps = [];
    const aliases = this.names.takeAliases();
    if (aliases) batchOf(this.options.instance).aliases = aliases;
    const samples = this.unsealed;
    this.unsealed = 0;
    return { batches: [...byInstance.values()], samples };
  }

  /** Reports (once per kind) the limits reached so far: the pattern cap, raw rows without room. */
  reportLimits(warnings: WarnOnce): void {
    if (this.patternOverflow > 0) {
      warnings.warn('pattern-overflow', `More than ${this.options.maxPatterns} key patterns; further ones are recorded as ${OVERFLOW_PATTERN}`);
    }
    if (this.rawDropped > 0) {
      warnings.warn(
        'buffer-full',
        `Raw rows found no room while waiting to be written (maxPendingRawRows ${this.options.maxPendingRawRows}); dropping raw rows — the rollups still count every lock`,
      );
    }
  }

  /** (pattern, hour) aggregates in memory: what bounds the aggregator's memory, with the raw rows waiting. */
  get hoursInMemory(): number {
    return this.hours.size;
  }

  /** Renames a seal carried that were dropped with it (no writer, a stream that never took it): sent with the next seal. */
  restoreAliases(batches: readonly DeltaBatch[]): void {
    for (const batch of batches) if (batch.aliases) this.names.restore(batch.aliases);
  }

  /** A provisional pattern of this instance was renamed: its hours in memory are no longer counted against the bound. */
  private renamed(from: string): void {
    const series = this.byPattern.get(from);
    // `{other}` stands in for patterns past the budget: renamed or not, it goes on taking samples.
    if (series && !series.overflow) this.hours.markRenamed(series);
  }

  /** Raw rows waiting for the next seal. */
  get pendingRawRows(): number {
    return this.pendingRaw.length;
  }

  private retire(hour: PatternHour, batchOf: (instance: string) => DeltaBatch): void {
    const rows = hour.budget.rowsAtEnd();
    if (rows.length > 0) {
      const raw = batchOf(hour.series.instance).raw;
      for (const row of rows) raw.push(row);
    }
    this.hours.remove(hour);
  }

  private pushRaw(row: RawRow, instance: string): void {
    if (this.pendingRaw.length >= this.options.maxPendingRawRows) {
      this.rawDropped++;
      return;
    }
    this.pendingRaw.push(row);
    this.pendingRawInstance.push(instance);
  }

  /** The series a sample belongs to: cached per key (derived pattern), per explicit pattern, or per foreign instance. */
  private seriesOf(key: string, explicit: string | undefined | null, instance: string | undefined | null): Series {
    const own = instance === undefined || instance === null || instance === '' || instance === this.options.instance;
    if (own && (explicit === undefined || explicit === null || explicit === '')) return this.ownSeriesOf(key);
    const name = own ? this.options.instance : truncate(instance, SAMPLE_LIMITS.maxInstanceLength);
    let map = own ? this.byPattern : this.byInstance.get(name);
    if (!map) this.byInstance.set(name, (map = new Map()));
    const pattern = explicit === undefined || explicit === null || explicit === '' ? this.names.of(key) : explicit;
    const series = map.get(pattern) ?? this.seriesFor(name, pattern, map);
    if (series.overflow && pattern !== OVERFLOW_PATTERN) this.patternOverflow++;
    return series;
  }

  /** The series of a key of this instance without an explicit pattern: cached per key (derived pattern). */
  private ownSeriesOf(key: string): Series {
    const series = this.byKey.get(key);
    // Every sample filed under `{other}` is counted, however its series was found.
    if (series.overflow === true) this.patternOverflow++;
    return series;
  }

  /** The series of (instance, pattern), created on first use; past `maxPatterns` patterns per instance, `{other}`'s (the caller counts the sample). */
  private seriesFor(instance: string, rawPattern: string, map: Map<string, Series>): Series {
    const existing = map.get(rawPattern);
    if (existing) return existing;
    const pattern = this.names.admit(instance, rawPattern);
    let series = map.get(pattern);
    if (!series) map.set(pattern, (series = new Series(instance, pattern)));
    map.set(rawPattern, series);
    return series;
  }
}
