/**
 * What an analysis has to say beside its numbers, as data: each hint and
 * warning names its kind and carries its figures. The sentences are written
 * in one place, `report/hint-text.ts`, so that every report and the CLI word
 * them alike and the analysis knows no presentation.
 */

/**
 * A note on one pattern's data that is no finding of its decision: what bears on reading the numbers.
 * Expirations, too few hold times and contention are findings (`Decision.findings`), said once, there.
 */
export type Hint =
  /** Locks that vanished before their TTL could have run out (deleted by someone else, lost by Redis). */
  | { kind: 'lost'; lost: number }
  /** Locks extended while held, out of `count` attempts: for them the TTL is not the hold budget. */
  | { kind: 'extended'; extended: number; extensions: number; count: number }
  /** Some locks were seen by `watch`, which sees no client wait: waits are known for `waitCount` of `count` (0: for none). */
  | { kind: 'waits-unknown'; waitCount: number; count: number }
  /** More than one TTL in use (ms); the most common is the one compared. */
  | { kind: 'several-ttls'; minMs: number; maxMs: number }
  /** A gap in what was seen (`watch` lost notifications) touches `hours` hours of this pattern: its counts are lower bounds. */
  | { kind: 'incomplete'; hours: number };

/** A note on the analysis as a whole: its inputs and its window. */
export type AnalysisWarning =
  /** A database given more than once (or through a link): read once. */
  | { kind: 'same-file'; path: string; firstPath: string }
  /** Instances whose rows are in more than one file (a merged file and its inputs): each counted once, from the first file. */
  | { kind: 'shared-instances'; instances: number; firstPath: string }
  /** Rollup rows that could not be decoded (a damaged file), left out; the patterns they belong to. */
  | { kind: 'unreadable-rows'; rows: number; patterns: string[] }
  /** The data spans less than a day: daily peaks may be missing. */
  | { kind: 'short-window'; spanMs: number }
  /** No pattern matched: what the databases hold in all. */
  | { kind: 'nothing-matched'; held: HeldData }
  /** A watcher could not see everything: its gaps (the first few; `count` in all) and the hours they touch. */
  | { kind: 'gaps'; count: number; gaps: ObservedGap[]; hours: number }
  /** A source (Prometheus) answered points timed outside the window asked for: left out. */
  | { kind: 'outside-window'; points: number }
  /** A source answered values that are no count, bound or TTL, or not in its API's shape: left out. */
  | { kind: 'invalid-values'; values: number }
  /** A source had more patterns than a samples file keeps: the `kept` busiest are reported, the rest are `{other}`. */
  | { kind: 'pattern-budget'; patterns: number; kept: number };


/**
 * A pattern `watch` saw taken with a TTL and expire, and never saw released: a lock whose every
 * hold outlives its TTL (its holder's compare-and-delete finds the key gone), or a cache the lock
 * glob also matches. Its true holds are unknown; it is reported apart, not advised on.
 */
export interface UnconfirmedPattern {
  pattern: string;
  /** Keys taken with a TTL that expired (each a hold of at least its TTL). */
  expired: number;
  /** The TTL they were taken with: the most common, and the range (ms). */
  ttl: { currentMs: number; minMs: number; maxMs: number };
  firstMs: number;
  lastMs: number;
}

/**
 * Samples filed under `{other}`: past a recorder's pattern budget (`maxPatterns`), or in keys the
 * pattern learner had no room to place. They belong to no one critical section, so they get no
 * verdict, no recommendation and no policy entry: only their count, shown apart.
 */
export interface UnattributedSamples {
  count: number;
  firstMs: number;
  lastMs: number;
}

/** A stretch of time a producer could not see every lock (`watch` lost its notifications), as stored. */
export interface ObservedGap {
  instance: string;
  /** The watched node. */
  source: string;
  fromMs: number;
  toMs: number;
  /** `output-buffer-limit`, `connection-lost`, `stopped-while-down`. */
  reason: string;
  /** Locks open at the loss whose end was not seen. */
  openHolds: number;
}

/** What the databases hold in all, whatever the window and patterns asked for. */
export interface HeldData {
  samples: number;
  firstMs: number | undefined;
  lastMs: number | undefined;
}

/** The figures of one pattern its hints are drawn from. */
export interface HintFigures {
  count: number;
  lost: number;
  waitCount: number;
  extended: number;
  extensions: number;
  ttl: { minMs: number; maxMs: number };
}

/** One pattern's hints, in the order reports list them. */
export function patternHints(f: HintFigures): Hint[] {
  const hints: Hint[] = [];
  if (f.lost > 0) hints.push({ kind: 'lost', lost: f.lost });
  if (f.extended > 0) hints.push({ kind: 'extended', extended: f.extended, extensions: f.extensions, count: f.count });
  if (f.waitCount < f.count) hints.push({ kind: 'waits-unknown', waitCount: f.waitCount, count: f.count });
  if (f.ttl.minMs !== f.ttl.maxMs) hints.push({ kind: 'several-ttls', minMs: f.ttl.minMs, maxMs: f.ttl.maxMs });
  return hints;
}

/** A gap with the patterns its producer recorded: the ones whose counts it can have cut. */
export interface GapWithPatterns extends ObservedGap {
  patterns: ReadonlySet<string>;
}
