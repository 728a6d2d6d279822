import { ConfigError } from '../errors.js';
import { formatMs } from '../report/format.js';
import { DenseHistogram, addEncodedRollup } from '../record/histogram.js';
import type { Outcome } from '../record/sample.js';
import { BUCKET_MS, openForReading, schemaVersionOf } from '../record/schema.js';
import { minSamplesForQuantile, upperBoundRank } from './confidence.js';
import { TOO_LONG_FACTOR, recommendTtl, resolveRecommendationPolicy, type RecommendationPolicy } from './recommend.js';

/**
 * What a pattern's numbers say about its TTL, worst first:
 * - `expired`: a lock was lost in production (critical);
 * - `too-short`: the current TTL is below the recommendation;
 * - `too-long`: the current TTL is more than 3× the recommendation (a crashed holder blocks others needlessly);
 * - `ok`;
 * - `insufficient-data`: too few samples for a p99 claim at 95 % confidence.
 */
export type Verdict = 'expired' | 'too-short' | 'too-long' | 'ok' | 'insufficient-data';

export const VERDICTS: readonly Verdict[] = Object.freeze(['expired', 'too-short', 'too-long', 'ok', 'insufficient-data']);

/** Options of {@link analyze}. */
export interface AnalyzeOptions extends Partial<RecommendationPolicy> {
  /** Only samples from this time on (epoch ms; rounded down to the hour bucket). */
  sinceMs?: number | undefined;
  /** Only samples before this time (epoch ms; rounded up to the hour bucket). */
  untilMs?: number | undefined;
  /** Only patterns matching one of these globs (`*` any run of characters, `?` one character). */
  patterns?: readonly string[] | undefined;
  /** The time the analysis is made, for `generatedAt`. @default Date.now() */
  nowMs?: number | undefined;
}

export interface HourlyPoint {
  /** Start of the hour, epoch ms. */
  hourStartMs: number;
  count: number;
  p99Ms: number;
}

export interface DistributionBin {
  lowMs: number;
  highMs: number;
  count: number;
}

/** Everything the report says about one key pattern. */
export interface PatternAnalysis {
  pattern: string;
  /** Acquisition attempts of every outcome. */
  count: number;
  /** Acquisitions that won the lock and have a hold time. */
  holdCount: number;
  holdMs: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  waitMs: { p50: number; p99: number };
  outcomes: Record<Outcome, number>;
  /** Critical sections that threw. */
  threw: number;
  /** The TTL in use: the most common value, and the range seen (ms). */
  ttl: { currentMs: number; minMs: number; maxMs: number };
  firstMs: number;
  lastMs: number;
  /** 95 % upper confidence bound of the hold-time p99 (ms); absent below {@link MIN_SAMPLES_FOR_P99} samples. */
  p99UpperBoundMs: number | undefined;
  recommendedTtlMs: number;
  verdict: Verdict;
  /** Readable notes: contention, few samples, expirations. */
  hints: string[];
  hourly: HourlyPoint[];
  /** The hold-time distribution in log-spaced bins, for charts. */
  distribution: DistributionBin[];
}

export interface Analysis {
  generatedAtMs: number;
  /** The data's extent within the requested window (epoch ms); both 0 when there is no data. */
  window: { fromMs: number; toMs: number };
  requested: { sinceMs: number | undefined; untilMs: number | undefined };
  policy: RecommendationPolicy;
  sources: string[];
  /** Worst verdict first, then by sample count. */
  patterns: PatternAnalysis[];
  warnings: string[];
}

/** Below this many samples a p99 claim does not hold at 95 % confidence. */
export const MIN_SAMPLES_FOR_P99 = minSamplesForQuantile(0.99, 0.95);

/** A wait p99 above this (ms), or more than {@link CONTENTION_NOT_ACQUIRED_RATE} failed acquisitions, suggests a too-broad key. */
export const CONTENTION_WAIT_P99_MS = 100;
export const CONTENTION_NOT_ACQUIRED_RATE = 0.01;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

// Rows are read as arrays (.raw()): building an object per row costs more than the rest of the work.
type RollupRow = [
  bucketStartMs: number,
  count: number,
  released: number,
  expired: number,
  notAcquired: number,
  error: number,
  threw: number,
  holdSumUs: number,
  firstTsMs: number,
  lastTsMs: number,
  hists: Buffer,
];

/**
 * Reads the rollups of one or more samples databases and computes, per key
 * pattern, the hold-time percentiles and the recommended TTL
 * = max(floor, multiplier × p99) rounded up to a step. Costs grow with
 * patterns × hours (× instances for files older than schema 4), not with samples.
 *
 * Throws {@link DatabaseError} for a missing, foreign or newer database and
 * {@link ConfigError} for invalid options.
 */
