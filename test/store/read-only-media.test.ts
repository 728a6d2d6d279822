import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRecorder } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';

// Issue 22, item 15 (part): a WAL-mode samples file on read-only media could not be read: SQLite needs its -shm.
//
// A read-only directory, made the strongest way this machine allows. Tests here run as root, and root ignores
// permission bits, so chmod proves nothing for root: as root, a tmpfs mounted and remounted read-only (EROFS, real
// read-only media; needs CAP_SYS_ADMIN), else `chattr +i` on the directory and files (ext4/xfs/btrfs; EPERM);
// as any other user, chmod 0555/0444 (EACCES). What was used is in the test's name; the test is skipped, saying
// why, when nothing works (checked by trying to create a file there).
const base = mkdtempSync(join(tmpdir(), 'ttl-advisor-ro-'));
const undo: (() => void)[] = [];
afterAll(() => {
  for (const step of undo.reverse()) {
    try {
      step();
    } catch {
      // best effort: the next step or the removal below says what is left
    }
  }
  rmSync(base, { recursive: true, force: true });
});

function tryRun(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function isReadOnly(dir: string): boolean {
  try {
    writeFileSync(join(dir, '.probe'), '');
    rmSync(join(dir, '.probe'));
    return false;
  } catch {
    return true;
  }
}

/** Puts `files` in a new directory that cannot be written; returns it and how, or why not. */
function readOnlyDirWith(name: string, files: string[]): { dir: string; how: string } | { dir: undefined; how: string } {
  const dir = join(base, name);
  mkdirSync(dir);
  const copyIn = () => files.forEach((f) => copyFileSync(f, join(dir, f.split('/').at(-1)!)));
  if (process.getuid?.() !== 0) {
    copyIn();
    for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o444);
    chmodSync(dir, 0o555);
    undo.push(() => chmodSync(dir, 0o755));
    return isReadOnly(dir) ? { dir, how: 'chmod 0555' } : { dir: undefined, how: 'chmod did not make the directory read-only' };
  }
  if (tryRun('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', dir])) {
    undo.push(() => execFileSync('umount', [dir]));
    copyIn();
    if (tryRun('mount', ['-o', 'remount,ro', dir]) && isReadOnly(dir)) return { dir, how: 'a tmpfs remounted read-only' };
    execFileSync('umount', [dir]);
    undo.pop();
  }
  copyIn();
  const entries = [dir, ...readdirSync(dir).map((f) => join(dir, f))];
  if (tryRun('chattr', ['+i', ...entries])) {
    undo.push(() => execFileSync('chattr', ['-i', ...entries]));
    if (isReadOnly(dir)) return { dir, how: 'chattr +i' };
  }
  return { dir: undefined, how: 'running as root, and neither a read-only tmpfs mount nor chattr +i works here' };
}

async function walSamplesFile(): Promise<string> {
  const src = mkdtempSync(join(base, 'src-'));
  const path = join(src, 'samples.db');
  const recorder = new SqliteRecorder({ path, instance: 'api-1' });
  const now = Date.now();
  for (let i = 0; i < 500; i++) recorder.record({ key: `order:lock:product:${i}`, at: now - (i % 5) * 3_600_000, holdMs: 1 + (i % 40), ttlMs: 3000, outcome: 'released' });
  await recorder.close();
  expect(readFileSync(path)[18]).toBe(2); // WAL mode, and closed cleanly: no -wal or -shm beside it
  expect(existsSync(`${path}-wal`) || existsSync(`${path}-shm`)).toBe(false);
  return path;
}

const original = await walSamplesFile();
const ro = readOnlyDirWith('media', [original]);

describe.skipIf(ro.dir === undefined)(`item 15: a WAL samples file on read-only media (${ro.how})`, () => {
  const path = join(ro.dir ?? base, 'samples.db');

  it('item 15: the control — SQLite alone cannot read it: a read-only connection needs a -shm it cannot create', () => {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      expect(() => db.prepare('SELECT count(*) FROM rollups').get()).toThrow(/unable to open database file/);
    } finally {
      db.close();
    }
  });

  it('item 15: stats and report read it, with the same numbers as the writable original, and nothing is created beside it', async () => {
    const stats = async (db: string) => JSON.parse((await runCli(['stats', '--db', db, '--format', 'json'])).stdout).databases[0];
    const readOnly = await runCli(['stats', '--db', path, '--format', 'json']);
    expect(readOnly.code, readOnly.stderr).toBe(0);
    const { bytes: _a, ...there } = await stats(path);
    const { bytes: _b, ...here } = await stats(original);
    expect({ ...there, path: undefined }).toEqual({ ...here, path: undefined });
    expect(there.samples).toBe(500);

    const out = mkdtempSync(join(base, 'out-'));
    const report = await runCli(['report', '--db', path, '--out', out, '--format', 'json']);
    expect(report.code, report.stderr).toBe(0);
    const json = JSON.parse(readFileSync(join(out, 'ttl-report.json'), 'utf8'));
    expect(json.patterns.map((p: { pattern: string; count: number }) => [p.pattern, p.count])).toEqual([['order:lock:product:{id}', 500]]);
    expect(readdirSync(ro.dir!)).toEqual(['samples.db']);
  });
});

describe('item 15: a WAL file whose -wal holds data but whose -shm is missing, on read-only media', () => {
  it('item 15: is refused in one line (reading the file alone would show stale data), not read', async () => {
    const src = mkdtempSync(join(base, 'live-'));
    const path = join(src, 'samples.db');
    const recorder = new SqliteRecorder({ path, instance: 'api-1' });
    recorder.record({ key: 'order:lock:product:1', at: Date.now(), holdMs: 1, ttlMs: 3000, outcome: 'released' });
    await recorder.close();
    // A writer that is still running: its last commit lives in the -wal only.
    const writer = new Database(path);
    writer.pragma('wal_autocheckpoint = 0');
    writer.exec("INSERT INTO instances (instance) VALUES ('late')");
    const copied = readOnlyDirWith('torn', [path, `${path}-wal`]);
    writer.close();
    if (copied.dir === undefined) return void expect.soft(copied.how).toBe('skipped');
    const { code, stderr } = await runCli(['stats', '--db', join(copied.dir, 'samples.db')]);
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/samples\.db has a write-ahead log .* but no .*-shm, in a directory that cannot be written/);
  });
});
