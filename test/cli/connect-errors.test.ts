import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { freePort, startRedisServer, type RedisServer } from '../helpers/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.stop();
});

/** Runs `locks` against a URL: exit code and stderr. */
async function locks(url: string) {
  const { code, stdout, stderr } = await runCli(['locks', '--redis', url]);
  return { code, stdout, stderr: stderr.trim() };
}

describe('a connection that fails says why, in one line, exit 2', () => {
  it('refused: nothing listens there', async () => {
    const port = await freePort();
    const { code, stderr } = await locks(`redis://127.0.0.1:${port}`);
    expect(code).toBe(2);
    expect(stderr).toBe(`ttl-advisor: Cannot connect to Redis at redis://127.0.0.1:${port}: connection refused: nothing listens at 127.0.0.1:${port}`);
  });

  it('an unknown host', async () => {
    const { code, stderr } = await locks('redis://no-such-host.invalid:6379');
    expect(code).toBe(2);
    expect(stderr).toBe('ttl-advisor: Cannot connect to Redis at redis://no-such-host.invalid:6379: unknown host no-such-host.invalid');
  });

  it.each([
    ['not a URL', 'notaurl', /^ttl-advisor: Invalid Redis URL notaurl: expected redis:\/\/\[user:password@\]host\[:port\]\[\/db\]/],
    ['another scheme', 'http://127.0.0.1:6379', /^ttl-advisor: Invalid Redis URL http:\/\/127\.0\.0\.1:6379: expected redis:\/\/ or rediss:\/\/ \(TLS\), got http:\/\/$/],
  ])('%s', async (_name, url, message) => {
    const { code, stderr } = await locks(url);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr.split('\n')).toHaveLength(1);
  });

  it('a wrong password: authentication failed, and the password is never shown', async () => {
    const admin = new Redis(server.url);
    await admin.config('SET', 'requirepass', 's3cret-pass');
    try {
      const { code, stderr } = await locks(`redis://:wrong-pass@127.0.0.1:${server.port}`);
      expect(code).toBe(2);
      expect(stderr).toBe(`ttl-advisor: Cannot connect to Redis at redis://:***@127.0.0.1:${server.port}: authentication failed: check the user name and password in the URL`);
    } finally {
      await admin.auth('s3cret-pass');
      await admin.config('SET', 'requirepass', '');
      admin.disconnect();
    }
  });

  it("a password the server does not need: ioredis's own warning stays off our output", async () => {
    const { code, stdout, stderr } = await locks(`redis://:unneeded@127.0.0.1:${server.port}`);
    expect(code).toBe(0);
    expect(stdout).toMatch(/No live locks/);
    expect(stderr).toBe('');
  });

  it('TLS to a server that speaks none: the timeout says what to check', async () => {
    const { code, stderr } = await locks(`rediss://127.0.0.1:${server.port}`);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^ttl-advisor: Cannot connect to Redis at rediss:\/\/127\.0\.0\.1:\d+: .*TLS/);
  }, 15_000);
});
