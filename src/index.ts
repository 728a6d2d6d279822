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