export function analyze(dbPaths: readonly string[], options: AnalyzeOptions = {}): Analysis {
  const policy = resolveRecommendationPolicy(options);
  if (dbPaths.length === 0) throw new ConfigError('Expected at least one samples database');
  const { sinceMs, untilMs } = options;
  if (sinceMs !== undefined && untilMs !== undefined && sinceMs >= untilMs) {
    throw new ConfigError(`Expected \`since\` (${new Date(sinceMs).toISOString()}) to be before \`until\` (${new Date(untilMs).toISOString()})`);
  }
  const matchers = (options.patterns ?? []).map(globToRegExp);
  const fromBucket = sinceMs === undefined ? Number.MIN_SAFE_INTEGER : Math.floor(sinceMs / BUCKET_MS) * BUCKET_MS;
  const toBucket = untilMs === undefined ? Number.MAX_SAFE_INTEGER : Math.ceil(untilMs / BUCKET_MS) * BUCKET_MS;

  // Open every database first, so a bad one fails before any work.
  const dbs = dbPaths.map((path) => openForReading(path));
  const patterns: PatternAnalysis[] = [];
  try {
    const sources = dbs.map((db) => ({
      ids: new Map(
        (db.prepare('SELECT id, pattern FROM patterns').all() as { id: number; pattern: string }[]).map((r) => [r.pattern, r.id]),
      ),
      // Since schema 4, one row per (pattern, hour) summed over instances: a fleet reads as fast as one process.
      rows: db.prepare(
        `SELECT bucket_start_ms, count, released, expired, not_acquired, error, threw, hold_sum_us,
                first_ts_ms, last_ts_ms, hists
           FROM ${schemaVersionOf(db) >= 4 ? 'fleet_rollups' : 'rollups'}
          WHERE pattern_id = ? AND bucket_start_ms >= ? AND bucket_start_ms < ?
          ORDER BY bucket_start_ms`,
      ).raw(true),
    }));
    const names = [...new Set(sources.flatMap((s) => [...s.ids.keys()]))]
      .filter((name) => matchers.length === 0 || matchers.some((m) => m.test(name)))
      .sort();
    // One pattern at a time, so memory holds one pattern's rollups, however long the window.
    for (const name of names) {
      const rows: RollupRow[] = [];
      for (const source of sources) {
        const id = source.ids.get(name);
        if (id !== undefined) rows.push(...(source.rows.all(id, fromBucket, toBucket) as RollupRow[]));
      }
      if (rows.length > 0) patterns.push(summarize(name, rows, policy));
    }
  } finally {
    for (const db of dbs) db.close();
  }

  patterns.sort(
    (a, b) => VERDICTS.indexOf(a.verdict) - VERDICTS.indexOf(b.verdict) || b.count - a.count || a.pattern.localeCompare(b.pattern),
  );

  const fromMs = patterns.length ? Math.min(...patterns.map((p) => p.firstMs)) : 0;
  const toMs = patterns.length ? Math.max(...patterns.map((p) => p.lastMs)) : 0;
  const warnings: string[] = [];
  if (patterns.length === 0) warnings.push('No samples in the window yet: wrap your locks with a recorder and come back after a day or two.');
  else if (toMs - fromMs < DAY_MS) {
    warnings.push(
      `The samples span ${formatSpan(toMs - fromMs)}, less than 24 h: daily peaks may be missing, so p99 may be too low.`,
    );
  }
  return {
    generatedAtMs: options.nowMs ?? Date.now(),
    window: { fromMs, toMs },
    requested: { sinceMs, untilMs },
    policy,
    sources: [...dbPaths],
    patterns,
    warnings,
  };
}

