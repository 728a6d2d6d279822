import { readFileSync } from 'node:fs';
import { PolicyFileError } from '../errors.js';
import { MAX_TTL_MS } from '../units.js';
import { duplicateKey } from './json-keys.js';
import { KeyPatternMiner } from '../keys/miner.js';
import { cutKey, segmentsOfName } from '../keys/segments.js';
import { compileTemplates, parseTemplate, type CompiledTemplate } from '../keys/pattern.js';
import type { TtlSource } from '../lock/options.js';
import { KEY_CACHE_LIMIT, PatternCache } from '../sample/pattern-cache.js';

/** One entry of a TTL policy file. */
export interface PolicyEntry {
  /** The TTL for keys of this pattern (ms), a positive integer. */
  ttlMs: number;
  /** Tools never change a pinned entry. @default false */
  pinned?: boolean;
  /** Why the TTL is what it is; shown in reports. */
  reason?: string;
  /**
   * Cover holds up to this long (ms): the recommendation for this entry is at least this, so
   * `check` and `apply` keep the tail beyond the rule covered (see `--cover max` for every entry).
   */
  coverMs?: number;
  /**
   * A lease (a lock renewed while held): renew it every this long (ms, under `ttlMs`); `withLock`
   * takes it as `autoExtend`. `apply` keeps its share of the TTL when it moves the lease.
   */
  renewEveryMs?: number;
  /** A lease renewed when less than this is left (ms, under `ttlMs`: node-redlock's `automaticExtensionThreshold`). */
  extendThresholdMs?: number;
  /** The longest a holder may keep renewing (ms): a job timeout, not the TTL; `withLock` takes it as `maxHoldMs`. */
  maxHoldMs?: number;
}

/** The contents of a TTL policy file (`ttl-advisor.json`). */
export interface PolicyDocument {
  /** Pattern → entry, in the file's order. */
  locks: Record<string, PolicyEntry>;
  /** TTL for keys that match no entry (ms). @default 10000 */
  defaultTtlMs?: number;
}

/** The TTL for keys no entry matches, when the file sets none. */
export const DEFAULT_POLICY_TTL_MS = 10_000;

/** The default policy file name. */
export const DEFAULT_POLICY_PATH = 'ttl-advisor.json';

/** Which entry a key resolved to. */
export interface PolicyMatch {
  ttlMs: number;
  /** A lease's renewal interval (the entry's `renewEveryMs`, or `ttlMs − extendThresholdMs`), and its hold cap. */
  renewEveryMs?: number | undefined;
  maxHoldMs?: number | undefined;
  /** The policy pattern that matched, or the key's heuristic pattern when none did. */
  pattern: string;
  /** Whether an entry matched (otherwise the default TTL applies). */
  matched: boolean;
}

const TOP_LEVEL = new Set(['locks', 'defaultTtlMs']);
const ENTRY_FIELDS = new Set(['ttlMs', 'pinned', 'reason', 'coverMs', 'renewEveryMs', 'extendThresholdMs', 'maxHoldMs']);

/**
 * A loaded TTL policy: maps lock keys to TTLs through their patterns. Entries
 * are matched by the key's pattern (`patternOf`) first, then as templates
 * (`order:lock:product:{productId}` matches `order:lock:product:42`), in file order.
 */
export class TtlPolicy implements TtlSource {
  readonly defaultTtlMs: number;
  private readonly templates: CompiledTemplate[];
  /** Key → entry, by the one key → pattern cache: a lock's `ttlFor` derives nothing for a key seen (or an id prefix seen). */
  private readonly cache: PatternCache<PolicyMatch>;
  /** Learns the keys' patterns as a recorder does, so that an entry `apply` wrote for a learned pattern (`lock:user:{id}`) covers its keys. */
  private readonly miner = new KeyPatternMiner();
  /** The entries named after data patterns (`lock:user:{id}`), as templates: for keys whose position this process has not learned yet. */
  private readonly patternEntries: CompiledTemplate[];

  constructor(
    readonly document: PolicyDocument,
    readonly path?: string,
  ) {
    this.defaultTtlMs = document.defaultTtlMs ?? DEFAULT_POLICY_TTL_MS;
    this.templates = compileTemplates(Object.keys(document.locks).filter(isTemplate));
    this.patternEntries = compileTemplates(Object.keys(document.locks).filter((e) => !isTemplate(e) && parseTemplate(e).placeholders.length > 0));
    this.cache = new PatternCache(this.templates, (key) => this.resolve(key), KEY_CACHE_LIMIT, this.miner);
  }

  /** The TTL for a lock key (ms). */
  ttlFor(key: string): number {
    return this.match(key).ttlMs;
  }

  /** The entry a key resolves to. Cached, so it is cheap on the lock's path. */
  match(key: string): PolicyMatch {
    return this.cache.get(key);
  }

