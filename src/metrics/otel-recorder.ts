import type { PatternAlias } from '../keys/miner.js';
import { MAX_PATTERN_LENGTH, OVERFLOW_PATTERN } from '../keys/pattern.js';
import { isTrustedSample, refusalOf } from '../sample/check-sample.js';
import { LearnedPatterns } from '../sample/learned-patterns.js';
import { latenessOf } from '../sample/libraries.js';
import { OUTCOMES, type LockSample, type Outcome, type SampleRecorder } from '../sample/sample.js';
import { WarnOnce } from '../sample/warn-once.js';
import { truncate } from '../text.js';
import { DURATION_BUCKETS_S, INSTRUMENTS, METRIC_SOURCES, type MetricSource } from './instruments.js';
import { instrumentFrom, resolveOtelOptions, type OtelRecorderOptions, type OtelWarningKind } from './otel-options.js';
import type { MetricAttributes, OtelCounter, OtelHistogram, OtelObservableGauge, OtelObservableResult } from './otel-types.js';

/** What an {@link OtelRecorder} did with the samples it was given. */
export interface OtelRecorderStats {
  /** Samples recorded into the instruments. */
  recorded: number;
  /** Samples refused as invalid (counted, never thrown). */
  dropped: number;
  /** Samples whose pattern came past `maxPatterns`, recorded as `{other}`. */
  patternOverflow: number;
  /** Samples the meter failed to take (its instruments threw). */
  failed: number;
}

/** The attribute objects of one pattern and source, made once: the SDK keys its series by them. */
class Series {
  readonly attributes: MetricAttributes;
  readonly byOutcome: Record<Outcome, MetricAttributes>;
  ttlSeconds = Number.NaN;

  constructor(pattern: string, source: MetricSource) {
    this.attributes = { pattern, source };
    this.byOutcome = {} as Record<Outcome, MetricAttributes>;
    for (const outcome of OUTCOMES) this.byOutcome[outcome] = { pattern, source, outcome };
  }
}

/**
 * A recorder that emits every sample through OpenTelemetry metrics: hold, wait and renewal-lateness
 * histograms in seconds, outcome counts and the TTL in use, with the key's pattern, the outcome and the
 * door as the only attributes. The recorder contract holds: `record()` is synchronous, never throws and
 * keeps bounded memory (one set of attribute objects per pattern, at most `maxPatterns` of them). It
 * loads `@opentelemetry/api` only when made without a `meter`; compose it with a `SqliteRecorder` by
 * passing both as `recorder: [sqlite, otel]`.
 * @example
 * const recorder = [new SqliteRecorder(), new OtelRecorder({ patterns: ['order:lock:{id}'] })];
 * await withLock(redis, `order:lock:${id}`, createOrder, { ttlMs: 10_000, recorder });
 */
export class OtelRecorder implements SampleRecorder {
  private readonly hold: OtelHistogram;
  private readonly wait: OtelHistogram;
  private readonly lateness: OtelHistogram;
  private readonly outcomes: OtelCounter;
  private readonly ttl: OtelObservableGauge;
  private readonly observeTtl = (result: OtelObservableResult) => this.observeTtls(result);
  private readonly renamed: OtelObservableGauge;
  /** Provisional pattern → learned, exported so that a Prometheus source reads the old series as the learned one. */
  private readonly renames = new Map<string, MetricAttributes>();
  private readonly observeRenames = (result: OtelObservableResult) => {
    for (const attributes of this.renames.values()) result.observe(1, attributes);
  };
  private readonly patternOf: LearnedPatterns;
  private readonly series = new Map<string, Series[]>();
  private readonly source: MetricSource;
  private readonly sourceIndex: number;
  private readonly maxPatterns: number;
  private readonly warnings: WarnOnce<OtelWarningKind>;
  private readonly counts: OtelRecorderStats = { recorded: 0, dropped: 0, patternOverflow: 0, failed: 0 };

  constructor(options: OtelRecorderOptions = {}) {
    const { meter, maxPatterns, source, templates, onWarning } = resolveOtelOptions(options);
    this.maxPatterns = maxPatterns;
    this.source = source;
    this.sourceIndex = METRIC_SOURCES.indexOf(source);
    // A position learned renames nothing already exported: a series' name never changes under a dashboard. A lock keyed by
    // names shows under its first names (at most `literalValues` of the miner) until its position is learned, then under
    // its pattern; a Prometheus source reads them back as one (see `learnNames`).
    this.patternOf = new LearnedPatterns(templates, (aliases) => this.rename(aliases));
    this.warnings = new WarnOnce<OtelWarningKind>(undefined, onWarning);
    const advice = { explicitBucketBoundaries: [...DURATION_BUCKETS_S] };
    const { hold, wait, lateness, outcomes, ttl, renamed } = INSTRUMENTS;
    this.hold = instrumentFrom(meter, 'createHistogram', hold.name, { unit: hold.unit, description: hold.description, advice });
    this.wait = instrumentFrom(meter, 'createHistogram', wait.name, { unit: wait.unit, description: wait.description, advice });
    this.lateness = instrumentFrom(meter, 'createHistogram', lateness.name, { unit: lateness.unit, description: lateness.description, advice });
    this.outcomes = instrumentFrom(meter, 'createCounter', outcomes.name, { unit: outcomes.unit, description: outcomes.description });
    this.ttl = instrumentFrom(meter, 'createObservableGauge', ttl.name, { unit: ttl.unit, description: ttl.description });
    this.renamed = instrumentFrom(meter, 'createObservableGauge', renamed.name, { unit: renamed.unit, description: renamed.description });
    // Callbacks only once every instrument was made: a refused meter is left with none of ours.
    this.ttl.addCallback(this.observeTtl);
    this.renamed.addCallback(this.observeRenames);
  }

