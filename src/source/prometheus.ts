import { globMatcher } from '../keys/glob.js';
import { OUTCOMES, type Outcome } from '../sample/sample.js';
import { encodeRollup } from '../store/histogram/codec.js';
import { Histogram } from '../store/histogram/histogram.js';
import { HOUR_MS } from '../units.js';
import { MAX_COUNT, MAX_SUM_S, MAX_TTL_S, checkRenames, checkSeries, type CheckedSeries } from './prometheus-answer.js';
import type { PrometheusClient } from './prometheus-client.js';
import { hourlyBuckets, hourlyCounter, hourlyGauge, hourlyNative, metricNames, labelName, renames } from './promql.js';
import { parseNative } from './native.js';
import { locksByLabel, readAsPatterns } from './pattern-budget.js';
import type { BucketLayout, SourceBucket, SourceData, SourceHourRow, SourceLeftOut, SourcePattern } from './types.js';

/** Options of {@link readPrometheus}. */
export interface PrometheusReadOptions {
  /** The window (epoch ms); hours are whole, as the samples database's are. */
  sinceMs: number;
  untilMs: number;
  /** A team's own hold-time histogram (seconds). @default ours, in either spelling */
  metric?: string | undefined;
  /** The label that names the key pattern. @default 'pattern' */
  patternLabel?: string | undefined;
  /** Globs over pattern names; none means every pattern. */
  patterns?: readonly string[] | undefined;
}

/** Per pattern and hour: what the queries said. */
interface Hour {
  buckets: Map<number, number>;
  native: SourceBucket[] | undefined;
  nativeCount: number;
  holdSumS: number;
  wait: Map<number, number>;
  outcomes: Map<string, number>;
  ttlS: number | undefined;
}

/**
 * Reads the hold-time histograms (classic or native), the outcomes and the TTL in use from a
 * Prometheus-compatible API, per pattern and hour, into the store's rollup layout: each bucket's
 * count sits at the bucket's upper bound, so every percentile read from it is at or above the
 * truth, and the bucket it falls in is its resolution. Counts are exact (see `hourlyGrowth`).
 */