  /** The entry for a pattern as found in recorded data: exact, or through a template. */
  entryForPattern(pattern: string): { pattern: string; entry: PolicyEntry } | undefined {
    const exact = this.document.locks[pattern];
    if (exact && Object.hasOwn(this.document.locks, pattern)) return { pattern, entry: exact };
    for (const t of this.templates) {
      if (t.matches(pattern)) return { pattern: t.template, entry: this.document.locks[t.template]! };
    }
    return undefined;
  }

  private resolve(key: string): PolicyMatch {
    const heuristic = this.miner.patternOf(key);
    this.miner.takeAliases(); // a policy keeps no renames: its cache is derived anew when the miner learns
    const found = this.entryForPattern(heuristic) ?? this.templateFor(key);
    if (found) return { ttlMs: found.entry.ttlMs, pattern: found.pattern, matched: true, ...leaseOf(found.entry) };
    // An entry of a learned pattern that this process has not learned yet (`lock:user:{id}` for the first names
    // after a start) is no proof the key is its lock, but a TTL shorter than the entry's could expire under a holder:
    // the longer of the default and the entry's, never the shorter.
    const positions = cutKey(key).raw.length;
    const loose = this.patternEntries.find((t) => t.matches(key) && segmentsOfName(t.template).values.length === positions);
    const ttlMs = loose ? Math.max(this.defaultTtlMs, this.document.locks[loose.template]!.ttlMs) : this.defaultTtlMs;
    return { ttlMs, pattern: heuristic, matched: false };
  }

  private templateFor(key: string): { pattern: string; entry: PolicyEntry } | undefined {
    const t = this.templates.find((candidate) => candidate.matches(key));
    return t && { pattern: t.template, entry: this.document.locks[t.template]! };
  }
}

/** What a lock takes of a lease entry: when to renew, and the hold cap. */
function leaseOf(e: PolicyEntry): Pick<PolicyMatch, 'renewEveryMs' | 'maxHoldMs'> {
  const renewEveryMs = e.renewEveryMs ?? (e.extendThresholdMs === undefined ? undefined : e.ttlMs - e.extendThresholdMs);
  return { ...(renewEveryMs !== undefined && { renewEveryMs }), ...(e.maxHoldMs !== undefined && { maxHoldMs: e.maxHoldMs }) };
}

/** The placeholders `patternOf` writes: an entry with only these is a pattern, matched exactly (`apply` writes them). */
const PATTERN_PLACEHOLDERS = new Set(['{id}', '{uuid}', '{hex}']);

/**
 * Whether an entry is a template: it has a placeholder of the user's own naming
 * (`{productId}`), which matches any text. An entry whose placeholders are all
 * `patternOf`'s (`order:lock:product:{id}`) matches exactly the keys whose pattern
 * it is: `job:lock:{id}` covers `job:lock:42`, never `job:lock:global`.
 */
function isTemplate(entry: string): boolean {
  const { placeholders } = parseTemplate(entry);
  return placeholders.some((p) => !PATTERN_PLACEHOLDERS.has(p));
}

