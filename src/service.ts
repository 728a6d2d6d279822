/**
 * ttl-advisor/service: what a service needs in its hot path and nothing else —
 * the lock, `instrument(client)` for the locks it already has, the recorders,
 * the fleet sink and the TTL policy loader. No analysis, report, store or CLI
 * code loads through it (the package root has everything, at a higher start-up cost).
 */

export {
  TtlAdvisorError,
  LockNotAcquiredError,
  LockLostError,
  LockRedisError,
  ConfigError,
  DatabaseError,
  PolicyFileError,
} from './errors.js';

export { RedisLock } from './lock/redis-lock.js';
export { withLock } from './lock/with-lock.js';
export { LOCK_DEFAULTS } from './lock/options.js';
export type { LockOptions, RetryOptions, LockLostEvent, TtlSource } from './lock/options.js';
export type { LockClient, IoredisLockClient, NodeRedisLockClient } from './lock/client.js';

export { instrument, instrumentationOf, INSTRUMENT_DEFAULTS } from './instrument/instrument.js';
export type { InstrumentOptions, InstrumentWarningKind, Instrumentation, InstrumentStats } from './instrument/instrument.js';

export { patternOf, MAX_PATTERN_LENGTH, OVERFLOW_PATTERN } from './keys/pattern.js';

export { OUTCOMES } from './sample/sample.js';
export type { LockSample, RenewalTimings, LeaseLibrary, Outcome, SampleRecorder, RecorderStats, ObservationGap, GapReason } from './sample/sample.js';
export { recorderFailures } from './sample/safe-recorder.js';
export { SqliteRecorder } from './record/sqlite-recorder.js';
export { DEFAULT_DB_PATH, SQLITE_RECORDER_DEFAULTS } from './record/recorder-options.js';
export type { SqliteRecorderOptions } from './record/recorder-options.js';
export type { RecorderWarning } from './sample/warn-once.js';
export { flushOnShutdown } from './record/shutdown.js';
export type { FlushOnShutdownOptions, ClosableRecorder } from './record/shutdown.js';

export { RedisStreamSink, DEFAULT_STREAM, STREAM_SINK_DEFAULTS } from './fleet/stream-sink.js';
export { OtelRecorder } from './metrics/otel-recorder.js';
export { OTEL_RECORDER_DEFAULTS } from './metrics/otel-options.js';
export type { OtelRecorderOptions, OtelWarningKind } from './metrics/otel-options.js';
export type { OtelRecorderStats } from './metrics/otel-recorder.js';
export { METRIC_NAMES, PROMETHEUS_NAMES, DURATION_BUCKETS_S } from './metrics/instruments.js';
export type { MetricSource } from './metrics/instruments.js';
export type { OtelMeter } from './metrics/otel-types.js';
export type { RedisStreamSinkOptions } from './fleet/stream-sink.js';
export type { StreamClient } from './fleet/stream-client.js';

export { loadTtlPolicy, TtlPolicy, DEFAULT_POLICY_PATH, DEFAULT_POLICY_TTL_MS } from './policy/policy.js';
export type { PolicyDocument, PolicyEntry, PolicyMatch } from './policy/policy.js';
