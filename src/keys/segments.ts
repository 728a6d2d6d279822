import { truncate } from '../text.js';

/**
 * A key cut into positions, as the miner (`miner.ts`) learns them: the
 * separators people put between the parts of a lock key, and each part's value
 * masked by its shape (an id-shaped value becomes its placeholder at once).
 *
 * - Separators: `:` `/` `|` `#`; in a key that has none of them, `.`
 *   (`lock.order.42`). A `.` inside a key that has them is part of a value
 *   (`lock:user:anna.smith@gmail.com`).
 * - A Redis Cluster hash tag (`{…}`) is never cut: `lock:{user:1}:cart` has three
 *   positions. Its braces are literal text, written doubled in a pattern
 *   (`{{` `}}`) so that a reader tells them from a placeholder (`{id}`).
 * - `-` and `_` inside a value are left to the data: a value is masked token by
 *   token (`product-123` → `product-{id}`), and a position whose whole values are
 *   many and varied (slugs, SKUs) is learned by the miner.
 */

/** A key's positions: `values[i]` follows `seps[i]` (`seps[0]` is ''). */
export interface Segments {
  seps: string[];
  values: string[];
  /** The values as they were in the key, before masking (a key's; a pattern name has none). */
  raw?: string[];
}

/** Longest pattern kept, in code points; longer ones are cut and end in `…`. */
export const MAX_PATTERN_LENGTH = 200;

/** Positions kept apart at most; the rest of a longer key is one last value. */
export const MAX_SEGMENTS = 24;

/** Cuts a key into its positions (see the module comment); every value masked by {@link maskValue}. */
export function segmentsOf(key: string): Segments {
  const segments = cutKey(key);
  segments.values = segments.values.map(maskValue);
  return segments;
}

/**
 * A key's positions with their values as they are (`values` and `raw` alike): the miner masks a value
 * only where it needs to (not under a learned position, not a literal it has seen).
 */
export function cutKey(key: string): Segments & { raw: string[] } {
  const primary = hasPrimarySeparator(key);
  const seps: string[] = [''];
  const raw: string[] = [];
  let start = 0;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c === 123) {
      // A hash tag runs to the first `}` after it (Redis's rule); an unclosed `{` is a character like any other.
      const close = key.indexOf('}', i + 1);
      if (close > i) i = close;
    } else if ((primary ? c === 58 || c === 47 || c === 124 || c === 35 : c === 46) && raw.length < MAX_SEGMENTS - 1) {
      raw.push(key.slice(start, i));
      seps.push(key[i]!);
      start = i + 1;
    }
  }
  raw.push(key.slice(start));
  return { seps, values: [...raw], raw };
}

/** Whether `:` `/` `|` or `#` stands in the key outside a hash tag. */
function hasPrimarySeparator(key: string): boolean {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c === 58 || c === 47 || c === 124 || c === 35) return true;
    if (c === 123) {
      const close = key.indexOf('}', i + 1);
      if (close > i) i = close;
    }
  }
  return false;
}

/** The placeholders a value's shape gives at once; a position learned from many values is `{id}` too. */
export const ID = '{id}';
export const UUID_PLACEHOLDER = '{uuid}';
export const HEX_PLACEHOLDER = '{hex}';
/** A tagged placeholder: a hash tag's braces around a learned value. */
export const TAGGED_ID = `{{${ID}}}`;

const DIGITS = /^\p{Nd}+$/u;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LONG_HEX = /^(?=.*\d)[0-9a-f]{16,}$/i;
const EMAIL = /^[^@\s{}]+@[^@\s{}.]+(\.[^@\s{}.]+)+$/u;
const TOKEN_CHARS = /^[A-Za-z0-9_-]{16,}$/;
const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
// Letters and digits of any script, or one brace (doubled in the pattern); anything else is kept as it is.
const TOKEN_OR_BRACE = /[\p{L}\p{N}]+|[{}]/gu;

/**
 * A value as the miner compares it: an id-shaped whole value becomes its
 * placeholder (`{id}` for digits, e-mail addresses and random tokens, `{uuid}`,
 * `{hex}`); any other is masked token by token as `patternOf` does
 * (`user42` → `user{id}`), its braces doubled. Shapes are hints: a position of
 * plain words (names, slugs, SKUs) becomes a placeholder when the miner has seen
 * many of them.
 */
export function maskValue(value: string): string {
  if (value.length === 0) return value;
  const tagged = value.length > 2 && value.charCodeAt(0) === 123 && value.charCodeAt(value.length - 1) === 125 && value.indexOf('}') === value.length - 1;
  if (tagged) {
    const inner = value.slice(1, -1);
    const whole = wholePlaceholder(inner);
    return `{{${whole ?? maskTokens(inner)}}}`;
  }
  return wholePlaceholder(value) ?? maskTokens(value);
}

function wholePlaceholder(value: string): string | undefined {
  if (DIGITS.test(value)) return ID;
  if (value.length === 36 && UUID.test(value)) return UUID_PLACEHOLDER;
  if (LONG_HEX.test(value)) return HEX_PLACEHOLDER;
  if (value.includes('@') && EMAIL.test(value)) return ID;
  if (TOKEN_CHARS.test(value) && looksRandom(value)) return ID;
  return undefined;
}