/** Reads and validates a policy file. Throws {@link PolicyFileError}. */
export function loadTtlPolicy(path: string): TtlPolicy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new PolicyFileError(path, code === 'ENOENT' ? 'no such policy file' : `cannot read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return new TtlPolicy(parsePolicy(text, path), path);
}

/** Parses and validates the text of a policy file. Throws {@link PolicyFileError}. */
export function parsePolicy(text: string, path = '<policy>'): PolicyDocument {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new PolicyFileError(path, `invalid JSON: ${withLineAndColumn((error as Error).message, text)}`, { cause: error });
  }
  if (!isObject(raw)) throw new PolicyFileError(path, 'expected a JSON object with a "locks" object');
  // JSON.parse keeps the last of two equal keys without a word: a policy must not depend on which.
  const duplicate = duplicateKey(text);
  if (duplicate) throw new PolicyFileError(path, `line ${duplicate.line}: ${JSON.stringify(duplicate.key)} appears twice in one object`);
  for (const field of Object.keys(raw)) {
    if (!TOP_LEVEL.has(field)) throw new PolicyFileError(path, `unknown field "${field}"; expected "locks" and optionally "defaultTtlMs"`);
  }
  if (!isObject(raw.locks)) throw new PolicyFileError(path, 'expected "locks" to be an object of pattern → { "ttlMs": … }');
  if (raw.defaultTtlMs !== undefined && !isPositiveInteger(raw.defaultTtlMs)) {
    throw new PolicyFileError(path, `expected "defaultTtlMs" to be ${ttlExpectation(raw.defaultTtlMs)}, got ${JSON.stringify(raw.defaultTtlMs)}`);
  }
  // No prototype: an entry named "__proto__" is an entry like any other, not a way to change the object.
  const locks: Record<string, PolicyEntry> = Object.create(null) as Record<string, PolicyEntry>;
  for (const [pattern, value] of Object.entries(raw.locks)) {
    const where = `entry ${JSON.stringify(pattern)}`;
    if (pattern === '') throw new PolicyFileError(path, 'a pattern must not be empty');
    if (pattern === '__proto__') throw new PolicyFileError(path, `${where}: "__proto__" cannot be a lock pattern`);
    if (!isObject(value)) throw new PolicyFileError(path, `${where}: expected an object like { "ttlMs": 10000 }`);
    for (const field of Object.keys(value)) {
      if (!ENTRY_FIELDS.has(field)) throw new PolicyFileError(path, `${where}: unknown field "${field}"; expected ttlMs, pinned, reason, coverMs, renewEveryMs, extendThresholdMs, maxHoldMs`);
    }
    if (!isPositiveInteger(value.ttlMs)) {
      throw new PolicyFileError(path, `${where}: expected "ttlMs" to be ${ttlExpectation(value.ttlMs)}, got ${JSON.stringify(value.ttlMs)}`);
    }
    if (value.pinned !== undefined && typeof value.pinned !== 'boolean') {
      throw new PolicyFileError(path, `${where}: expected "pinned" to be true or false, got ${JSON.stringify(value.pinned)}`);
    }
    if (value.reason !== undefined && typeof value.reason !== 'string') {
      throw new PolicyFileError(path, `${where}: expected "reason" to be a string, got ${JSON.stringify(value.reason)}`);
    }
    if (value.coverMs !== undefined && !isPositiveInteger(value.coverMs)) {
      throw new PolicyFileError(path, `${where}: expected "coverMs" to be ${ttlExpectation(value.coverMs)}, got ${JSON.stringify(value.coverMs)}`);
    }
    for (const field of ['renewEveryMs', 'extendThresholdMs'] as const) {
      const v = value[field];
      if (v !== undefined && (!isPositiveInteger(v) || v >= value.ttlMs)) {
        throw new PolicyFileError(path, `${where}: expected "${field}" to be a positive integer (ms) under "ttlMs" (${value.ttlMs}), got ${JSON.stringify(v)}`);
      }
    }
    if (value.renewEveryMs !== undefined && value.extendThresholdMs !== undefined) {
      throw new PolicyFileError(path, `${where}: give "renewEveryMs" or "extendThresholdMs", not both (one says when to renew)`);
    }
    if (value.maxHoldMs !== undefined && !isPositiveInteger(value.maxHoldMs)) {
      throw new PolicyFileError(path, `${where}: expected "maxHoldMs" to be ${ttlExpectation(value.maxHoldMs)}, got ${JSON.stringify(value.maxHoldMs)}`);
    }
    locks[pattern] = orderedEntry(value as unknown as PolicyEntry);
  }
  try {
    compileTemplates(Object.keys(locks).filter((p) => /\{[^{}]+\}/.test(p)));
  } catch (error) {
    throw new PolicyFileError(path, (error as Error).message, { cause: error });
  }
  return { locks, ...(raw.defaultTtlMs !== undefined && { defaultTtlMs: raw.defaultTtlMs as number }) };
}

/**
 * Serializes a policy with one entry per line, so a TTL change is a one-line
 * diff. Entries keep their order; keys inside an entry in the order of {@link orderedEntry}.
 */
export function formatPolicy(document: PolicyDocument): string {
  const entries = Object.entries(document.locks).map(([pattern, e]) => {
    const body = Object.entries(orderedEntry(e)).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(', ');
    return `    ${JSON.stringify(pattern)}: { ${body} }`;
  });
  const lines = ['{'];
  if (document.defaultTtlMs !== undefined) lines.push(`  "defaultTtlMs": ${document.defaultTtlMs},`);
  lines.push(entries.length ? `  "locks": {\n${entries.join(',\n')}\n  }` : '  "locks": {}');
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** An entry's fields in the file's order (ttlMs, the lease's fields, pinned, reason, coverMs), without the absent ones. */
function orderedEntry(e: PolicyEntry): PolicyEntry {
  return {
    ttlMs: e.ttlMs,
    ...(e.renewEveryMs !== undefined && { renewEveryMs: e.renewEveryMs }),
    ...(e.extendThresholdMs !== undefined && { extendThresholdMs: e.extendThresholdMs }),
    ...(e.maxHoldMs !== undefined && { maxHoldMs: e.maxHoldMs }),
    ...(e.pinned !== undefined && { pinned: e.pinned }),
    ...(e.reason !== undefined && { reason: e.reason }),
    ...(e.coverMs !== undefined && { coverMs: e.coverMs }),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a TTL must be, worded for the value at hand. */
function ttlExpectation(value: unknown): string {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > MAX_TTL_MS
    ? `at most ${MAX_TTL_MS} ms (about 24.8 days)`
    : 'a positive integer (ms)';
}

/** A TTL a lock accepts: an integer from 1 to MAX_TTL_MS. */
function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value <= MAX_TTL_MS;
}

/** JSON.parse says "at position 45"; people count lines and columns: "at line 3, column 7". */
function withLineAndColumn(message: string, text: string): string {
  return message.replace(/ in JSON at position (\d+)(?: \(line \d+ column \d+\))?/, (_match, position: string) => {
    const before = text.slice(0, Number(position));
    const line = before.split('\n').length;
    const column = before.length - before.lastIndexOf('\n');
    return ` at line ${line}, column ${column}`;
  });
}
