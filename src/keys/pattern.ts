import { ConfigError } from '../errors.js';
import { truncate } from '../text.js';
import { MAX_PATTERN_LENGTH, maskTokens } from './segments.js';

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
 * Braces in the key (a Redis Cluster hash tag) are doubled (`{{tag}}`), so that they never read as a
 * placeholder. Patterns are capped at {@link MAX_PATTERN_LENGTH} characters so a hostile key cannot
 * produce an unbounded pattern. Recorders learn patterns from the keys (`miner.ts`); this is the
 * stateless guess, for one key alone.
 *
 * @example
 * patternOf('order:lock:product:123')  // 'order:lock:product:{id}'
 * patternOf('cart/7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a11') // 'cart/{uuid}'
 */
export function patternOf(key: string): string {
  return truncate(maskTokens(key), MAX_PATTERN_LENGTH);
}

// Longest pattern kept, in code points: its home is segments.ts, which renders patterns.
export { MAX_PATTERN_LENGTH } from './segments.js';

/** The pattern that collects keys once a recorder's `maxPatterns` is reached. */
export const OVERFLOW_PATTERN = '{other}';

/**
 * The patterns a samples file keeps by default (`maxPatterns` of a `SqliteRecorder` and a stream sink):
 * one budget, which a Prometheus source applies to its pattern labels too.
 */
export const DEFAULT_MAX_PATTERNS = 1000;

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
    const { literals } = parseTemplate(template);
    if (literals.length < 2) {
      throw new ConfigError(`Expected pattern template \`${template}\` to contain a {placeholder}`);
    }
    const sameForEveryId = literals.every((literal, i) => !/\d/.test(literal) && (literal !== '' || i === 0 || i === literals.length - 1));
    return { template, sameForEveryId, matches: (key: string) => matchesTemplate(literals, key) };
  });
}

/**
 * A template's literal text and placeholders: `{name}` is a placeholder, `{{` and `}}` are literal
 * braces (a hash tag: `bull:{{render}}:{id}:lock` matches `bull:{render}:42:lock`).
 */
export function parseTemplate(template: string): { literals: string[]; placeholders: string[] } {
  const literals: string[] = [];
  const placeholders: string[] = [];
  let literal = '';
  for (let i = 0; i < template.length; ) {
    if (template.startsWith('{{', i) || template.startsWith('}}', i)) {
      literal += template[i];
      i += 2;
      continue;
    }
    if (template[i] === '{') {
      const close = template.indexOf('}', i + 1);
      const name = close > i + 1 ? template.slice(i + 1, close) : '';
      if (name !== '' && !name.includes('{')) {
        literals.push(literal);
        placeholders.push(`{${name}}`);
        literal = '';
        i = close + 1;
        continue;
      }
    }
    literal += template[i];
    i++;
  }
  literals.push(literal);
  return { literals, placeholders };
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


/** Literal braces as a pattern writes them: doubled (`{render}` → `{{render}}`), so that none reads as a placeholder. */
export function escapeBraces(text: string): string {
  return text.replace(/[{}]/g, (c) => c + c);
}