export async function readPrometheus(client: PrometheusClient, options: PrometheusReadOptions): Promise<SourceData> {
  const names = metricNames(options.metric);
  const label = labelName(options.patternLabel ?? 'pattern');
  const firstHour = Math.floor(options.sinceMs / HOUR_MS) * HOUR_MS;
  const endHour = Math.max(firstHour + HOUR_MS, Math.ceil(options.untilMs / HOUR_MS) * HOUR_MS);
  // Evaluated at each hour's end: a value at t is the hour (t − 1 h, t].
  const range = (promql: string) => client.queryRange(promql, firstHour + HOUR_MS, endHour, HOUR_MS / 1000);
  // Only what the API's shape, the ranges and the window allow is read; the rest is counted, to be said.
  // Each answer is checked as it comes, then let go: parsed, an answer takes several times its text.
  const leftOut: SourceLeftOut = { outsideWindow: 0, invalid: 0 };
  const window = { firstHourMs: firstHour, endMs: endHour };
  const checked = (max: number, le = false) => (result: readonly unknown[]) => checkSeries(result, { label, max, le }, window, leftOut);
  const [classic, native, sums, outcomes, wait, ttl, aliases] = await Promise.all([
    range(hourlyBuckets(names.hold, label)).then(checked(MAX_COUNT, true)),
    range(hourlyNative(names.hold, label)).then(checked(MAX_COUNT)),
    range(hourlyCounter(`${names.hold}_sum`, label)).then(checked(MAX_SUM_S)),
    names.outcomes ? range(hourlyCounter(names.outcomes, label, 'outcome')).then(checked(MAX_COUNT)) : [],
    names.wait ? range(hourlyBuckets(names.wait, label)).then(checked(MAX_COUNT, true)) : [],
    names.ttl ? range(hourlyGauge(names.ttl, label)).then(checked(MAX_TTL_S)) : [],
    names.renamed ? client.query(renames(names.renamed, (options.untilMs - options.sinceMs) / 1000), options.untilMs).then((r) => checkRenames(r, leftOut)) : [],
  ]);

  // Series exported before their position was learned (`lock:user:anna`, then `lock:user:{id}`) read as one
  // pattern; the patterns asked for (`--pattern`) only; within a samples file's pattern budget.
  const labels = new Set<string>();
  for (const result of [classic, native, sums, outcomes, wait, ttl]) for (const series of result) if (series.pattern !== undefined) labels.add(series.pattern);
  const matchers = (options.patterns ?? []).map(globMatcher);
  const locks = locksByLabel({ holds: classic.filter((s) => s.le === Infinity), native, outcomes });
  const { readAs, overBudget } = readAsPatterns(labels, locks, aliases, (p) => matchers.length === 0 || matchers.some((m) => m(p)));
  leftOut.overBudget = overBudget;

  const hours = new Map<string, Map<number, Hour>>();
  const hourOf = (series: CheckedSeries, start: number): Hour => {
    const pattern = readAs.get(series.pattern!)!;
    let byHour = hours.get(pattern);
    if (!byHour) hours.set(pattern, (byHour = new Map()));
    let hour = byHour.get(start);
    if (!hour) byHour.set(start, (hour = { buckets: new Map(), native: undefined, nativeCount: 0, holdSumS: 0, wait: new Map(), outcomes: new Map(), ttlS: undefined }));
    return hour;
  };
  const read = (series: CheckedSeries) => series.pattern !== undefined && readAs.has(series.pattern);
  const each = (result: CheckedSeries[], visit: (hour: Hour, value: number, series: CheckedSeries) => void) => {
    for (const series of result) if (read(series)) for (let i = 0; i < series.values.length; i += 2) visit(hourOf(series, series.values[i]!), series.values[i + 1]!, series);
  };
  each(classic, (h, v, s) => void h.buckets.set(s.le!, (h.buckets.get(s.le!) ?? 0) + v));
  each(sums, (h, v) => void (h.holdSumS += v));
  each(outcomes, (h, v, s) => void h.outcomes.set(s.outcome ?? '', (h.outcomes.get(s.outcome ?? '') ?? 0) + v));
  each(wait, (h, v, s) => void h.wait.set(s.le!, (h.wait.get(s.le!) ?? 0) + v));
  each(ttl, (h, v) => void (h.ttlS = Math.max(h.ttlS ?? 0, v)));
  let nativeSchema: number | undefined;
  for (const series of native) {
    if (!read(series)) continue;
    for (const [start, histogram] of series.histograms) {
      const parsed = parseNative(histogram);
      leftOut.invalid += parsed.invalid;
      const hour = hourOf(series, start);
      // Several series may be read as one pattern: their buckets add up.
      hour.native = hour.native === undefined ? parsed.buckets : addBuckets(hour.native, parsed.buckets);
      hour.nativeCount += parsed.count;
      hour.holdSumS += parsed.sum;
      nativeSchema ??= parsed.schema;
    }
  }

  const patterns: SourcePattern[] = [];
  for (const [pattern, byHour] of [...hours].sort(([a], [b]) => a.localeCompare(b))) {
    const isNative = [...byHour.values()].some((h) => h.native !== undefined) && [...byHour.values()].every((h) => h.buckets.size === 0);
    const layout: BucketLayout = isNative ? { kind: 'native', schema: nativeSchema ?? 0 } : { kind: 'classic', boundsMs: finiteBounds(byHour) };
    const total = new Map<string, SourceBucket>();
    const rows: SourceHourRow[] = [];
    for (const [start, hour] of [...byHour].sort(([a], [b]) => a - b)) {
      const holdBuckets = isNative ? (hour.native ?? []) : differentiate(hour.buckets);
      for (const b of holdBuckets) {
        const key = `${b.lowMs}:${b.highMs}`;
        const sum = total.get(key);
        if (sum) sum.count += b.count;
        else total.set(key, { ...b });
      }
      const row = hourRow(start, hour, holdBuckets, differentiate(hour.wait), Math.min(start + HOUR_MS, options.untilMs));
      if (row) rows.push(row);
    }
    if (rows.length === 0) continue;
    patterns.push({ pattern, rows, holdBuckets: [...total.values()].filter((b) => b.count > 0).sort((a, b) => a.highMs - b.highMs), layout });
  }
  return { source: client.displayUrl, patterns, leftOut };
}

