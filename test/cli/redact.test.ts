import { describe, expect, it } from 'vitest';
import { built } from '../helpers/built.js';
import { runCli } from '../helpers/cli.js';

describe('Redis URLs in messages', () => {
  it('no command prints a password, whichever form it takes', async () => {
    for (const url of ['redis://127.0.0.1:1/0?password=hunter2', 'redis://ops:hun/ter#2@127.0.0.1:1']) {
      for (const args of [['locks', '--redis', url], ['collect', '--redis', url, '--db', '/nonexistent/x.db']]) {
        const { code, stderr, stdout } = await runCli(args);
        expect(code).toBe(2);
        expect(stderr + stdout).not.toMatch(/hunter2|hun\/ter|ter#2/);
      }
    }
  });
});

describe('the real command line', () => {
  it('prints no password on stderr, Node’s own warnings included', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const cli = built('src/cli/main.ts');
    for (const url of ['redis://ops:hun/ter#2@127.0.0.1:1', 'redis://127.0.0.1:1/0?password=hunter2']) {
      const result = await promisify(execFile)(process.execPath, [cli, 'locks', '--redis', url]).catch(
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect('code' in result ? result.code : 0).toBe(2);
      expect(result.stderr).not.toMatch(/hunter2|hun\/ter|ter#2/);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
