import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';
import type { AliasRow } from './input.js';
import { schemaVersionOf } from './schema.js';

/**
 * The renames of learned patterns in a samples file (schema 11, `pattern_aliases`): a provisional
 * pattern (`lock:user:anna`) is read as the learned one it was renamed to (`lock:user:{id}`).
 */

/** The first schema version that keeps renames. */
export const ALIASES_SINCE = 11;

/** A file's renames, as [from, to, distinct values]; none before schema 11. */
export function readAliases(db: Db): AliasRow[] {
  if (schemaVersionOf(db) < ALIASES_SINCE) return [];
  return db
    .prepare('SELECT f.pattern, t.pattern, a.distinct_values FROM pattern_aliases a JOIN patterns f ON f.id = a.pattern_id JOIN patterns t ON t.id = a.learned_id')
    .raw(true)
    .all() as AliasRow[];
}

/**
 * What a writer needs of the table: the count of patterns that take a place in the file's budget (a
 * renamed one no longer does), and the insert of a rename (the first learner to name a provisional
 * pattern's learned one is kept: readers learn further from the names). A file of an older schema,
 * written as its version wrote it (as tests do), keeps no renames.
 */
export function aliasStatements(db: Db): { countPatterns: Statement; insertAlias: Statement | undefined } {
  const renames = schemaVersionOf(db) >= ALIASES_SINCE;
  return {
    countPatterns: db.prepare(`SELECT count(*) AS n FROM patterns${renames ? ' WHERE id NOT IN (SELECT pattern_id FROM pattern_aliases)' : ''}`),
    insertAlias: renames ? db.prepare('INSERT OR IGNORE INTO pattern_aliases (pattern_id, learned_id, distinct_values) VALUES (?, ?, ?)') : undefined,
  };
}
