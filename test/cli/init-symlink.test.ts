import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

// Issue 22, item 15 (part): `init --policy` replaced a dangling symbolic link with a file (existsSync says a dangling
// link does not exist). init never overwrites: it refuses, in one line, exit 2, and the link stays as it was.
const dir = tempDir();
const demo = buildDb(dir, 'demo.db');

describe('item 15: init --policy and what is already at its path', () => {
  it('item 15: a dangling symbolic link is refused in one line, exit 2, the link left as it was and its target not created', async () => {
    const link = join(dir, 'dangling-policy.json');
    symlinkSync('policies/ttl-policy.json', link);
    const { code, stdout, stderr } = await runCli(['init', '--policy', link, '--db', demo]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`ttl-advisor: ${link} is a symbolic link to policies/ttl-policy.json, which does not exist; init never replaces a link (create its target, or pass --policy <target>)\n`);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe('policies/ttl-policy.json');
    expect(existsSync(join(dir, 'policies'))).toBe(false);
  });

  it('item 15: a link to an existing file, and a file, are refused as existing; the file is unchanged', async () => {
    const target = join(dir, 'existing.json');
    writeFileSync(target, '{"locks":{}}\n');
    const link = join(dir, 'live-link.json');
    symlinkSync(target, link);
    for (const path of [link, target]) {
      const { code, stderr } = await runCli(['init', '--policy', path, '--db', demo]);
      expect(code).toBe(2);
      expect(stderr).toBe(`ttl-advisor: ${path} exists already; ttl-advisor apply updates it\n`);
    }
    expect(readFileSync(target, 'utf8')).toBe('{"locks":{}}\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it('item 15: the control — with nothing at the path, init writes the file (and leaves no temporary file)', async () => {
    const path = join(dir, 'new-policy.json');
    const { code, stdout, stderr } = await runCli(['init', '--policy', path, '--db', demo]);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^wrote .*new-policy\.json: \d+ pattern\(s\)$/m);
    expect(lstatSync(path).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(path, 'utf8')).locks['order:lock:product:{id}']).toEqual({ ttlMs: 3000 });
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('item 15: a directory that does not exist is one line, exit 2', async () => {
    const path = join(dir, 'no', 'such', 'policy.json');
    const { code, stderr } = await runCli(['init', '--policy', path, '--db', demo]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^ttl-advisor: Cannot write .*policy\.json: ENOENT[^\n]*\n$/);
  });
});
