/**
 * An HTTP(S) URL as messages and reports may show it: the password of the userinfo hidden, and
 * query parameters that carry credentials (`?access_token=`, `?password=`…). The equivalent of
 * `redactUrl` for Redis URLs, for the Prometheus API's URL. Works on text that does not parse.
 */
export function redactHttpUrl(url: string): string {
  let text = String(url);
  const start = text.indexOf('//');
  // The userinfo ends at the last `@` before the path: an unencoded `/` or `#` in a password fools a parser.
  const end = text.indexOf('/', start + 2);
  const at = text.lastIndexOf('@', end < 0 ? text.length : end);
  const lastAt = text.lastIndexOf('@');
  const userinfoEnd = start >= 0 && at > start ? at : start >= 0 && lastAt > start && !text.slice(start + 2, lastAt).includes('?') ? lastAt : -1;
  if (userinfoEnd > start && start >= 0) {
    const userinfo = text.slice(start + 2, userinfoEnd);
    const colon = userinfo.indexOf(':');
    text = `${text.slice(0, start + 2)}${colon >= 0 ? `${userinfo.slice(0, colon)}:***` : '***'}${text.slice(userinfoEnd)}`;
  }
  return text.replace(/([?&;](?:password|pass|pwd|auth|token|access_token|api_key|apikey|key|secret|sig|signature)=)[^&;#]*/gi, '$1***');
}
