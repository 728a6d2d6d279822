import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { built } from '../helpers/built.js';
import { runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';

const cli = built('src/cli/main.ts');
const dir = tempDir();
const commandNames = buildProgram().commands.map((command) => command.name());

/** What each command needs besides the flag under test, so the flag is what fails. */
const REQUIRED: Record<string, string[]> = { collect: ['--db', 'x.db'], prune: ['--older-than', '30d'] };

/** A usage error: exit 2, nothing on stdout, and exactly one line on stderr (returned). */
async function usageError(args: string[]): Promise<string> {
  const { code, stdout, stderr } = await runCli(args);
  expect(code, stderr).toBe(2);
  expect(stdout).toBe('');
  expect(stderr.endsWith('\n')).toBe(true);
  expect(stderr.trimEnd().split('\n'), stderr).toHaveLength(1);
  return stderr.trimEnd();
}

describe('item 15: usage errors are one line, exit 2', () => {
  it('item 15: an unknown option names the help to read, for every command', async () => {
    expect(commandNames.length).toBeGreaterThanOrEqual(10);
    for (const name of commandNames) {
      expect(await usageError([name, ...(REQUIRED[name] ?? []), '--x'])).toBe(`ttl-advisor: unknown option '--x' (see ttl-advisor ${name} --help)`);
    }
    expect(await usageError(['--x'])).toBe("ttl-advisor: unknown option '--x' (see ttl-advisor --help)");
  });

  it("item 15: commander's suggestion stays, on the same line", async () => {
    expect(await usageError(['locks', '--matc', '*'])).toBe("ttl-advisor: unknown option '--matc'; did you mean --match? (see ttl-advisor locks --help)");
  });

  it.each([
    ['an unknown command', ['nosuch'], "ttl-advisor: unknown command 'nosuch' (see ttl-advisor --help)"],
    ['a missing required option', ['collect'], "ttl-advisor: required option '--db <file>' not specified (see ttl-advisor collect --help)"],
    ['an option without its value', ['locks', '--match'], "ttl-advisor: option '--match <glob>' argument missing (see ttl-advisor locks --help)"],
    ['an argument too many', ['locks', 'extra'], "ttl-advisor: too many arguments for 'locks'. Expected 0 arguments but got 1. (see ttl-advisor locks --help)"],
  ])('item 15: %s', async (_name, args, line) => {
    expect(await usageError(args)).toBe(line);
  });

  it('item 15: no arguments: a short usage on stderr (the commands, where to read on), exit 2', async () => {
    const { code, stdout, stderr } = await runCli([]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    const lines = stderr.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(4);
    expect(lines[0]).toBe('Usage: ttl-advisor <command> [options]');
    expect(lines[1]).toBe(`Commands: ${commandNames.join(', ')}`);
    expect(stderr).toMatch(/ttl-advisor --help/);
    expect(stderr).toMatch(/ttl-advisor <command> --help/);
    // The full help is still there when asked for.
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.split('\n').length).toBeGreaterThan(20);
  });

  it.each(['report', 'check', 'apply', 'init'])('%s --help lists its own options first, the Prometheus ones under a heading after them', async (command) => {
    const { code, stdout } = await runCli([command, '--help']);
    expect(code).toBe(0);
    const at = (text: string) => stdout.indexOf(text);
    const heading = at('\nReading from Prometheus instead (--prometheus):\n');
    expect(at('  --db <file>')).toBeGreaterThan(0);
    expect(heading).toBeGreaterThan(at('  --help'));
    for (const option of ['--prometheus <url>', '--prometheus-ca', '--prometheus-header', '--prometheus-timeout', '--metric', '--pattern-label']) {
      expect(at(`  ${option}`), option).toBeGreaterThan(heading);
    }
  });

  it('item 15: the real command line, with no arguments and with an unknown option', async () => {
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, [cli, ...args]).then(
        (result) => ({ code: 0, ...result }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    const bare = await run([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toBe((await runCli([])).stderr);
    const unknown = await run(['report', '--x']);
    expect(unknown).toMatchObject({ code: 2, stdout: '', stderr: "ttl-advisor: unknown option '--x' (see ttl-advisor report --help)\n" });
  });
});

describe('item 15: collect refuses empty names', () => {
  it.each([
    ['--group', '<name>'],
    ['--stream', '<key>'],
    ['--consumer', '<name>'],
  ])('item 15: an empty %s is one line, exit 2, and nothing is created', async (flag, placeholder) => {
    const db = join(dir, `empty${flag}.db`);
    for (const value of ['', '  ']) {
      expect(await usageError(['collect', '--redis', 'redis://127.0.0.1:1', '--db', db, flag, value])).toBe(
        `ttl-advisor: option '${flag} ${placeholder}' argument '${value}' is invalid. Expected ${flag} to be a non-empty name. (see ttl-advisor collect --help)`,
      );
    }
    expect(existsSync(db)).toBe(false);
  });

  it('item 15: control: a name passes, and collect goes on to connect', async () => {
    const port = await freePort();
    const { code, stderr } = await runCli(['collect', '--redis', `redis://127.0.0.1:${port}`, '--db', join(dir, 'named.db'), '--group', 'g', '--stream', 's', '--consumer', 'c']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^collecting s \(group g, consumer c\) from redis:\/\/127\.0\.0\.1:\d+ into \S+named\.db\n/);
    expect(stderr).toMatch(/Cannot connect to Redis at .*: connection refused/);
  });
});
