/**
 * Any URL a message or a report shows — a Redis URL, the Prometheus API's — with every credential
 * hidden, by one rule and one list: a URL of either kind may carry a secret the other's would. A leaf
 * module: it imports nothing.
 */

/** Query parameters whose value is a credential: `?password=` (which ioredis honours), `?access_token=`, a signed URL's `sig`… */
const SECRET_PARAMETERS = ['password', 'pass', 'pwd', 'auth', 'token', 'access_token', 'api_key', 'apikey', 'key', 'secret', 'sig', 'signature'];
const SECRET_VALUE = new RegExp(`([?&;](?:${SECRET_PARAMETERS.join('|')})=)[^&;#]*`, 'gi');

/**
 * The URL with the password of its userinfo and the values of {@link SECRET_PARAMETERS} hidden. Works
 * on text that does not parse. The userinfo runs to the last `@`, since a password may hold an unencoded
 * `/`, `?`, `#` or `@` that fools a URL parser: an `@` later in a path or query hides more than it must,
 * never less. The user name stays only when it holds none of those (else it may be a cut password).
 */
export function redactUrl(url: string): string {
  let text = String(url);
  const start = text.indexOf('//');
  const at = text.lastIndexOf('@');
  if (start >= 0 && at > start) {
    const userinfo = text.slice(start + 2, at);
    const colon = userinfo.indexOf(':');
    const user = colon >= 0 && !/[@/?#]/.test(userinfo.slice(0, colon)) ? `${userinfo.slice(0, colon)}:` : '';
    text = `${text.slice(0, start + 2)}${user}***${text.slice(at)}`;
  }
  return text.replace(SECRET_VALUE, '$1***');
}

/**
 * Whether a URL's userinfo is one a parser would cut: an `@` after the first `/`, `?` or `#` past the
 * scheme's `//`. URL parsers end the userinfo there, so with one of them unencoded in the password the
 * rest of the password becomes the host and the path (`http://u:s3cr@Hunter/rest@host` goes to `Hunter`,
 * with `s3cr` as the password). Such a URL is refused, for Redis and Prometheus alike, and not shown.
 */
export function cutsUserinfo(url: string): boolean {
  const text = String(url);
  const start = text.indexOf('//');
  if (start < 0) return false;
  const rest = text.slice(start + 2);
  const end = rest.search(/[/?#]/);
  return end >= 0 && rest.indexOf('@', end) >= 0;
}

/** The refusal of a URL whose userinfo a parser would cut ({@link cutsUserinfo}): it names the rule, never the URL. */
export function cutUserinfoText(which: string): string {
  return (
    `Invalid ${which} URL (not shown: it may hold a password): an @ comes after a / ? or #, where a parser ends the password; ` +
    'percent-encode @ / ? # in the user name and password (%40 %2F %3F %23)'
  );
}
