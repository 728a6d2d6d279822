/**
 * ttl-advisor: an instrumented Redis lock that records how long each critical
 * section really holds it, and the tools that turn those samples into TTLs.
 *
 * Exports follow a sample's path: the lock (or the user's own, through an
 * instrumented client) where it is born, the key patterns
 * it is filed under, the recorders and the fleet transport that keep it, the
 * SQLite file that stores it, the analysis, the policy file and the reports.
 * Heavy parts load on first use: SQLite when a database is first opened, vega
 * when an HTML report is first rendered.
 */

// Everything a service needs in its hot path — errors, the lock, `instrument`, key patterns, the recorders,
// the fleet sink, the policy loader — is the service entry's, re-exported: one module graph, so in CommonJS
// as in ES modules `ttl-advisor` and `ttl-advisor/service` hand out the very same classes.
export {
  TtlAdvisorError,
  LockNotAcquiredError,
  LockLostError,
  LockRedisError,
  ConfigError,
  DatabaseError,
  PolicyFileError,
  RedisLock,
  withLock,
  LOCK_DEFAULTS,
  instrument,
  instrumentationOf,
  INSTRUMENT_DEFAULTS,
  patternOf,
  MAX_PATTERN_LENGTH,
  OVERFLOW_PATTERN,
  OUTCOMES,
  recorderFailures,
  SqliteRecorder,
  DEFAULT_DB_PATH,
  SQLITE_RECORDER_DEFAULTS,
  flushOnShutdown,
  RedisStreamSink,
  DEFAULT_STREAM,
  STREAM_SINK_DEFAULTS,
  OtelRecorder,
  OTEL_RECORDER_DEFAULTS,
  METRIC_NAMES,
  PROMETHEUS_NAMES,
  DURATION_BUCKETS_S,
  loadTtlPolicy,
  TtlPolicy,
  DEFAULT_POLICY_PATH,
  DEFAULT_POLICY_TTL_MS,
} from './service.js';
export type {
  LockOptions,
  RetryOptions,
  LockLostEvent,
  TtlSource,
  LockClient,
  IoredisLockClient,
  NodeRedisLockClient,
  InstrumentOptions,
  InstrumentWarningKind,
  Instrumentation,
  InstrumentStats,
  LockSample,
  RenewalTimings,
  LeaseLibrary,
  Outcome,
  SampleRecorder,
  RecorderStats,
  ObservationGap,
  GapReason,
  SqliteRecorderOptions,
  RecorderWarning,
  FlushOnShutdownOptions,
  ClosableRecorder,
  RedisStreamSinkOptions,
  StreamClient,
  OtelRecorderOptions,
  OtelRecorderStats,
  OtelWarningKind,
  MetricSource,
  OtelMeter,
  PolicyDocument,
  PolicyEntry,
  PolicyMatch,
} from './service.js';

// No code at all: every lock in a Redis, from its keyspace notifications (`ttl-advisor watch`)
export { WatchError } from './errors.js';
export { KeyspaceWatcher, WATCH_DEFAULTS } from './watch/watcher.js';
export type { WatchOptions } from './watch/watcher.js';
export type { WatchStats } from './watch/keyspace-tracker.js';

// 4. A fleet: samples through a Redis stream to one collector
export { StreamCollector, COLLECTOR_DEFAULTS } from './fleet/collector.js';
export type { CollectorOptions, CollectorProgress } from './fleet/collector.js';

// 5. The samples file
export { BUCKET_MS, SCHEMA_VERSION } from './store/format.js';
export { Histogram } from './store/histogram/histogram.js';
export { mergeDatabases } from './store/merge.js';
export type { MergeResult } from './store/merge.js';
export { databaseStats } from './store/stats.js';
export type { DatabaseStats } from './store/stats.js';

// 6. Analysis
export { analyze } from './analyze/analyze.js';
export type { Analysis, AnalyzeOptions } from './analyze/analyze.js';
export type { PatternAnalysis, HourlyPoint } from './analyze/summarize.js';
export type { Hint, AnalysisWarning, ObservedGap, UnconfirmedPattern, UnattributedSamples } from './analyze/hints.js';
export type { LearnedPattern } from './keys/learned-names.js';
export { KeyPatternMiner, MINER_DEFAULTS } from './keys/miner.js';
export type { MinerOptions, PatternAlias } from './keys/miner.js';
export { decide, DECISION_DEFAULTS } from './analyze/decision.js';
export type { Decision, DecisionOptions, Finding, HoldReason, JudgedTtl } from './analyze/decision.js';
export { MIN_SAMPLES_FOR_P99 } from './analyze/confidence.js';
export { VERDICTS } from './analyze/verdict.js';
export type { Verdict } from './analyze/verdict.js';
export { recommendTtl, DEFAULT_RECOMMENDATION_POLICY } from './analyze/recommend.js';
export type { RecommendationPolicy } from './analyze/recommend.js';

// 7. The TTL policy file
export { parsePolicy, formatPolicy } from './policy/policy.js';
export { checkPolicy } from './policy/check.js';
export type { CheckOptions, CheckResult, CheckRow } from './policy/check.js';
export { applyRecommendations } from './policy/apply.js';
export type { ApplyOptions, PolicyChange } from './policy/apply.js';

// 8. Reports
export { renderJson } from './report/json.js';
export { renderMarkdown } from './report/markdown.js';
export { hintText, hintSentences, warningText } from './report/hint-text.js';
export { REPORT_FORMATS } from './report/index.js';
export type { ReportFormat } from './report/index.js';
export { writeReports } from './report/write-reports.js';

// Live locks, and any client that can send a command (ioredis or node-redis)
export type { RedisCommandClient } from './redis-client.js';
export { listLocks } from './inspect/locks.js';
export type { LiveLock, LiveLocks, ListLocksOptions } from './inspect/locks.js';
