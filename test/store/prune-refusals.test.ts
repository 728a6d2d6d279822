import Database from 'better-sqlite3';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();

/** A samples file in rollback-journal mode (so a switch to WAL would show in its header) with its data pages overwritten. */
function damagedSamplesFile(name: string): string {
  const path = buildDb(dir, name, { seed: 21, hours: 6 });
  const db = new Database(path);
  db.pragma('journal_mode = DELETE');
  db.close();
  const bytes = readFileSync(path);
  // Every page after the second: the schema on page 1 still reads, the tables' b-trees do not.
  for (let i = 4096 * 2; i < bytes.length - 100; i += 4096) bytes.fill(0xa5, i + 50, i + 90);
  writeFileSync(path, bytes);
  return path;
}

describe('prune refuses a damaged file before any byte of it changes', () => {
  it('C4: prune on a corrupt file: one line naming what SQLite found, exit 2, the file byte for byte as it was (no switch to WAL)', async () => {
    const good = buildDb(dir, 'good.db', { seed: 22, hours: 6 });
    const path = damagedSamplesFile('damaged.db');
    const before = readFileSync(path);
    // The journal mode is in the header (bytes 18 and 19: 1 for rollback, 2 for WAL): the comparison below sees a switch.
    expect([before[18], before[19]]).toEqual([1, 1]);
    const goodBefore = readFileSync(good);
    const { code, stdout, stderr } = await runCli(['prune', '--older-than', '1h', '--db', good, '--db', path]);
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/damaged\.db is damaged \(.+\); nothing was pruned/);
    expect(stdout).toBe('');
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(existsSync(`${path}-wal`) || existsSync(`${path}-shm`) || existsSync(`${path}-journal`)).toBe(false);
    // All or nothing: the good file named before it was not pruned either.
    expect(readFileSync(good).equals(goodBefore)).toBe(true);
  });

  it('C4 control: the same prune on the undamaged files prunes them', async () => {
    const good = buildDb(dir, 'good-2.db', { seed: 23, hours: 6 });
    const { code, stdout } = await runCli(['prune', '--older-than', '1h', '--db', good]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/good-2\.db: removed data before/);
  });
});
