/**
 * The constants of the samples file's format, in a module of their own so that
 * a program can know them without loading any of the code that reads or writes
 * the file. (The type of an open file is in db.ts: this module is public, and
 * its declarations must not need better-sqlite3's types.)
 */

/** The version of the schema this code writes (`PRAGMA user_version`); see `migrations.ts`. */
export const SCHEMA_VERSION = 11;

/**
 * Length of one rollup time bucket. An hour makes hourly charts exact and keeps
 * a two-day report at 48 rows per pattern and instance, so even a fleet of a
 * hundred instances is read in about a second; `--since`/`--until` snap to it.
 */
export const BUCKET_MS = 60 * 60 * 1000;
