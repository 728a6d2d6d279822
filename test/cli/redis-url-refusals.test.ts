import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/cli/redis.js';
import { TtlAdvisorError } from '../../src/errors.js';
import { sendCommandOf } from '../../src/redis-client.js';
import { nodeOfUrl } from '../../src/redis-url.js';
import { KeyspaceWatcher } from '../../src/watch/watcher.js';
import { built } from '../helpers/built.js';
import { runCli } from '../helpers/cli.js';
import { useOwnRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';

const cli = built('src/cli/main.ts');
const dir = tempDir();

// Its own server: a test sets a password on it, another writes to database 3.
let server: RedisServer;
let admin: Redis;
useOwnRedisServer((s, client) => void ([server, admin] = [s, client]));

/** Runs a command in process: exit code, stdout, and stderr's lines. */
async function cliLines(args: string[]) {
  const { code, stdout, stderr } = await runCli(args);
  return { code, stdout, lines: stderr.trimEnd().split('\n'), stderr };
}

/** The real command line (main.ts) in a child process. */
async function realCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [cli, ...args]).then(
    (result) => ({ code: 0, ...result }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

const CUT_RULE =
  'ttl-advisor: Invalid Redis URL (not shown: it may hold a password): an @ comes after a / ? or #, where a parser ends the password; percent-encode @ / ? # in the user name and password (%40 %2F %3F %23)';

describe('item 9: a password with an unencoded @ followed by / or #', () => {
  // The password is s3cr@Hunter/rest (or with # or ?): a URL parser ends the userinfo at the first / ? #,
  // and took `Hunter` for the host ("unknown host Hunter").
  const cutUrls = () => [
    `redis://:s3cr@Hunter/rest@127.0.0.1:${server.port}`,
    `redis://ops:s3cr@Hunter#rest@127.0.0.1:${server.port}`,
    `redis://:s3cr@Hunter?rest@127.0.0.1:${server.port}/0`,
  ];
  const secret = /s3cr|Hunter|rest/i;

  it('item 9: locks and collect refuse it in one line that names the rule and shows no part of the userinfo', async () => {
    for (const url of cutUrls()) {
      const db = join(dir, 'cut.db');
      for (const args of [['locks', '--redis', url], ['collect', '--redis', url, '--db', db]]) {
        const { code, stdout, stderr } = await cliLines(args);
        expect(code, stderr).toBe(2);
        expect(stderr).toBe(`${CUT_RULE}\n`);
        expect(stdout + stderr).not.toMatch(secret);
      }
      expect(existsSync(db)).toBe(false);
    }
  });

  it('item 9: watch refuses it too (the real command line)', async () => {
    const url = cutUrls()[0]!;
    const db = join(dir, 'watch-cut.db');
    const { code, stdout, stderr } = await realCli(['watch', '--redis', url, '--db', db]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`${CUT_RULE}\n`);
    expect(existsSync(db)).toBe(false);
  });

  it("item 9: and the library's watcher, which parses the URL itself", async () => {
    for (const url of cutUrls()) {
      await expect(KeyspaceWatcher.start({ url, recorder: { record: () => undefined } })).rejects.toThrow(CUT_RULE.replace('ttl-advisor: ', ''));
      expect(() => nodeOfUrl(url)).toThrow(TtlAdvisorError);
    }
  });

  it('item 9: control: the same password percent-encoded is accepted and logs in', async () => {
    const password = 's3cr@Hunter/rest#x?y';
    const encoded = encodeURIComponent(password);
    expect(encoded).toBe('s3cr%40Hunter%2Frest%23x%3Fy');
    expect(nodeOfUrl(`redis://:${encoded}@127.0.0.1:${server.port}`)).toMatchObject({ host: '127.0.0.1', password });
    await admin.config('SET', 'requirepass', password);
    try {
      const { code, stdout, stderr } = await runCli(['locks', '--redis', `redis://:${encoded}@127.0.0.1:${server.port}`]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).toMatch(/No live locks/);
    } finally {
      await admin.auth(password);
      await admin.config('SET', 'requirepass', '');
    }
  });
});

describe('item 10: the database in the URL', () => {
  const url = (path: string) => `redis://127.0.0.1:${server.port}${path}`;

  it.each(['/abc', '/1.5', '/-1', '/0/', '?db=abc'])('item 10: %s is not a database number: one line, exit 2, no stack trace', async (path) => {
    const where = path.startsWith('?') ? path : `the path ${path}`;
    const line = `ttl-advisor: Invalid Redis URL ${url(path)}: ${where} is not a database number; expected /0, /1, … (no path: database 0)`;
    const db = join(dir, 'nan.db');
    for (const args of [['locks', '--redis', url(path)], ['collect', '--redis', url(path), '--db', db]]) {
      const { code, stdout, stderr } = await cliLines(args);
      expect(code, stderr).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toBe(`${line}\n`);
    }
    expect(existsSync(db)).toBe(false);
  });

  it('item 10: a database the server does not have: one line saying so, exit 2 (locks and collect)', async () => {
    const said = new RegExp(`^ttl-advisor: Redis at redis://127\\.0\\.0\\.1:${server.port}/99 has no database 99 \\(.*DB index.*\\)$`);
    const locks = await cliLines(['locks', '--redis', url('/99')]);
    expect(locks.code).toBe(2);
    expect(locks.stdout).toBe('');
    expect(locks.lines).toHaveLength(1);
    expect(locks.lines[0]).toMatch(said);
    // collect says what it will do at once, before Redis answers; then the one line of the failure.
    const collect = await cliLines(['collect', '--redis', url('/99'), '--db', join(dir, 'db99.db')]);
    expect(collect.code).toBe(2);
    expect(collect.lines, collect.stderr).toHaveLength(2);
    expect(collect.lines[0]).toMatch(/^collecting /);
    expect(collect.lines[1]).toMatch(said);
  });

  it('item 10: control: /3 lists database 3, and no path database 0', async () => {
    await admin.select(3);
    await admin.set('order:lock:item10:in-db3', 'token-3', 'PX', 60_000);
    await admin.select(0);
    await admin.set('order:lock:item10:in-db0', 'token-0', 'PX', 60_000);
    try {
      const keysIn = async (path: string) => {
        const { code, stdout, stderr } = await runCli(['locks', '--redis', url(path), '--match', '*item10*', '--format', 'json']);
        expect(code, stderr).toBe(0);
        return (JSON.parse(stdout) as { locks: { key: string }[] }).locks.map((lock) => lock.key);
      };
      expect(await keysIn('/3')).toEqual(['order:lock:item10:in-db3']);
      expect(await keysIn('')).toEqual(['order:lock:item10:in-db0']);
      expect(await keysIn('/0')).toEqual(['order:lock:item10:in-db0']);
    } finally {
      await admin.del('order:lock:item10:in-db0');
      await admin.select(3);
      await admin.del('order:lock:item10:in-db3');
      await admin.select(0);
    }
  });

  it.each(['ioredis', 'redis'] as const)('item 10: through %s, for a one-off and a following connection alike', async (library) => {
    for (const purpose of ['inspect', 'follow'] as const) {
      await expect(connectRedis(url('/99'), purpose, { library })).rejects.toThrow(
        new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${server.port}/99 has no database 99 \\(.*DB index.*\\)$`),
      );
      // Control: a database the server has is the one commands reach, named by the path or by ioredis's ?db=.
      for (const path of ['/3', '?db=3']) {
        const connection = await connectRedis(url(path), purpose, { library });
        try {
          expect(String(await sendCommandOf(connection.client)(['CLIENT', 'INFO']))).toMatch(/ db=3 /);
        } finally {
          connection.close();
        }
      }
    }
  });
});
