import Database from 'better-sqlite3';
import { existsSync, openSync, readFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { DatabaseError, SqliteRecorder, type LockSample, type RecorderWarning } from '../../src/index.js';
import { SCHEMA_VERSION } from '../../src/store/format.js';
import { openForWriting, schemaDdlUpTo } from '../../src/store/schema.js';
import { runCli } from '../helpers/cli.js';
import { queryDb } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';

// Issue 22, item 11: ttl-advisor wrote its tables into other applications' SQLite files, and even a
// refusal changed the file (the journal was switched to WAL before the check).
const dir = tempDir();
let n = 0;
const fresh = (name: string) => join(dir, `${n++}-${name}.db`);
const sample = (i: number): LockSample => ({ key: `order:lock:product:${i}`, at: Date.UTC(2026, 0, 1) + i, holdMs: 5, ttlMs: 3000, outcome: 'released' });

function foreignFile(journal: 'delete' | 'wal'): string {
  const path = fresh(`app-${journal}`);
  const db = new Database(path);
  db.pragma(`journal_mode = ${journal}`);
  db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT); INSERT INTO users (email) VALUES ('a@example.com')");
  db.pragma('user_version = 3'); // applications version their files too: not a sign of ours
  db.close();
  return path;
}

function newerFile(): string {
  const path = fresh('newer');
  const db = new Database(path);
  db.exec(schemaDdlUpTo(SCHEMA_VERSION));
  db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  db.close();
  return path;
}

/** A real SQLite file (valid header) whose first page's b-tree is overwritten: SQLite calls it malformed. */
function corruptFile(): string {
  const path = fresh('corrupt');
  const db = new Database(path);
  db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
  db.close();
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(200, 0xa5), 0, 200, 100);
  closeSync(fd);
  return path;
}

function notSqlite(): string {
  const path = fresh('notes');
  const fd = openSync(path, 'w');
  writeSync(fd, 'my notes\n'.repeat(500));
  closeSync(fd);
  return path;
}

const refused: [string, () => string, RegExp][] = [
  ['a foreign file (rollback journal)', () => foreignFile('delete'), /is not a ttl-advisor samples database: it holds another application's tables \(users\)/],
  ['a foreign file (WAL)', () => foreignFile('wal'), /is not a ttl-advisor samples database/],
  ['a newer schema', newerFile, new RegExp(`has schema version ${SCHEMA_VERSION + 1}, newer than this ttl-advisor understands \\(${SCHEMA_VERSION}\\); upgrade ttl-advisor`)],
  ['a corrupt file', corruptFile, /is not a readable SQLite database: .*malformed/],
  ['a file that is not SQLite', notSqlite, /not a database/],
];

function expectUntouched(path: string, before: Buffer): void {
  expect(readFileSync(path).equals(before)).toBe(true);
  expect(existsSync(`${path}-wal`) || existsSync(`${path}-shm`) || existsSync(`${path}-journal`)).toBe(false);
}

describe('item 11: a database that is not ours is refused, and left byte for byte as it was', () => {
  it.each(refused)('item 11: openForWriting refuses %s with a DatabaseError, changing nothing', (_what, make, message) => {
    const path = make();
    const before = readFileSync(path);
    expect(() => openForWriting(path, 1000)).toThrow(DatabaseError);
    expect(() => openForWriting(path, 1000)).toThrow(message);
    expectUntouched(path, before);
  });

  it.each(refused)('item 11: SqliteRecorder refuses %s: one open-failed warning, samples dropped and counted, the file unchanged', async (_what, make, message) => {
    const path = make();
    const before = readFileSync(path);
    const warnings: RecorderWarning[] = [];
    const recorder = new SqliteRecorder({ path, onWarning: (w) => warnings.push(w) });
    for (let i = 0; i < 10; i++) recorder.record(sample(i));
    expect(await recorder.close()).toMatchObject({ recorded: 10, written: 0, dropped: 10 });
    expect(warnings.map((w) => w.kind)).toEqual(['open-failed']);
    expect(warnings[0]!.message).toMatch(message);
    expectUntouched(path, before);
  });

  it.each(refused)('item 11: collect --db refuses %s: one line on stderr about the file, exit 2, the file unchanged', async (_what, make, message) => {
    const path = make();
    const before = readFileSync(path);
    const { code, stderr } = await runCli(['collect', '--redis', inject('redisUrl'), '--db', path, '--stream', `item11:${n}`]);
    expect(code).toBe(2);
    // collect announces itself first; the refusal is the one error line.
    const errors = stderr.split('\n').filter((line) => line.startsWith('ttl-advisor:'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
    expectUntouched(path, before);
  });

  it('item 11: the control — files that are ours or empty are accepted, and the same byte comparison sees them change', () => {
    // An older samples file is migrated (and switched to WAL): the comparison above would have caught any change.
    const older = fresh('v5');
    const db = new Database(older);
    db.exec(schemaDdlUpTo(5));
    db.pragma('user_version = 5');
    db.close();
    const before = readFileSync(older);
    openForWriting(older, 1000).close();
    expect(readFileSync(older).equals(before)).toBe(false);
    expect(queryDb<{ user_version: number }>(older, 'PRAGMA user_version')[0]!.user_version).toBe(SCHEMA_VERSION);

    // An empty SQLite file (0 bytes, or a header and no tables) becomes a samples database.
    const empty = fresh('empty');
    new Database(empty).close();
    const headerOnly = fresh('header-only');
    const h = new Database(headerOnly);
    h.pragma('journal_mode = delete');
    h.exec('CREATE TABLE x (a); DROP TABLE x');
    h.close();
    for (const path of [empty, headerOnly]) {
      openForWriting(path, 1000).close();
      expect(queryDb<{ user_version: number }>(path, 'PRAGMA user_version')[0]!.user_version).toBe(SCHEMA_VERSION);
    }
  });
});
