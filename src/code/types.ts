/**
 * The shapes of `check --code` / `apply --code`: lock call sites found in
 * TypeScript/JavaScript source, the key pattern each belongs to, and where its
 * TTL is declared (the literal that `apply --code` may edit).
 */

/** The library a call site belongs to, told by its import, never by a name alone. */
export type CodeLibrary = 'ttl-advisor' | 'redlock' | 'redis-semaphore' | 'bullmq' | 'ioredis' | 'redis';

/** A place in the repository: `file` relative to its root, `line` 1-based. */
export interface CodePosition {
  file: string;
  line: number;
}

/** The characters of a literal `apply --code` may replace (absolute path, offsets in the file's text). */
export interface LiteralSpan {
  path: string;
  start: number;
  end: number;
  text: string;
}

/** What a TTL option of a call site is for: the lock's TTL (or lease), its renewal, or a renewal threshold. */
export type TtlRole = 'ttl' | 'renew' | 'threshold';

/** Why a value or a site is left alone. */
export type LeftAloneReason =
  /** The key is computed in a way that cannot be read statically. */
  | { kind: 'key-not-mapped'; text: string }
  /** The value is computed at run time (a call, a parameter, a `let`…), or from other constants. */
  | { kind: 'computed'; text: string }
  /** A constant that call sites of different patterns share: one edit would move them all. */
  | { kind: 'shared'; patterns: string[] }
  /** The call passes no TTL: the library's default applies. */
  | { kind: 'library-default' }
  /** The policy file has an entry for the pattern: it wins over the code. */
  | { kind: 'overridden'; entryPattern: string }
  /** The lock call inside the service's own wrapper: its key and TTL come from the wrapper's callers, each judged as a site. */
  | { kind: 'wrapper-inner'; wrapper: string; callers: number }
  /** The TTL is the library's default, and no options object at the call to add it to (a variable holds them). */
  | { kind: 'default-not-insertable'; option: string };

/** One TTL-like value of a call site and where it is declared. */
export interface TtlValue {
  /** The option or argument that carries it: `ttlMs`, `duration`, `lockTimeout`, `lockDuration`, `PX`… */
  option: string;
  role: TtlRole;
  /** The value in ms; `undefined` when it cannot be read statically. */
  valueMs: number | undefined;
  /** Where it is declared: the literal (at the call or in a `const`, followed through imports), else the argument. */
  declaration: CodePosition;
  /** The literal to edit; `undefined` with `why` when it may not be edited. */
  literal: LiteralSpan | undefined;
  why: LeftAloneReason | undefined;
  /** Milliseconds per unit of the literal: 1000 for seconds (`EX`, `ttlSeconds`), 1 for milliseconds. */
  msPerUnit: number;
  /** An environment variable overrides the value where it is set: the literal is its default (`Number(process.env.X) || 60000`). */
  env?: string;
  /** The call passes none: the library's default (`literal` then marks where `apply --code` adds the option, `insert` how). */
  libraryDefault?: boolean;
  /** How the option is added where the call has none: the text before and after the value. */
  insert?: { before: string; after: string };
}

/** A lock call site. */
export interface CodeSite {
  at: CodePosition;
  library: CodeLibrary;
  /** The call as written, in short: `withLock`, `redlock.using`, `new Mutex`, `SET PX NX`… */
  call: string;
  /** The key pattern (`order:lock:product:{id}`), or `undefined` when the key cannot be read (see `keyText`). */
  pattern: string | undefined;
  /** The key's source text, shown where it is not mapped. */
  keyText: string;
  /** The TTL (or lease); `undefined` when the call passes none (the library's default). */
  ttl: TtlValue | undefined;
  /** Renewal options that follow the lease (`autoExtend`, `refreshInterval`, `lockRenewTime`, `automaticExtensionThreshold`). */
  renewals: TtlValue[];
  /** Every data pattern the key can make (an enum's, a union's, a ternary's values); `[pattern]` for most keys. */
  patterns: string[];
  /** The wrappers of the service a call goes through to the lock, outermost first (`runLock.lock`, `#acquireAndRun`). */
  via: string[];
  /** The lock call inside the service's own wrapper: its callers are the sites (it is listed, not judged). */
  inner?: { wrapper: string; callers: number };
}
