import { ConfigError } from '../errors.js';
import { truncate } from '../text.js';

/**
 * Turns concrete lock keys into the key pattern they belong to, so that
 * `order:lock:product:123` and `order:lock:product:456` are analysed together
 * as `order:lock:product:{id}`.
 *
 * The heuristics, applied to each alphanumeric token of the key:
 * - a UUID (anywhere in the key) becomes `{uuid}`;
 * - a run of 16 or more hex digits containing a digit becomes `{hex}`;
 * - a token of digits only becomes `{id}` (`product:123`, `product-123`, `product_123`);
 * - a word followed by two or more digits keeps the word (`user42` → `user{id}`),
 *   while one trailing digit is kept as a name (`v2`, `shard1`);
 * - a long token mixing letters and at least two digits (`a8f3k29x`, `AB12CD34`) becomes `{id}`.
 *
 * Patterns are capped at {@link MAX_PATTERN_LENGTH} characters so a hostile key cannot
 * produce an unbounded pattern.
 *
 * @example
 * patternOf('order:lock:product:123')  // 'order:lock:product:{id}'
 * patternOf('cart/7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a11') // 'cart/{uuid}'
 */
export function patternOf(key: string): string {
  let pattern = key.replace(UUID, '{uuid}');
  pattern = pattern.replace(TOKEN, normalizeToken);
  return truncate(pattern, MAX_PATTERN_LENGTH);
}

/** Longest pattern kept, in code points; longer ones are cut and end in `…`. */
export const MAX_PATTERN_LENGTH = 200;

/** The pattern that collects keys once a recorder's `maxPatterns` is reached. */
export const OVERFLOW_PATTERN = '{other}';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
// Letters and digits of any script; everything else (":", "-", "_", "/", "{", spaces…) separates tokens.
const TOKEN = /[\p{L}\p{N}]+/gu;
const DIGITS = /^\p{Nd}+$/u;
const LONG_HEX = /^(?=.*\d)[0-9a-f]{16,}$/i;
const WORD_THEN_NUMBER = /^(\p{L}+)\p{Nd}{2,}$/u;
const DIGIT = /\p{Nd}/gu;

function normalizeToken(token: string): string {
  if (token === 'uuid') return token;
  if (DIGITS.test(token)) return '{id}';
  if (LONG_HEX.test(token)) return '{hex}';
  const word = WORD_THEN_NUMBER.exec(token);
  if (word) return `${word[1]}{id}`;
  if (token.length >= 6) {
    const digits = token.match(DIGIT)?.length ?? 0;
    if (digits >= 2) return '{id}';
  }
  return token;
}

/**
 * A user-written template such as `order:lock:product:{productId}`: literal text
 * with `{name}` placeholders, each matching one or more characters.
 */
export interface CompiledTemplate {
  readonly template: string;
  /**
   * Whether every key that ends in a separator and a decimal id matches this
   * template alike, whatever the id: no digit in its literal text and no two
   * placeholders side by side (so the id always falls inside one placeholder,
   * or the template matches none of those keys). See `idPrefixAt`.
   */
  readonly sameForEveryId: boolean;
  /** Whether a key (or a pattern) fits the template. */
  matches(key: string): boolean;
}

/**
 * Keys longer than this are not matched against templates (they fall to the
 * heuristics, which are linear and capped): matching is linear already, this
 * bounds it per key.
 */
export const MAX_TEMPLATE_KEY_LENGTH = 1024;

/** Compiles templates once; throws {@link ConfigError} for an empty template or one without a placeholder. */
export function compileTemplates(templates: readonly string[]): CompiledTemplate[] {
  return templates.map((template) => {
    if (typeof template !== 'string' || template.length === 0) {
      throw new ConfigError(`Expected each pattern template to be a non-empty string, got \`${String(template)}\``);
    }
    // Literal text between the placeholders: n placeholders, n + 1 literals (possibly empty).
    const literals = template.split(/\{[^{}]+\}/);
    if (literals.length < 2) {
      throw new ConfigError(`Expected pattern template \`${template}\` to contain a {placeholder}`);
    }
    const sameForEveryId = literals.every((literal, i) => !/\d/.test(literal) && (literal !== '' || i === 0 || i === literals.length - 1));
    return { template, sameForEveryId, matches: (key: string) => matchesTemplate(literals, key) };
  });
}

/**
 * Whether `key` is literal₀ · (1+ chars) · literal₁ · … · literalₙ. Each middle
 * literal is taken at its earliest place, which leaves the most room for the
 * rest, so one pass decides: linear in the key, where the regular expression
 * `(.+?)` per placeholder backtracked for seconds on a long key.
 */
function matchesTemplate(literals: readonly string[], key: string): boolean {
  if (key.length > MAX_TEMPLATE_KEY_LENGTH) return false;
  const first = literals[0]!;
  const last = literals[literals.length - 1]!;
  if (!key.startsWith(first) || !key.endsWith(last)) return false;
  let pos = first.length;
  for (let i = 1; i < literals.length - 1; i++) {
    const at = key.indexOf(literals[i]!, pos + 1); // the placeholder before it takes one character or more
    if (at < 0) return false;
    pos = at + literals[i]!.length;
  }
  return key.length - last.length >= pos + 1;
}

/**
 * Resolves a key's pattern: an explicit pattern wins, then the first matching
 * template, then the heuristics of {@link patternOf}.
 */
export function resolvePattern(key: string, templates: readonly CompiledTemplate[], explicit?: string): string {
  if (explicit !== undefined && explicit !== '') return explicit;
  for (const t of templates) if (t.matches(key)) return t.template;
  return patternOf(key);
}
