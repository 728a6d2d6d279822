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

// Errors
export {
  TtlAdvisorError,
  LockNotAcquiredError,
  LockLostError,
  LockRedisError,
  ConfigError,
  DatabaseError,
  PolicyFileError,
} from './errors.js';

// 1. The lock: where a sample is born
export { RedisLock } from './lock/redis-lock.js';
export { withLock } from './lock/with-lock.js';
export { LOCK_DEFAULTS } from './lock/options.js';
export type { LockOptions, RetryOptions, LockLostEvent, TtlSource } from './lock/options.js';
export type { LockClient, IoredisLockClient, NodeRedisLockClient } from './lock/client.js';

// 1b. The user's own locks (node-redlock, redis-semaphore, hand-written), read off their client's commands
export { instrument, instrumentationOf, INSTRUMENT_DEFAULTS } from './instrument/instrument.js';
export type { InstrumentOptions, Instrumentation, InstrumentStats } from './instrument/instrument.js';

// 1c. No code at all: every lock in a Redis, from its keyspace notifications (`ttl-advisor watch`)
export { KeyspaceWatcher, WatchError, WATCH_DEFAULTS } from './watch/watcher.js';
export type { WatchOptions } from './watch/watcher.js';
export type { WatchStats } from './watch/keyspace-tracker.js';

// 2. Key patterns
export { patternOf, MAX_PATTERN_LENGTH, OVERFLOW_PATTERN } from './keys/pattern.js';

// 3. Recording, in the service
export { OUTCOMES } from './sample/sample.js';
export type { LockSample, Outcome, SampleRecorder, RecorderStats } from './sample/sample.js';
export { SqliteRecorder } from './record/sqlite-recorder.js';
export { DEFAULT_DB_PATH, SQLITE_RECORDER_DEFAULTS } from './record/recorder-options.js';
export type { SqliteRecorderOptions } from './record/recorder-options.js';
export type { RecorderWarning } from './sample/warn-once.js';
export { flushOnShutdown } from './record/shutdown.js';
export type { FlushOnShutdownOptions, ClosableRecorder } from './record/shutdown.js';

// 4. A fleet: samples through a Redis stream to one collector
export { RedisStreamSink, DEFAULT_STREAM, STREAM_SINK_DEFAULTS } from './fleet/stream-sink.js';
export type { RedisStreamSinkOptions } from './fleet/stream-sink.js';
export type { StreamClient } from './fleet/stream-client.js';
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
export { MIN_SAMPLES_FOR_P99 } from './analyze/confidence.js';
export { VERDICTS } from './analyze/verdict.js';
export type { Verdict } from './analyze/verdict.js';
export { recommendTtl, DEFAULT_RECOMMENDATION_POLICY } from './analyze/recommend.js';
export type { RecommendationPolicy } from './analyze/recommend.js';

// 7. The TTL policy file
export { loadTtlPolicy, parsePolicy, formatPolicy, TtlPolicy, DEFAULT_POLICY_PATH, DEFAULT_POLICY_TTL_MS } from './policy/policy.js';
export type { PolicyDocument, PolicyEntry, PolicyMatch } from './policy/policy.js';
export { checkPolicy } from './policy/check.js';
export type { CheckOptions, CheckResult, CheckRow } from './policy/check.js';
export { applyRecommendations } from './policy/apply.js';
export type { ApplyOptions, PolicyChange } from './policy/apply.js';

// 8. Reports
export { renderJson } from './report/json.js';
export { renderMarkdown } from './report/markdown.js';
export { REPORT_FORMATS } from './report/index.js';
export type { ReportFormat } from './report/index.js';
export { writeReports } from './report/write-reports.js';

// Live locks, and any client that can send a command (ioredis or node-redis)
export type { RedisCommandClient } from './redis-client.js';
export { listLocks } from './inspect/locks.js';
export type { LiveLock, LiveLocks, ListLocksOptions } from './inspect/locks.js';
