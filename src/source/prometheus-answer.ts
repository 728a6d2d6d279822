import { MAX_PATTERN_LENGTH } from '../keys/pattern.js';
import { SAMPLE_LIMITS } from '../sample/check-sample.js';
import { truncate } from '../text.js';
import { HOUR_MS } from '../units.js';
import type { NativeHistogramJson } from './prometheus-client.js';
import type { SourceLeftOut } from './types.js';

/**
 * What a Prometheus server answered, checked before anything is read from it, as samples are checked
 * before they are stored: a server (or whatever answers at its URL) may send NaN, `+Inf`, negative
 * counts, `null` where a series should be, labels of 100 KB, points decades outside the window. Each
 * such value is left out and counted (`SourceLeftOut`), never thrown on, never read into a figure.
 */

/** A value per series and hour above this is no count of locks (2^40 in an hour: 300 million a second). */
export const MAX_COUNT = 2 ** 40;
/** Bucket bounds and hold times (s): the histograms' range, as for samples. */
export const MAX_DURATION_S = SAMPLE_LIMITS.maxDurationMs / 1000;
/** Hold-time sums (s): every lock of a count at the longest hold. */
export const MAX_SUM_S = MAX_COUNT * MAX_DURATION_S;
/** TTLs (s), as for samples. */
export const MAX_TTL_S = SAMPLE_LIMITS.maxTtlMs / 1000;

/** The window points are read in: hours that start at or after `firstHourMs` and before `endMs`. */
export interface HourWindow {
  firstHourMs: number;
  endMs: number;
}

/** A series as checked: the labels read (the pattern capped as a pattern is), and its points by the start of the hour each covers. */
export interface CheckedSeries {
  /** The pattern label's value, capped at MAX_PATTERN_LENGTH; undefined for a series without one. */
  pattern: string | undefined;
  /** A bucket's bound (s): Infinity for `+Inf`; undefined for a series that is no bucket. */
  le: number | undefined;
  /** The `outcome` label, if any. */
  outcome: string | undefined;
  /**
   * Hour start (ms), value, hour start, value…: each value finite, in [0, max]. Flat, in an object of one
   * shape for every series: 120,000 series as [t, v] pairs in objects spread from their labels took 98 MB.
   */
  values: number[];
  /** [hour start (ms), histogram]: its count and sum finite and in range (its buckets are checked by `parseNative`). */
  histograms: [number, NativeHistogramJson][];
}

/** How a result's series are checked: the pattern label, the largest value that makes sense, whether an `le` is needed. */
export interface SeriesRule {
  label: string;
  max: number;
  le?: boolean;
}

/** A result's series, checked: what is not of the API's shape, out of range or outside the window is counted in `leftOut`. */
export function checkSeries(result: readonly unknown[], rule: SeriesRule, window: HourWindow, leftOut: SourceLeftOut): CheckedSeries[] {
  /** Each [t, value] point that `take` reads a value from, timed in the window, to `keep`; the others counted. */
  const readPoints = <T>(points: unknown, take: (value: unknown) => T | undefined, keep: (start: number, value: T) => void) => {
    if (points === undefined) return;
    if (!Array.isArray(points)) return void leftOut.invalid++;
    for (const point of points as unknown[]) {
      const value = Array.isArray(point) && point.length === 2 ? take(point[1]) : undefined;
      const start = value === undefined ? null : hourStartOf((point as unknown[])[0]);
      if (value === undefined || start === null) leftOut.invalid++;
      else if (start === undefined || start < window.firstHourMs || start >= window.endMs) leftOut.outsideWindow++;
      else keep(start, value);
    }
  };
  const checked: CheckedSeries[] = [];
  for (const series of result) {
    const body = isObject(series) ? series : {};
    const labels = labelsOf(body.metric, rule);
    if (!labels) {
      // Every point of a series that cannot be read counts (or the series, when its points cannot be told either).
      const points = (Array.isArray(body.values) ? body.values.length : 0) + (Array.isArray(body.histograms) ? body.histograms.length : 0);
      leftOut.invalid += Math.max(1, points);
      continue;
    }
    const read: CheckedSeries = { pattern: labels.pattern, le: labels.le, outcome: labels.outcome, values: [], histograms: [] };
    readPoints(body.values, (value) => floatOf(value, rule.max), (start, value) => read.values.push(start, value));
    readPoints(body.histograms, nativeOf, (start, histogram) => read.histograms.push([start, histogram]));
    checked.push(read);
  }
  return checked;
}

/** A native histogram whose count and sum are in range (its buckets are checked by `parseNative`); undefined for anything else. */
function nativeOf(value: unknown): NativeHistogramJson | undefined {
  return isObject(value) && floatOf(value.count, MAX_COUNT) !== undefined && floatOf(value.sum, MAX_SUM_S) !== undefined ? (value as unknown as NativeHistogramJson) : undefined;
}

/** The renames an `OtelRecorder` exported (an instant vector of `pattern` → `learned`), checked and capped as patterns are. */
export function checkRenames(result: readonly unknown[], leftOut: SourceLeftOut): [string, string, number][] {
  const aliases: [string, string, number][] = [];
  for (const series of result) {
    const metric = isObject(series) && isObject(series.metric) ? series.metric : undefined;
    if (typeof metric?.pattern === 'string' && typeof metric.learned === 'string') {
      aliases.push([truncate(metric.pattern, MAX_PATTERN_LENGTH), truncate(metric.learned, MAX_PATTERN_LENGTH), 0]);
    } else leftOut.invalid++;
  }
  return aliases;
}

/** A count or bound the API writes as a string: finite, in [0, max]; undefined for anything else. */
export function floatOf(text: unknown, max: number): number | undefined {
  if (typeof text !== 'string') return undefined;
  const value = Number(text);
  return text.trim() !== '' && value >= 0 && value <= max ? value : undefined;
}

/**
 * The labels read of a series whose label values are all strings (own ones only: a `--pattern-label` of
 * `constructor` is a label like another); undefined for anything else, or for a bucket without a bound.
 */
function labelsOf(metric: unknown, rule: SeriesRule): Pick<CheckedSeries, 'pattern' | 'le' | 'outcome'> | undefined {
  if (!isObject(metric)) return undefined;
  for (const value of Object.values(metric)) if (typeof value !== 'string') return undefined;
  const own = (name: string) => (Object.hasOwn(metric, name) ? (metric[name] as string) : undefined);
  const pattern = own(rule.label);
  // A bucket's bound: `+Inf`, or a duration the histograms can hold (a bound of 1e300 s made "p99 > Infinity min").
  const bound = own('le');
  const le = bound === '+Inf' ? Infinity : floatOf(bound, MAX_DURATION_S);
  if (rule.le && le === undefined) return undefined;
  return { pattern: pattern === undefined ? undefined : truncate(pattern, MAX_PATTERN_LENGTH), le, outcome: own('outcome') };
}

/**
 * The start of the hour a point covers (a value at t is the hour (t − 1 h, t]), in ms; undefined for a
 * time no Date can hold (1e20 s: an hour added to it changes nothing), null for no number at all.
 */
function hourStartOf(t: unknown): number | null | undefined {
  if (typeof t !== 'number' || !Number.isFinite(t)) return null;
  const ms = Math.round(t * 1000);
  if (Math.abs(ms) > MAX_DATE_MS) return undefined;
  return Math.ceil(ms / HOUR_MS) * HOUR_MS - HOUR_MS;
}

/** The largest time a `Date` holds (ms from 1970). */
const MAX_DATE_MS = 8.64e15;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
