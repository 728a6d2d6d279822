import { describe, expect, it } from 'vitest';
import { TtlAdvisorError } from '../src/errors.js';
import { closedText, connectionFailureText, noAnswerText, nodeOfUrl, parseRedisUrl } from '../src/redis-url.js';
import { RespConnection } from '../src/watch/resp.js';
import { runCli } from './helpers/cli.js';
import { freePort } from './helpers/redis-server.js';

/** An error as Node's sockets and the Redis clients raise them. */
const failure = (message: string, code?: string) => Object.assign(new Error(message), code === undefined ? {} : { code });

describe('Redis URLs', () => {
  it('name a node, its credentials and database', () => {
    expect(nodeOfUrl('rediss://u:p%40ss@[::1]:6380/2')).toEqual({ host: '::1', port: 6380, tls: true, username: 'u', password: 'p@ss', db: 2 });
    expect(nodeOfUrl('redis://:secret@h')).toEqual({ host: 'h', port: 6379, tls: false, username: undefined, password: 'secret', db: undefined });
    expect(nodeOfUrl('redis://h:7000?password=q')).toMatchObject({ port: 7000, password: 'q' });
  });

  it.each([
    ['not a URL', 'redis://u:secret@h:99999', /^Invalid Redis URL redis:\/\/u:\*\*\*@h:99999: expected redis:\/\/\[user:password@\]host\[:port\]\[\/db\] \(rediss:\/\/ for TLS\)/],
    ['another scheme', 'http://u:secret@h:1', /^Invalid Redis URL http:\/\/u:\*\*\*@h:1: expected redis:\/\/ or rediss:\/\/ \(TLS\), got http:\/\/$/],
  ])('refuse %s in one line that hides the password', (_name, url, message) => {
    for (const parse of [parseRedisUrl, nodeOfUrl]) {
      expect(() => parse(url)).toThrow(TtlAdvisorError);
      expect(() => parse(url)).toThrow(message);
      expect(() => parse(url)).not.toThrow(/secret/);
    }
  });
});

describe('why a connection failed, in one wording', () => {
  const plain = { host: '127.0.0.1', port: 6379, tls: false };
  const tls = { ...plain, tls: true };

  it.each([
    ['refused', failure('connect ECONNREFUSED', 'ECONNREFUSED'), plain, 'connection refused: nothing listens at 127.0.0.1:6379'],
    ['unknown host', failure('getaddrinfo ENOTFOUND', 'ENOTFOUND'), { ...plain, host: 'no-such.invalid' }, 'unknown host no-such.invalid'],
    ['DNS not answering', failure('getaddrinfo EAI_AGAIN', 'EAI_AGAIN'), { ...plain, host: 'dns.example' }, 'unknown host dns.example'],
    ['timed out', failure('connect ETIMEDOUT', 'ETIMEDOUT'), plain, 'connection to 127.0.0.1:6379 timed out'],
    ['closed', failure('read ECONNRESET', 'ECONNRESET'), plain, '127.0.0.1:6379 closed the connection'],
    ['closed, over TLS', failure('write EPIPE', 'EPIPE'), tls, '127.0.0.1:6379 closed the connection (rediss:// speaks TLS: does the server?)'],
    ['IPv6', failure('connect ECONNREFUSED', 'ECONNREFUSED'), { ...plain, host: '::1' }, 'connection refused: nothing listens at [::1]:6379'],
    ['a wrong password', failure('WRONGPASS invalid username-password pair or user is disabled.'), plain, 'authentication failed: check the user name and password in the URL'],
    ['no password given', failure('NOAUTH Authentication required.'), plain, 'authentication failed: check the user name and password in the URL'],
    [
      'a password the server does not have',
      failure('ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?'),
      plain,
      'authentication failed: check the user name and password in the URL',
    ],
    ['TLS', failure('routines:ssl3_get_record:wrong version number', 'ERR_SSL_WRONG_VERSION_NUMBER'), tls, 'TLS handshake failed: routines:ssl3_get_record:wrong version number'],
    ['a certificate', failure('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT'), tls, 'TLS handshake failed: self-signed certificate'],
    ['anything else keeps its message', failure('LOADING Redis is loading the dataset in memory'), plain, 'LOADING Redis is loading the dataset in memory'],
  ])('%s', (_name, error, node, text) => {
    expect(connectionFailureText(error, node)).toBe(text);
  });

  it('a server that never answers or hangs up: the TLS hint only for rediss://', () => {
    expect(noAnswerText(plain, 5000)).toBe('no answer within 5000 ms');
    expect(noAnswerText(tls, 5000)).toBe('no answer within 5000 ms (rediss:// speaks TLS: does the server?)');
    expect(closedText(plain)).toBe('127.0.0.1:6379 closed the connection');
  });

  it("watch's own connection and the CLI's clients say it alike", async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const expected = `connection refused: nothing listens at 127.0.0.1:${port}`;
    await expect(RespConnection.open(nodeOfUrl(url), { timeoutMs: 2000 })).rejects.toThrow(expected);
    const { code, stderr } = await runCli(['locks', '--redis', url]);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(`ttl-advisor: Cannot connect to Redis at ${url}: ${expected}`);
  });
});
