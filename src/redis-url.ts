import { TtlAdvisorError } from './errors.js';
import { cutUserinfoText, cutsUserinfo, redactUrl } from './redact-url.js';

/**
 * Redis URLs, and why a connection to one failed, in one wording for every
 * door that connects: the CLI's clients (ioredis, node-redis) and `watch`'s
 * own RESP connections. A leaf module: it imports no folder.
 */

/** The node a `redis://` or `rediss://` URL names, with its credentials. */
export interface RedisUrlNode {
  host: string;
  port: number;
  tls: boolean;
  username: string | undefined;
  password: string | undefined;
  /** The database the URL selects (its path, or `?db=`), if any. */
  db: number | undefined;
}

/** Where a connection goes, as messages name it: `host:port` (`[::1]:6379` for IPv6). */
type Where = Pick<RedisUrlNode, 'host' | 'port' | 'tls'>;

/**
 * A `redis://` or `rediss://` URL, or a clear {@link TtlAdvisorError} that never
 * shows its password. Checked before any client sees it: the clients parse URLs
 * with Node's legacy parser, whose warning about an invalid URL prints it whole,
 * password included.
 */
export function parseRedisUrl(url: string): URL {
  const text = String(url);
  // URL parsers end the userinfo at the first `/`, `?` or `#`: with one unencoded in the password, the
  // rest of the password becomes the host (`redis://:x@Hunter/rest@host` → "unknown host Hunter").
  // An `@` after one of them is such a cut password; the message shows no part of the URL.
  if (cutsUserinfo(text)) throw new TtlAdvisorError(cutUserinfoText('Redis'));
  const shown = redactUrl(text);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new TtlAdvisorError(
      `Invalid Redis URL ${shown}: expected redis://[user:password@]host[:port][/db] (rediss:// for TLS), with / # @ : percent-encoded in the user name and password`,
    );
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new TtlAdvisorError(`Invalid Redis URL ${shown}: expected redis:// or rediss:// (TLS), got ${parsed.protocol}//`);
  }
  databaseOf(parsed, shown);
  return parsed;
}

/**
 * The database a URL selects: its path (`/2`), else ioredis's `?db=2`; undefined
 * for none (database 0). Anything but a whole number ≥ 0 is refused: a client
 * would send `SELECT NaN`, or quietly select another database.
 */
function databaseOf(parsed: URL, shown: string): number | undefined {
  const path = parsed.pathname;
  const text = path.length > 1 ? path.slice(1) : (parsed.searchParams.get('db') ?? undefined);
  if (text === undefined) return undefined;
  const db = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(db)) {
    const where = path.length > 1 ? `the path ${path}` : `?db=${text}`;
    throw new TtlAdvisorError(`Invalid Redis URL ${shown}: ${where} is not a database number; expected /0, /1, … (no path: database 0)`);
  }
  return db;
}

/** The node a Redis URL names, with its credentials (`?password=` too); a {@link TtlAdvisorError} for an invalid URL. */
export function nodeOfUrl(url: string): RedisUrlNode {
  const parsed = parseRedisUrl(url);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
    tls: parsed.protocol === 'rediss:',
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : parsed.username ? undefined : (parsed.searchParams.get('password') ?? undefined),
    db: databaseOf(parsed, redactUrl(url)),
  };
}

function whereOf(node: Where): string {
  return `${node.host.includes(':') ? `[${node.host}]` : node.host}:${node.port}`;
}

/** What to check when a `rediss://` connection fails without saying why. */
function tlsHint(node: Where): string {
  return node.tls ? ' (rediss:// speaks TLS: does the server?)' : '';
}

/** A connection the server closed before it answered. */
export function closedText(node: Where): string {
  return `${whereOf(node)} closed the connection${tlsHint(node)}`;
}

/** A server that accepted the connection and did not answer in time. */
export function noAnswerText(node: Where, timeoutMs: number): string {
  return `no answer within ${timeoutMs} ms${tlsHint(node)}`;
}

/** The words for a failed login, whichever client saw it. */
const AUTH_FAILED_TEXT = 'authentication failed: check the user name and password in the URL';

/**
 * Why a connection failed, in words: refused, unknown host, timed out,
 * closed, authentication, TLS — the cause, never a client's generic
 * "Connection is closed". Anything else keeps its own message.
 */
export function connectionFailureText(error: unknown, node: Where): string {
  const e = error as { code?: string; message?: string } | undefined;
  const message = String(e?.message ?? error);
  switch (e?.code) {
    case 'ECONNREFUSED':
      return `connection refused: nothing listens at ${whereOf(node)}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `unknown host ${node.host}`;
    case 'ETIMEDOUT':
      return `connection to ${whereOf(node)} timed out`;
    case 'ECONNRESET':
    case 'EPIPE':
      return closedText(node);
  }
  // A password the server does not have is a wrong password too (Redis 6+: "called without any password configured").
  if (/WRONGPASS|NOAUTH|invalid username-password|invalid password|without any password configured|no password is set/i.test(message)) {
    return AUTH_FAILED_TEXT;
  }
  if (/SSL|TLS|certificate|self.signed|wrong version number/i.test(message) || /^ERR_SSL|^ERR_TLS|CERT/.test(e?.code ?? '')) {
    return `TLS handshake failed: ${message}`;
  }
  return message;
}
