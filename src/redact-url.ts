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