/** Two bucket lists as one: counts of the same bounds added, in ascending order. */
function addBuckets(a: readonly SourceBucket[], b: readonly SourceBucket[]): SourceBucket[] {
  const sum = new Map<string, SourceBucket>();
  for (const bucket of [...a, ...b]) {
    const key = `${bucket.lowMs}:${bucket.highMs}`;
    const seen = sum.get(key);
    if (seen) seen.count += bucket.count;
    else sum.set(key, { ...bucket });
  }
  return [...sum.values()].sort((x, y) => x.highMs - y.highMs || x.lowMs - y.lowMs);
}

/** Cumulative `le` counts → per-bucket counts (lowMs, highMs], rounded (they are whole; floats carry them). */
function differentiate(cumulative: Map<number, number>): SourceBucket[] {
  const bounds = [...cumulative.keys()].sort((a, b) => a - b);
  const buckets: SourceBucket[] = [];
  let below = 0;
  let lowMs = 0;
  for (const le of bounds) {
    const at = Math.max(below, Math.round(cumulative.get(le)!));
    if (at > below) buckets.push({ lowMs, highMs: le * 1000, count: at - below });
    below = at;
    lowMs = le * 1000;
  }
  return buckets;
}

function finiteBounds(byHour: Map<number, Hour>): number[] {
  const bounds = new Set<number>();
  for (const hour of byHour.values()) for (const le of hour.buckets.keys()) if (Number.isFinite(le)) bounds.add(le * 1000);
  return [...bounds].sort((a, b) => a - b);
}

/**
 * One hour as a rollup row. A bucket's count is recorded at its upper bound (µs); `+Inf`'s at the
 * last finite bound (the p99's bucket says the rest). Expired locks' holds are censored (each held
 * at least its TTL; the histogram cannot say which bucket holds them): taken from the top buckets.
 */
function hourRow(start: number, h: Hour, holdBuckets: SourceBucket[], waitBuckets: SourceBucket[], endMs: number): SourceHourRow | undefined {
  const hold = new Histogram();
  const censored = new Histogram();
  const wait = new Histogram();
  let expiredLeft = Math.round(h.outcomes.get('expired') ?? 0);
  for (let i = holdBuckets.length - 1; i >= 0; i--) {
    const b = holdBuckets[i]!;
    const valueUs = Math.round((Number.isFinite(b.highMs) ? b.highMs : b.lowMs) * 1000);
    const asCensored = Math.min(expiredLeft, b.count);
    expiredLeft -= asCensored;
    if (asCensored > 0) censored.record(valueUs, asCensored);
    if (b.count > asCensored) hold.record(valueUs, b.count - asCensored);
  }
  for (const b of waitBuckets) wait.record(Math.round((Number.isFinite(b.highMs) ? b.highMs : b.lowMs) * 1000), b.count);
  const holdCount = hold.totalCount + censored.totalCount;
  const outcome = (name: Outcome) => Math.round(h.outcomes.get(name) ?? 0);
  // Without an outcomes counter (a team's histogram, or none scraped that hour) every hold counts as released.
  const counted = OUTCOMES.reduce((n, o) => n + outcome(o), 0);
  const attempts = Math.max(counted, holdCount);
  if (attempts === 0) return undefined;
  const ttls = new Map<number, number>();
  if (h.ttlS !== undefined && h.ttlS > 0) ttls.set(Math.round(h.ttlS * 1000), Math.max(1, holdCount));
  const released = counted > 0 ? outcome('released') : holdCount;
  const hists = encodeRollup(hold, wait, ttls, censored);
  return [start, attempts, released, outcome('expired'), outcome('not_acquired'), outcome('error'), 0, Math.round(h.holdSumS * 1e6), 0, start, Math.max(start, endMs), hists, 0, 0, outcome('lost'), 0];
}
