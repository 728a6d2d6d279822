import type Database from 'better-sqlite3';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { DatabaseError } from '../errors.js';
import { rebuildFleetRollups } from './fleet-rollups.js';
import type { Db } from './db.js';
import { BUCKET_MS, SCHEMA_VERSION } from './format.js';
import { identifySamplesDatabase } from './identify.js';
import { bindingErrorText } from './binding.js';
import { MIGRATIONS } from './migrations.js';
import { readOnlyWalCopy } from './read-only-media.js';

/**
 * Opening the samples database: created at the latest schema, migrated forward
 * (see `migrations.ts`) by a recorder, read as it is by readers.
 */
// The type's home is format.ts; named here too for the modules that import it with the openers.
export type { Db } from './db.js';

// The native addon loads on the first database opened, not on import: a service
// that only locks, or sends samples to a stream, never loads it.
let sqlite: typeof Database | undefined;
function openDatabase(path: string | Buffer, options: Database.Options): Db {
  try {
    sqlite ??= createRequire(import.meta.url)('better-sqlite3') as typeof Database;
    return new sqlite(path, options);
  } catch (error) {
    // A binding built for another Node, or never built: said so a user can act on it.
    const text = bindingErrorText(error);
    if (text !== undefined) throw new DatabaseError(String(path), text, { cause: error });
    throw error;
  }
}

/** The DDL that creates schema version 1 alone; tests build old files with it to exercise migrations. */
export const SCHEMA_V1_DDL = MIGRATIONS[0]!;

/** The DDL of every version up to `version`, in order: builds a file exactly as that version wrote it. */
export function schemaDdlUpTo(version: number): string {
  return MIGRATIONS.slice(0, version).join('\n');
}

/**
 * Opens (creating if needed) a samples database for writing and brings its
 * schema up to date. An existing file is identified first, by a connection
 * that changes nothing: a file that is not SQLite, damaged, of a newer schema,
 * or another application's is refused with a {@link DatabaseError} and left
 * byte for byte as it was (switching the journal to WAL, the first change,
 * used to come before the check).
 */
export function openForWriting(path: string, busyTimeoutMs: number): Db {
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) throw new DatabaseError(path, `${path} is a directory, not a samples database`);
    if (statSync(path).size > 0) {
      const probe = openChecked(path, busyTimeoutMs);
      try {
        identifySamplesDatabase(probe, path);
      } finally {
        probe.close();
      }
    }
  }
  const db = openDatabase(path, { timeout: busyTimeoutMs });
  try {
    // A new file gives pages freed by \`prune\` back to the disk (\`PRAGMA incremental_vacuum\`);
    // it can only be chosen before the first table exists.
    if (db.pragma('page_count', { simple: true }) === 0) db.pragma('auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    migrate(db, path);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * A reading connection that leaves no trace. SQLite's read-only connections to
 * a WAL-mode file create its `-wal` and `-shm` files and, unable to clean up,
 * leave them behind beside the user's database. So when neither exists (no
 * writer has the file open), the file is opened read-write but `query_only`,
 * which refuses every write, and closing it as the last connection removes
 * them; when they exist, another connection owns them, and a read-only
 * connection changes nothing. A file that may not be written is opened read-only;
 * a WAL-mode file on read-only media is read from a copy (see `read-only-media.ts`).
 */
function openQuietly(path: string, busyTimeoutMs = 5000): Db {
  const copy = readOnlyWalCopy(path);
  if (copy) return openDatabase(copy, { readonly: true });
  if (!existsSync(`${path}-wal`) && !existsSync(`${path}-shm`)) {
    try {
      const db = openDatabase(path, { fileMustExist: true, timeout: busyTimeoutMs });
      db.pragma('query_only = ON');
      return db;
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      if (!/^SQLITE_(CANTOPEN|READONLY|PERM|AUTH)/.test(code)) throw error;
    }
  }
  return openDatabase(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
}

/** The schema version of an open database (`PRAGMA user_version`). */
export function schemaVersionOf(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Opens an existing samples database read-only. Throws {@link DatabaseError} when
 * it is missing, not SQLite, not a ttl-advisor database, or newer than this code.
 */
export function openForReading(path: string): Db {
  if (!existsSync(path)) throw new DatabaseError(path, `No samples database at ${path}`);
  if (statSync(path).isDirectory()) throw new DatabaseError(path, `${path} is a directory, not a samples database`);
  const db = openChecked(path);
  try {
    // Older versions are read as they are (readers only use what every version has, or check);
    // a recorder of this version migrates the file when it next writes to it.
    if (identifySamplesDatabase(db, path) < 1) throw new DatabaseError(path, `${path} is not a ttl-advisor samples database`);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * A samples database's schema version, once it is known readable and undamaged (`PRAGMA quick_check`),
 * before a command writes to it: a damaged file is refused with what SQLite found and `consequence`
 * (`nothing was merged`), and left byte for byte as it was (opening it to write would switch it to WAL).
 */
export function checkedVersion(path: string, consequence: string): number {
  const db = openForReading(path);
  try {
    const problems = (db.pragma('quick_check', { simple: false }) as { quick_check: string }[]).map((r) => r.quick_check);
    if (problems.length !== 1 || problems[0] !== 'ok') {
      const what = problems.slice(0, 2).join('; ').replace(/\s+/g, ' ').replace(/^\*+ in database main \*+ /, '');
      throw new DatabaseError(path, `${path} is damaged (${what}); ${consequence}`);
    }
    return schemaVersionOf(db);
  } catch (error) {
    if (error instanceof DatabaseError) throw error;
    throw new DatabaseError(path, `${path} cannot be read: ${(error as Error).message}; ${consequence}`, { cause: error });
  } finally {
    db.close();
  }
}

/** {@link openQuietly}, with a failure to open as a {@link DatabaseError} (a busy file's error passes as it is, to be retried). */
function openChecked(path: string, busyTimeoutMs?: number): Db {
  try {
    return openQuietly(path, busyTimeoutMs);
  } catch (error) {
    if (error instanceof DatabaseError || /^SQLITE_(BUSY|LOCKED)/.test((error as { code?: string }).code ?? '')) throw error;
    throw new DatabaseError(path, `Cannot open ${path}: ${(error as Error).message}`, { cause: error });
  }
}

function migrate(db: Db, path: string): void {
  // IMMEDIATE takes the write lock first, so two processes creating one file don't both migrate it.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new DatabaseError(
        path,
        `${path} has schema version ${version}, newer than this ttl-advisor understands (${SCHEMA_VERSION}); upgrade ttl-advisor`,
      );
    }
    for (let v = version; v < SCHEMA_VERSION; v++) {
      db.exec(MIGRATIONS[v]!);
      if (v === 0) {
        db.prepare('INSERT INTO meta (name, value) VALUES (?, ?)').run('bucket_ms', String(BUCKET_MS));
        db.prepare('INSERT INTO meta (name, value) VALUES (?, ?)').run('created_at', new Date().toISOString());
      }
    }
    // Filled once every table has its latest columns (fleet_rollups came with version 4).
    if (version < 4) rebuildFleetRollups(db);
    if (version !== SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
