import type Database from 'better-sqlite3';

/**
 * An open samples database: named here, apart from schema.ts, so that every
 * store module can name it without importing the schema (no cycle), and apart
 * from the public format.ts, whose declarations a user's strict TypeScript
 * reads without better-sqlite3's types.
 */
export type Db = Database.Database;
