import { ConfigError } from '../errors.js';
import { basename, isAbsolute, relative, resolve } from 'node:path';
import { DAY_MS } from '../units.js';
import { markIncompleteHours } from './gaps.js';
import { OVERFLOW_PATTERN } from '../keys/pattern.js';
import type { AnalysisWarning, HeldData, ObservedGap, UnattributedSamples, UnconfirmedPattern } from './hints.js';
import { RollupReader } from './read-rollups.js';
import { resolveRecommendationPolicy, type RecommendationPolicy } from './recommend.js';
import { summarize, type PatternAnalysis } from './summarize.js';
import { compareVerdicts } from './verdict.js';

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

export interface Analysis {
  generatedAtMs: number;
  /** The data's extent within the requested window (epoch ms); both 0 when there is no data. */
  window: { fromMs: number; toMs: number };
  requested: { sinceMs: number | undefined; untilMs: number | undefined };
  policy: RecommendationPolicy;
  /** The databases read, as they may be shown: relative to the working directory, or the file name alone outside it. */
  sources: string[];
  /** When no pattern matched: what the databases hold in all, whatever the window and patterns asked for. */
  held?: HeldData;
  /** Worst verdict first, then by sample count. */
  patterns: PatternAnalysis[];
  /**
   * Patterns `watch` saw only expire, never released (see {@link UnconfirmedPattern}): reported
   * apart, first, and never mixed into `patterns`. Most expirations first.
   */
  unconfirmed: UnconfirmedPattern[];
  /**
   * Samples under `{other}` (past the pattern budget, or keys the learner could not place): no
   * critical section, so no advice; reports show their count and what to do.
   */
  unattributed?: UnattributedSamples;
  /** Notes on the inputs and the window, as data: `report/` words them. */
  warnings: AnalysisWarning[];
  /**
   * Stretches of time a producer could not see every lock (`watch` lost its notifications):
   * the counts of the hours they touch are lower bounds (see each pattern's `incompleteHours`).
   */
  gaps: ObservedGap[];
}

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
  checkWindow(options.sinceMs, options.untilMs);
  const { sinceMs, untilMs } = options;

  const reader = new RollupReader(dbPaths, { sinceMs, untilMs, patterns: options.patterns ?? [] });
  const patterns: PatternAnalysis[] = [];
  const unconfirmed: UnconfirmedPattern[] = [];
  const unreadable = new Map<string, number>();
  let held: Analysis['held'];
  let gaps: ObservedGap[] = [];
  let unattributed: UnattributedSamples | undefined;
  try {
    for (const name of reader.patternNames()) {
      const rows = reader.rowsOf(name);
      if (rows.length === 0) continue;
      const summary = summarize(name, rows, policy, () => reader.expiredHolds(name));
      if (summary.unreadableRows > 0) unreadable.set(name, summary.unreadableRows);
      if (summary.unreadableRows >= rows.length) continue;
      // `{other}` is no critical section: counted apart, never advised on.
      if (name === OVERFLOW_PATTERN) {
        unattributed = { count: summary.count, firstMs: summary.firstMs, lastMs: summary.lastMs };
        continue;
      }
      const learned = reader.learnedOf(name);
      if (learned && (learned.names > 1 || learned.positions.length > 0)) summary.learned = learned;
      // Never released in the window: not a confirmed lock, reported apart; one release and its expirations join it.
      if (summary.unconfirmed > 0 && summary.unconfirmed === summary.count) {
        unconfirmed.push({ pattern: name, expired: summary.outcomes.expired, ttl: summary.ttl, firstMs: summary.firstMs, lastMs: summary.lastMs });
      } else patterns.push(summary);
    }
    if (patterns.length === 0 && unconfirmed.length === 0 && !unattributed) held = reader.held();
    const seenGaps = reader.gaps();
    markIncompleteHours(patterns, seenGaps);
    gaps = seenGaps.map(({ patterns: _, ...gap }) => gap);
  } finally {
    reader.close();
  }

  return assembleAnalysis({ patterns, unconfirmed, unattributed, held, gaps, notes: reader.notes, unreadable, sources: dbPaths.map(displayPath) }, policy, options);
}

/** What a source's patterns came to, before the analysis is put together. */
export interface AnalysisParts {
  patterns: PatternAnalysis[];
  unconfirmed: UnconfirmedPattern[];
  unattributed?: UnattributedSamples | undefined;
  held: HeldData | undefined;
  gaps: ObservedGap[];
  notes: readonly AnalysisWarning[];
  unreadable: ReadonlyMap<string, number>;
  sources: string[];
}

/** The analysis of a source's summaries: sorted worst first, with its window and warnings (any source: databases, Prometheus). */
export function assembleAnalysis(parts: AnalysisParts, policy: RecommendationPolicy, options: AnalyzeOptions): Analysis {
  const { patterns, unconfirmed, unattributed, held, gaps, unreadable } = parts;
  const { sinceMs, untilMs } = options;
  patterns.sort(
    (a, b) => compareVerdicts(a.verdict, b.verdict) || b.count - a.count || a.pattern.localeCompare(b.pattern),
  );

  // The window the locks span (patterns seen only to expire say nothing of the locks' evidence), or theirs when alone.
  const spans = patterns.length > 0 ? patterns : unconfirmed;
  const fromMs = spans.length ? Math.min(...spans.map((p) => p.firstMs)) : 0;
  const toMs = spans.length ? Math.max(...spans.map((p) => p.lastMs)) : 0;
  const warnings: AnalysisWarning[] = [...parts.notes];
  if (unreadable.size > 0) {
    warnings.push({ kind: 'unreadable-rows', rows: [...unreadable.values()].reduce((a, b) => a + b, 0), patterns: [...unreadable.keys()] });
  }
  if (gaps.length > 0) {
    const hours = Math.max(0, ...patterns.map((p) => p.incompleteHours));
    warnings.push({ kind: 'gaps', count: gaps.length, gaps: gaps.slice(0, 5), hours });
  }
  if (held) warnings.push({ kind: 'nothing-matched', held });
  else if (patterns.length > 0 && toMs - fromMs < DAY_MS) warnings.push({ kind: 'short-window', spanMs: toMs - fromMs });
  return {
    generatedAtMs: options.nowMs ?? Date.now(),
    window: { fromMs, toMs },
    requested: { sinceMs, untilMs },
    policy,
    sources: parts.sources,
    ...(held ? { held } : {}),
    patterns,
    unconfirmed: unconfirmed.sort((a, b) => b.expired - a.expired || a.pattern.localeCompare(b.pattern)),
    ...(unattributed ? { unattributed } : {}),
    warnings,
    gaps,
  };
}

/** Throws {@link ConfigError} for a window that ends before it starts. */
export function checkWindow(sinceMs: number | undefined, untilMs: number | undefined): void {
  if (sinceMs !== undefined && untilMs !== undefined && sinceMs >= untilMs) {
    throw new ConfigError(`Expected \`since\` (${new Date(sinceMs).toISOString()}) to be before \`until\` (${new Date(untilMs).toISOString()})`);
  }
}

/** A path as reports may show it: they travel (into pull requests), local directories should not. */
function displayPath(path: string): string {
  const inside = relative(process.cwd(), resolve(path));
  return inside === '' || inside.startsWith('..') || isAbsolute(inside) ? basename(path) : inside;
}