  /** Records one sample. Never throws: an invalid sample is counted and said once. */
  record(sample: LockSample): void {
    try {
      this.recordOrThrow(sample);
    } catch (error) {
      this.counts.failed++;
      this.warnings.warn('meter-failed', `OtelRecorder: the meter failed to take a sample (${(error as Error)?.message ?? String(error)}); counted in stats().failed`, error);
    }
  }

  /** What was recorded, refused and folded into `{other}` so far. */
  stats(): OtelRecorderStats {
    return { ...this.counts };
  }

  /** Stops reporting the TTL gauge; the instruments' data stays with the meter provider. */
  close(): void {
    this.ttl.removeCallback(this.observeTtl);
    this.renamed.removeCallback(this.observeRenames);
  }

  /**
   * Patterns renamed as a position was learned: their series are never renamed under a dashboard, but they
   * take no more room in `maxPatterns` (nothing new is recorded under them), and the rename is exported.
   */
  private rename(aliases: readonly PatternAlias[]): void {
    for (const { from, to } of aliases) {
      this.series.delete(from);
      if (this.renames.size < MAX_EXPORTED_RENAMES || this.renames.has(from)) this.renames.set(from, { pattern: from, learned: to });
    }
  }

  private recordOrThrow(sample: LockSample): void {
    if (sample === null || typeof sample !== 'object') return this.refuse('a sample must be an object');
    const { key, holdMs, waitMs, ttlMs, outcome, renewal } = sample;
    if (!isTrustedSample(sample)) {
      const { at, attempts, pattern, instance, extensions, censored, unconfirmed } = sample;
      const refusal = refusalOf(key, at, holdMs, waitMs, ttlMs, attempts, outcome, pattern, instance, extensions, censored, unconfirmed, renewal);
      if (refusal !== undefined) return this.refuse(refusal);
    }
    const series = this.seriesOf(sample.pattern ? truncate(sample.pattern, MAX_PATTERN_LENGTH) : this.patternOf.get(key));
    if (typeof holdMs === 'number') this.hold.record(holdMs / 1000, series.attributes);
    if (typeof waitMs === 'number') this.wait.record(waitMs / 1000, series.attributes);
    const periodMs = renewal?.periodMs;
    if (typeof periodMs === 'number') {
      for (const gapMs of renewal!.gapsMs) this.lateness.record(latenessOf(gapMs, periodMs) / 1000, series.attributes);
    }
    this.outcomes.add(1, series.byOutcome[outcome]);
    series.ttlSeconds = ttlMs / 1000;
    this.counts.recorded++;
  }

  /** The series of a pattern for this recorder's source; past `maxPatterns` distinct patterns, `{other}`'s. */
  private seriesOf(pattern: string): Series {
    let bySource = this.series.get(pattern);
    if (!bySource) {
      if (this.series.size >= this.maxPatterns && pattern !== OVERFLOW_PATTERN) {
        this.counts.patternOverflow++;
        this.warnings.warn('pattern-overflow', `OtelRecorder: more than ${this.maxPatterns} patterns; the rest are recorded as ${OVERFLOW_PATTERN} (raise maxPatterns, or give patterns)`);
        return this.seriesOf(OVERFLOW_PATTERN);
      }
      bySource = [];
      this.series.set(pattern, bySource);
    }
    return (bySource[this.sourceIndex] ??= new Series(pattern, this.source));
  }

  private refuse(reason: string): void {
    this.counts.dropped++;
    this.warnings.warn('invalid-sample', `OtelRecorder: dropped an invalid sample: ${reason}`);
  }

  private observeTtls(result: OtelObservableResult): void {
    for (const bySource of this.series.values()) {
      for (const series of bySource) if (series && series.ttlSeconds === series.ttlSeconds) result.observe(series.ttlSeconds, series.attributes);
    }
  }
}

/** Renames exported at most (a miner makes at most `literalValues` per position it learns). */
const MAX_EXPORTED_RENAMES = 10_000;
