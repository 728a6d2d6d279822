/**
 * ttl-advisor: an instrumented Redis lock that records how long each critical
 * section really holds it, and the tools that turn those samples into TTLs.
 */
export { RedisLock } from './lock/redis-lock.js';
export { withLock } from './lock/with-lock.js';
export { LOCK_DEFAULTS } from './lock/options.js';
export type { LockOptions, RetryOptions, LockLostEvent } from './lock/options.js';
export type { LockClient } from './lock/client.js';

export { patternOf, MAX_PATTERN_LENGTH } from './keys/pattern.js';

export { SqliteRecorder } from './record/sqlite-recorder.js';
export { OVERFLOW_PATTERN } from './record/sample-writer.js';
export type { SqliteRecorderOptions, RecorderStats, RecorderWarning } from './record/sqlite-recorder.js';
export { flushOnShutdown } from './record/shutdown.js';
export type { FlushOnShutdownOptions, ClosableRecorder } from './record/shutdown.js';
export { OUTCOMES } from './record/sample.js';
export type { LockSample, Outcome, SampleRecorder } from './record/sample.js';
export { Histogram } from './record/histogram.js';
export { BUCKET_MS, SCHEMA_VERSION } from './record/schema.js';

export {
  TtlAdvisorError,
  LockNotAcquiredError,
  LockLostError,
  LockRedisError,
  ConfigError,
  DatabaseError,
} from './errors.js';

export { loadTtlPolicy, parsePolicy, formatPolicy, TtlPolicy, PolicyFileError, DEFAULT_POLICY_PATH, DEFAULT_POLICY_TTL_MS } from './policy/policy.js';
export type { PolicyDocument, PolicyEntry, PolicyMatch } from './policy/policy.js';
export { checkPolicy } from './policy/check.js';
export type { CheckOptions, CheckResult, CheckRow } from './policy/check.js';
export { applyRecommendations } from './policy/apply.js';
export type { ApplyOptions, PolicyChange } from './policy/apply.js';

export { analyze, MIN_SAMPLES_FOR_P99, VERDICTS } from './analyze/analyze.js';
export type { Analysis, AnalyzeOptions, PatternAnalysis, Verdict, HourlyPoint } from './analyze/analyze.js';
export { recommendTtl, DEFAULT_RECOMMENDATION_POLICY } from './analyze/recommend.js';
export type { RecommendationPolicy } from './analyze/recommend.js';
export { databaseStats } from './analyze/stats.js';
export type { DatabaseStats } from './analyze/stats.js';
export { renderJson } from './report/json.js';
export { renderMarkdown } from './report/markdown.js';
export { writeReports, REPORT_FORMATS } from './report/index.js';
export type { ReportFormat } from './report/index.js';
export { listLocks } from './inspect/locks.js';
export type { LiveLock, LiveLocks, ListLocksOptions } from './inspect/locks.js';
export { DEFAULT_DB_PATH } from './record/sqlite-recorder.js';
export { RedisStreamSink, DEFAULT_STREAM } from './record/redis-stream-sink.js';
export type { RedisStreamSinkOptions, StreamClient } from './record/redis-stream-sink.js';
export { StreamCollector } from './collect/collector.js';
export type { CollectorOptions, CollectorProgress } from './collect/collector.js';
export { mergeDatabases } from './record/merge.js';
export type { MergeResult } from './record/merge.js';
