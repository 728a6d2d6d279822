import { ConfigError } from '../errors.js';
import { SERIES_NAMES } from '../metrics/instruments.js';

/**
 * The PromQL that `--prometheus` sends, built in one place. Metric names are ours (both the SDK
 * exporter's and the Collector's `_seconds` spelling) unless a team names its own histogram.
 */

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The series names `--prometheus` reads, as RE2 alternatives (anchored by Prometheus). */
export interface MetricNames {
  /** The hold histogram's base name, without `_bucket`: `ttl_advisor_lock_hold_duration(?:_seconds)?`. */
  hold: string;
  /** Ours only: the wait histogram, the outcomes counter and the TTL gauge (a team's own histogram has none). */
  wait?: string;
  outcomes?: string;
  ttl?: string;
  /** Ours only: the patterns an `OtelRecorder` exported before a position was learned, and what they are read as. */
  renamed?: string;
}

/** Ours: each spelling an exporter may have given our instruments (the one table of them is metrics/instruments.ts). */
export const OUR_METRICS: Readonly<Required<MetricNames>> = Object.freeze({
  hold: SERIES_NAMES.hold.either,
  wait: SERIES_NAMES.wait.either,
  outcomes: SERIES_NAMES.outcomes.either,
  ttl: SERIES_NAMES.ttl.either,
  renamed: SERIES_NAMES.renamed.either,
});

/** The names for `--metric <name>`: a team's own hold-time histogram in seconds (`_bucket`, `_count`, `_sum`, or native). */
export function metricNames(metric: string | undefined): MetricNames {
  if (metric === undefined) return OUR_METRICS;
  const base = metric.replace(/_(bucket|count|sum)$/, '');
  if (!METRIC_NAME.test(base)) throw new ConfigError(`Expected --metric to be a Prometheus metric name, got \`${metric}\``);
  return { hold: base };
}

/** Checks a `--pattern-label`. */
export function labelName(label: string): string {
  if (!LABEL_NAME.test(label)) throw new ConfigError(`Expected --pattern-label to be a Prometheus label name, got \`${label}\``);
  return label;
}

/** The instant selector of every series whose name matches `names` (an RE2 alternative). */
export function selector(names: string): string {
  return `{__name__=~"${names}"}`;
}

/**
 * A counter's growth in the hour before each evaluation time, per series, EXACT where PromQL's
 * `increase()` is not: `increase()` extrapolates to the range's edges (a counter read 3 → 10 in
 * an hour gives about 7.2, a series born within the hour is counted from its first scrape, not
 * from 0). Here: the last value this hour minus the last value of the hour before — or minus 0
 * for a series that had none then (born this hour: our counters start at 0, so nothing is lost).
 * The hours then add up to exactly the counter's growth over the window. Only a series that reset
 * (a restarted process) within the hour falls back to `increase()`.
 */
export function hourlyGrowth(series: string): string {
  const last = `last_over_time(${series}[1h])`;
  return `((${last} - (last_over_time(${series}[1h] offset 1h) or ${last} * 0)) unless resets(${series}[1h]) > 0) or increase(${series}[1h])`;
}

/** Per hour: a classic histogram's buckets by `le` and pattern. */
export function hourlyBuckets(names: string, patternLabel: string): string {
  return `sum by (le, ${patternLabel}) (${hourlyGrowth(selector(`${names}_bucket`))})`;
}

/** Per hour: a counter's growth by pattern (and `extra` labels). */
export function hourlyCounter(names: string, patternLabel: string, extra = ''): string {
  return `sum by (${patternLabel}${extra ? `, ${extra}` : ''}) (${hourlyGrowth(selector(names))})`;
}

/** Per hour: a native histogram's growth by pattern (`increase()`: native counts are rounded). */
export function hourlyNative(names: string, patternLabel: string): string {
  return `sum by (${patternLabel}) (increase(${selector(names)}[1h]))`;
}

/** Over the window: each rename an `OtelRecorder` exported (`pattern` → `learned`), whatever the process. */
export function renames(names: string, windowS: number): string {
  return `max by (pattern, learned) (max_over_time(${selector(names)}[${Math.max(3600, Math.ceil(windowS))}s]))`;
}

/** Per hour: the TTL gauge's last value by pattern (seconds). */
export function hourlyGauge(names: string, patternLabel: string): string {
  return `max by (${patternLabel}) (last_over_time(${selector(names)}[1h]))`;
}
