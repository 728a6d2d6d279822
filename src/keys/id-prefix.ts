/**
 * Keys that are a prefix ending in a separator, then a decimal id
 * (`order:lock:product:123`) or a UUID (`cart:lock:7f1c0e2a-…`), share their
 * pattern with every other id after that prefix: the heuristics of `patternOf`
 * turn a digits-only token into `{id}` and a UUID into `{uuid}`, and a
 * separator other than `-` can be part of neither. So a cache by prefix finds
 * the pattern of millions of distinct ids with one lookup. (Templates may name
 * literal ids: with templates, derive every key.)
 */

/** `:` `/` `_` `.` `#` `|` `=` `@`: separators before a decimal id, by character code (a table: a set's lookup cost more than the rest of the scan). */
const ID_SEPARATOR = new Uint8Array(128);
for (const c of [58, 47, 95, 46, 35, 124, 61, 64]) ID_SEPARATOR[c] = 1;
const CANONICAL_UUID = '00000000-0000-0000-0000-000000000000';
const UUID_MARK = '\u0000uuid';

/** Whether a UUID (8-4-4-4-12 hex digits, either case) starts at `at` and runs to the end of `key`. */
function isUuidAt(key: string, at: number): boolean {
  if (at <= 0) return false;
  for (let j = 0; j < 36; j++) {
    const c = key.charCodeAt(at + j);
    if (j === 8 || j === 13 || j === 18 || j === 23) {
      if (c !== 45) return false;
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) return false;
  }
  return true;
}

/**
 * The cache key shared by every key with the same prefix and an id of the same
 * kind (decimal or UUID), for a key whose {@link idStartOf} is `start` (not -1).
 */
export function idPrefixAt(key: string, start: number): string {
  const prefix = key.slice(0, start >> 1);
  return start & 1 ? prefix + UUID_MARK : prefix;
}

/** Where the trailing id starts, times two, plus one for a UUID; -1 when the key does not end in a separator and an id. */
export function idStartOf(key: string): number {
  let i = key.length;
  let uuid = 0;
  if (isUuidAt(key, key.length - 36)) {
    i = key.length - 36;
    uuid = 1;
  } else while (i > 0 && key.charCodeAt(i - 1) - 48 >>> 0 <= 9) i--;
  if (i === key.length || i <= 0 || ID_SEPARATOR[key.charCodeAt(i - 1)] !== 1) return -1;
  return i * 2 + uuid;
}

/** Whether two keys with the same {@link idStartOf} (`start`, not -1) have the same id prefix, so the same pattern. */
export function samePrefixAt(a: string, b: string, start: number): boolean {
  for (let i = (start >> 1) - 1; i >= 0; i--) if (a.charCodeAt(i) !== b.charCodeAt(i)) return false;
  return true;
}

/** A key with the same pattern as every key behind an {@link idPrefixOf} cache key. */
export function representativeOf(idPrefix: string): string {
  return idPrefix.endsWith(UUID_MARK) ? idPrefix.slice(0, -UUID_MARK.length) + CANONICAL_UUID : `${idPrefix}0`;
}
