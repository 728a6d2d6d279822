import { DatabaseError } from '../errors.js';
import type { Db } from './db.js';
import { SCHEMA_VERSION } from './format.js';

/** Tables every version of the schema has had since version 1: a file without them is not a samples database. */
const OWN_TABLES = ['meta', 'patterns', 'instances', 'series', 'raw_samples', 'rollups'] as const;

/** SQLite's answers to "try again later": passed on as they are, so a writer waits and retries. */
const TRANSIENT = /^SQLITE_(BUSY|LOCKED)/;

/**
 * What an open file is, found by reading only: 0 for an empty database (no
 * schema objects, `user_version` 0: a samples database to create), otherwise
 * the schema version of a samples database this code understands. Throws
 * {@link DatabaseError} for a file SQLite cannot read (not SQLite, damaged), a
 * newer schema, or another application's tables — before anyone changes a byte
 * of it (`collect --db` and `SqliteRecorder` used to add their tables to
 * whatever file they were given).
 */
export function identifySamplesDatabase(db: Db, path: string): number {
  let version: number;
  let objects: { type: string; name: string }[];
  try {
    version = db.pragma('user_version', { simple: true }) as number;
    objects = db.prepare('SELECT type, name FROM sqlite_master').all() as { type: string; name: string }[];
  } catch (error) {
    if (TRANSIENT.test((error as { code?: string }).code ?? '')) throw error;
    throw new DatabaseError(path, `${path} is not a readable SQLite database: ${(error as Error).message}`, { cause: error });
  }
  const tables = new Set(objects.filter((o) => o.type === 'table').map((o) => o.name));
  const own = OWN_TABLES.every((name) => tables.has(name));
  const named = `(${[...tables].slice(0, 3).join(', ')}${tables.size > 3 ? ', …' : ''})`;
  if (version > SCHEMA_VERSION) {
    // A later ttl-advisor may rename tables: a newer version without ours may be either.
    const newer = `schema version ${version}, newer than this ttl-advisor understands (${SCHEMA_VERSION})`;
    if (own || objects.length === 0) throw new DatabaseError(path, `${path} has ${newer}; upgrade ttl-advisor`);
    throw new DatabaseError(path, `${path} is not a samples database this ttl-advisor knows: its tables ${named} are not ttl-advisor's, and it has ${newer}; left unchanged`);
  }
  if (version === 0 && objects.length === 0) return 0;
  if (version < 1 || !own) {
    const what = tables.size > 0 ? `it holds another application's tables ${named}` : 'it has no samples tables';
    throw new DatabaseError(path, `${path} is not a ttl-advisor samples database: ${what}; left unchanged`);
  }
  return version;
}
