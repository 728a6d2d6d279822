import Database from 'better-sqlite3';

/** Reads a samples database directly, the way a user with the sqlite3 shell would. */
export function queryDb<T>(path: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

export function countRows(path: string, table: string): number {
  return queryDb<{ n: number }>(path, `SELECT count(*) AS n FROM ${table}`)[0]!.n;
}

export function rollupTotal(path: string): number {
  return queryDb<{ n: number | null }>(path, 'SELECT sum(count) AS n FROM rollups')[0]!.n ?? 0;
}