/**
 * A long token that reads as random (base64url session ids, ULIDs, nanoids): ≥ 2 digits among
 * capitals and small letters (≥ 3 of each), or among one case only; or, without digits, small and
 * capital letters each 30 % of the letters or more, changing case at 20 % of them or more (a
 * camelCase name has a capital per word, a random token about as many of each, changing at half).
 */
function looksRandom(value: string): boolean {
  let digits = 0;
  let upper = 0;
  let lower = 0;
  let changes = 0;
  let last = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    const kind = c >= 48 && c <= 57 ? 0 : c >= 65 && c <= 90 ? 1 : c >= 97 && c <= 122 ? 2 : 0;
    if (kind === 0) {
      if (c >= 48 && c <= 57) digits++;
      continue;
    }
    if (kind === 1) upper++;
    else lower++;
    if (last !== 0 && kind !== last) changes++;
    last = kind;
  }
  if (digits >= 2 && ((upper >= 3 && lower >= 3) || upper + digits === value.length || lower + digits === value.length)) return true;
  const letters = upper + lower;
  return upper >= 0.3 * letters && lower >= 0.3 * letters && changes >= 0.2 * letters;
}

const TOKEN_DIGITS = /^\p{Nd}+$/u;
const WORD_THEN_NUMBER = /^(\p{L}+)\p{Nd}{2,}$/u;
const DIGIT = /\p{Nd}/gu;

/**
 * One token of letters and digits as a pattern writes it: digits are `{id}`, a run of 16 or more
 * hex digits with a digit `{hex}`, a word followed by two or more digits keeps the word
 * (`user42` → `user{id}`; one trailing digit is a name: `v2`, `shard1`), a long token mixing
 * letters and at least two digits (`a8f3k29x`) is `{id}`; any other is kept as it is.
 */
export function normalizeToken(token: string): string {
  if (TOKEN_DIGITS.test(token)) return ID;
  if (LONG_HEX.test(token)) return HEX_PLACEHOLDER;
  const word = WORD_THEN_NUMBER.exec(token);
  if (word) return `${word[1]}${ID}`;
  if (token.length >= 6) {
    const digits = token.match(DIGIT)?.length ?? 0;
    if (digits >= 2) return ID;
  }
  return token;
}

/** Token by token (a UUID anywhere is `{uuid}`), with braces doubled: `patternOf`'s guess, and a value's when its shape gives no placeholder. */
export function maskTokens(value: string): string {
  let out = '';
  let last = 0;
  for (const m of value.matchAll(UUID_ANYWHERE)) {
    out += maskPiece(value.slice(last, m.index)) + UUID_PLACEHOLDER;
    last = m.index + m[0].length;
  }
  return out + maskPiece(value.slice(last));
}

function maskPiece(text: string): string {
  return text.replace(TOKEN_OR_BRACE, (t) => (t === '{' ? '{{' : t === '}' ? '}}' : normalizeToken(t)));
}

/** Whether a masked value is a placeholder alone (`{id}`, `{uuid}`, `{hex}`), not a literal or a hash tag. */
export function isPlaceholder(value: string): boolean {
  return value === ID || value === UUID_PLACEHOLDER || value === HEX_PLACEHOLDER;
}

/**
 * A pattern name cut into positions as {@link segmentsOf} cuts keys, its values taken as they are
 * (already masked): a hash tag written `{{…}}` and a placeholder `{…}` are never cut.
 */
export function segmentsOfName(pattern: string): Segments {
  const primary = /[:/|#]/.test(pattern.replace(/\{\{.*?\}\}|\{[^{}]*\}/g, ''));
  const seps: string[] = [''];
  const values: string[] = [];
  let start = 0;
  let i = 0;
  while (i < pattern.length) {
    if (pattern.startsWith('{{', i)) {
      const close = pattern.indexOf('}}', i + 2);
      // `{{user:{id}}}`: the tag's `}}` is the last pair of a run of braces.
      let end = close;
      while (end >= 0 && pattern[end + 2] === '}') end++;
      if (end > i) {
        i = end + 2;
        continue;
      }
    } else if (pattern[i] === '{') {
      const close = pattern.indexOf('}', i + 1);
      if (close > i) {
        i = close + 1;
        continue;
      }
    }
    const c = pattern[i]!;
    if ((primary ? c === ':' || c === '/' || c === '|' || c === '#' : c === '.') && values.length < MAX_SEGMENTS - 1) {
      values.push(pattern.slice(start, i));
      seps.push(c);
      start = i + 1;
    }
    i++;
  }
  values.push(pattern.slice(start));
  return { seps, values };
}

/** Positions back into a pattern, capped at `MAX_PATTERN_LENGTH` (concatenated, it holds no cut of the key: a map that keys by it flattens it). */
export function renderSegments({ seps, values }: Segments): string {
  let pattern = '';
  for (let i = 0; i < values.length; i++) pattern += seps[i]! + values[i]!;
  return truncate(pattern, MAX_PATTERN_LENGTH);
}