function summarize(pattern: string, rows: RollupRow[], policy: RecommendationPolicy): PatternAnalysis {
  // Each database's rows come in time order; several databases need one merge.
  rows.sort((a, b) => a[0] - b[0]);
  const hold = new DenseHistogram();
  const wait = new DenseHistogram();
  const ttls = new Map<number, number>();
  const outcomes: Record<Outcome, number> = { released: 0, expired: 0, not_acquired: 0, error: 0 };
  const hourly: HourlyPoint[] = [];
  let count = 0;
  let threw = 0;
  let holdSumUs = 0;
  let firstMs = Number.POSITIVE_INFINITY;
  let lastMs = Number.NEGATIVE_INFINITY;

  // Rows arrive in time order: build one hour's histogram at a time, then fold it into the total.
  const hour = new DenseHistogram();
  let hourStart = Number.NaN;
  let hourCount = 0;
  const closeHour = () => {
    if (!Number.isNaN(hourStart)) {
      hourly.push({ hourStartMs: hourStart, count: hourCount, p99Ms: hour.valueAtPercentile(99) / 1000 });
      hold.add(hour);
    }
  };
  for (const [bucketStartMs, rowCount, released, expired, notAcquired, error, rowThrew, rowHoldSumUs, rowFirstMs, rowLastMs, hists] of rows) {
    const rowHour = Math.floor(bucketStartMs / HOUR_MS) * HOUR_MS;
    if (rowHour !== hourStart) {
      closeHour();
      hour.clear();
      hourStart = rowHour;
      hourCount = 0;
    }
    addEncodedRollup(hists, hour, wait, ttls);
    hourCount += rowCount;
    count += rowCount;
    threw += rowThrew;
    holdSumUs += rowHoldSumUs;
    outcomes.released += released;
    outcomes.expired += expired;
    outcomes.not_acquired += notAcquired;
    outcomes.error += error;
    if (rowFirstMs < firstMs) firstMs = rowFirstMs;
    if (rowLastMs > lastMs) lastMs = rowLastMs;
  }
  closeHour();

  const holdCount = hold.totalCount;
  const ms = (us: number) => us / 1000;
  const p99Ms = ms(hold.valueAtPercentile(99));
  const rank = upperBoundRank(holdCount);
  const recommendedTtlMs = recommendTtl(p99Ms, policy);
  const ttl = currentTtl(ttls);
  const waitP99Ms = ms(wait.valueAtPercentile(99));

  let verdict: Verdict;
  if (outcomes.expired > 0) verdict = 'expired';
  else if (holdCount < MIN_SAMPLES_FOR_P99) verdict = 'insufficient-data';
  else if (ttl.currentMs < recommendedTtlMs) verdict = 'too-short';
  else if (ttl.currentMs > TOO_LONG_FACTOR * recommendedTtlMs) verdict = 'too-long';
  else verdict = 'ok';

  const hints: string[] = [];
  if (outcomes.expired > 0) {
    hints.push(`${outcomes.expired} lock(s) expired while the critical section still ran: another instance could enter.`);
  }
  if (holdCount < MIN_SAMPLES_FOR_P99) {
    hints.push(`${holdCount} hold-time sample(s); ${MIN_SAMPLES_FOR_P99} are needed before p99 means anything at 95 % confidence.`);
  }
  const notAcquiredRate = count > 0 ? outcomes.not_acquired / count : 0;
  if (waitP99Ms > CONTENTION_WAIT_P99_MS || notAcquiredRate > CONTENTION_NOT_ACQUIRED_RATE) {
    hints.push(
      `Contended: wait p99 ${formatMs(waitP99Ms)}, ${(notAcquiredRate * 100).toFixed(1)} % not acquired. ` +
        'The key is probably too broad (one lock for everything); lock a finer key, e.g. per entity id.',
    );
  }
  if (ttl.minMs !== ttl.maxMs) hints.push(`Several TTLs in use (${formatMs(ttl.minMs)}–${formatMs(ttl.maxMs)}); the most common is compared.`);

  return {
    pattern,
    count,
    holdCount,
    holdMs: {
      p50: ms(hold.valueAtPercentile(50)),
      p90: ms(hold.valueAtPercentile(90)),
      p99: p99Ms,
      p999: ms(hold.valueAtPercentile(99.9)),
      max: ms(hold.maxValue),
      mean: holdCount > 0 ? ms(holdSumUs / holdCount) : 0,
    },
    waitMs: { p50: ms(wait.valueAtPercentile(50)), p99: waitP99Ms },
    outcomes,
    threw,
    ttl,
    firstMs: Number.isFinite(firstMs) ? firstMs : 0,
    lastMs: Number.isFinite(lastMs) ? lastMs : 0,
    p99UpperBoundMs: rank === undefined ? undefined : ms(hold.valueAtRank(rank)),
    recommendedTtlMs,
    verdict,
    hints,
    hourly,
    distribution: logBins(hold),
  };
}

function currentTtl(ttls: Map<number, number>): { currentMs: number; minMs: number; maxMs: number } {
  let currentMs = 0;
  let best = -1;
  let minMs = Number.POSITIVE_INFINITY;
  let maxMs = 0;
  for (const [ttl, n] of ttls) {
    if (n > best || (n === best && ttl < currentMs)) {
      best = n;
      currentMs = ttl;
    }
    if (ttl < minMs) minMs = ttl;
    if (ttl > maxMs) maxMs = ttl;
  }
  return { currentMs, minMs: Number.isFinite(minMs) ? minMs : 0, maxMs };
}

/** Folds the histogram's fine buckets into about ten bins per decade, for a log-scale chart. */
function logBins(histogram: DenseHistogram): DistributionBin[] {
  const bins = new Map<number, DistributionBin>();
  for (const bucket of histogram.buckets()) {
    const valueMs = Math.max(bucket.lowUs, 1) / 1000;
    const slot = Math.floor(Math.log10(valueMs) * 10);
    let bin = bins.get(slot);
    if (!bin) bins.set(slot, (bin = { lowMs: 10 ** (slot / 10), highMs: 10 ** ((slot + 1) / 10), count: 0 }));
    bin.count += bucket.count;
  }
  return [...bins.values()].sort((a, b) => a.lowMs - b.lowMs);
}

function globToRegExp(glob: string): RegExp {
  const source = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 's');
}

function formatSpan(ms: number): string {
  const hours = ms / HOUR_MS;
  return hours >= 1 ? `${hours.toFixed(1)} h` : `${Math.round(ms / 60_000)} min`;
}

