/**
 * A one-pass reader of Lua source, for telling what a script does to a lock.
 * Linear in the script's length whatever it holds — each character is read
 * once, as part of one token (the chain of regular expressions it replaces
 * backtracked: a 136 KB EVAL held the event loop for seconds) — and what is
 * inside a string literal or a comment is never read as code: a script that
 * merely mentions a compare-and-delete in a string does none.
 */

/** What the classifier learns from a script's code. */
export interface LuaShape {
  /** The command names `redis.call`/`redis.pcall` is called with (lower case, short names only). */
  readonly calls: ReadonlySet<string>;
  /** `ARGV[1]` occurs in the code. */
  readonly readsArgv1: boolean;
  /** A `==`/`~=` compares with `ARGV[1]` or with a name or number (`== ARGV[1]`, `== token`). */
  readonly compares: boolean;
  /** A `redis.call('set', …)` has a `'PX'` or `'EX'` among its own arguments. */
  readonly setsWithTtl: boolean;
  /** A `'NX'` string occurs in the code. */
  readonly nx: boolean;
}

/**
 * Tokens, as numbers: the few the classifier tells apart, and one "other" per
 * kind. A token costs no allocation (a command's name after `redis.call(` is the
 * one string made), and the four-token look-back compares integers.
 */
const OTHER_NAME = 1;
const OTHER_NUMBER = 2;
const OTHER_STRING = 3;
const OTHER_OP = 4;
const REDIS = 5;
const CALL = 6; // `call` or `pcall`
const ARGV = 7;
const ONE = 8; // the number 1
const DOT = 9;
const OPEN = 10; // (
const CLOSE = 11; // )
const INDEX = 12; // [
const INDEX_END = 13; // ]
const EQUALS = 14; // == or ~=
const TTL_OPTION = 15; // 'PX' or 'EX'
const NX = 16; // 'NX'

/** Command names longer than this are never a lock's (the longest it looks for is `pexpire`). */
const COMMAND = 8;

const isNameStart = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
const isDigit = (c: number) => c >= 48 && c <= 57;

/*
 * The run of one token is scanned by a sticky regular expression: it starts
 * where the token does, takes characters of one class greedily and never gives
 * them back (nothing follows that could fail), so it is linear — and native code
 * even before the JIT has compiled this reader, on a process's first large script.
 */
const SPACE = /[\x00-\x20]*/y;
const NAME = /[A-Za-z0-9_]*/y;
const NUMBER = /[A-Za-z0-9_.]*/y;
// A short string's body, up to its closing quote or the line's end (an unfinished string: Lua refuses it).
const DOUBLE_QUOTED = /[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*/y;
const SINGLE_QUOTED = /[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*/y;

/** Where the run `re` matches from `from` ends. */
function skip(re: RegExp, text: string, from: number): number {
  re.lastIndex = from;
  re.test(text);
  return re.lastIndex;
}

/** `text[from, to)` equals `word` (lower case), ignoring ASCII case — as the regex reader did. */
function isWord(text: string, from: number, to: number, word: string): boolean {
  if (to - from !== word.length) return false;
  for (let k = 0; k < word.length; k++) if ((text.charCodeAt(from + k) | 32) !== word.charCodeAt(k)) return false;
  return true;
}

function nameToken(text: string, from: number, to: number): number {
  if (isWord(text, from, to, 'redis')) return REDIS;
  if (isWord(text, from, to, 'call') || isWord(text, from, to, 'pcall')) return CALL;
  return isWord(text, from, to, 'argv') ? ARGV : OTHER_NAME;
}

function optionToken(text: string, from: number, to: number): number {
  if (isWord(text, from, to, 'px') || isWord(text, from, to, 'ex')) return TTL_OPTION;
  return isWord(text, from, to, 'nx') ? NX : OTHER_STRING;
}

/** Reads the shape of a Lua script's code, in one pass. */
export function readLua(text: string): LuaShape {
  const calls = new Set<string>();
  let readsArgv1 = false;
  let compares = false;
  let setsWithTtl = false;
  let nx = false;
  // The last four tokens, newest first: enough to see `redis . call ( 'get'` and `ARGV [ 1 ]`.
  let t1 = 0, t2 = 0, t3 = 0, t4 = 0;
  // One entry per open parenthesis: whether it is a `redis.call('set'` call's.
  const parens: boolean[] = [];

  const token = (t: number) => {
    // `== ARGV[1]`, `== token`, `== 1`: compared with a name or number; `ARGV[1] ==` too.
    if (t1 === EQUALS && (t === OTHER_NAME || t === OTHER_NUMBER || t === REDIS || t === CALL || t === ARGV || t === ONE)) compares = true;
    switch (t) {
      case OPEN:
        parens.push(false);
        break;
      case CLOSE:
        parens.pop();
        break;
      case INDEX_END:
        if (t1 === ONE && t2 === INDEX && t3 === ARGV) readsArgv1 = true;
        break;
      case EQUALS:
        if (t1 === INDEX_END && t2 === ONE && t3 === INDEX && t4 === ARGV) compares = true;
        break;
      case TTL_OPTION:
        if (parens[parens.length - 1] === true) setsWithTtl = true;
        break;
      case NX:
        nx = true;
        break;
    }
    t4 = t3, t3 = t2, t2 = t1, t1 = t;
  };

  /** A string literal: a command's name right after `redis.call(`, else read only as a SET option (`'PX'`, `'NX'`…). */
  const stringToken = (from: number, to: number) => {
    if (t1 === OPEN && t2 === CALL && t3 === DOT && t4 === REDIS) {
      if (to - from <= COMMAND) {
        const name = text.slice(from, to).toLowerCase();
        calls.add(name);
        if (name === 'set') parens[parens.length - 1] = true;
      }
      token(OTHER_STRING);
    } else token(optionToken(text, from, to));
  };

  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c <= 32) {
      i = skip(SPACE, text, i);
    } else if (isNameStart(c)) {
      const j = skip(NAME, text, i);
      token(nameToken(text, i, j));
      i = j;
    } else if (c === 34 /* " */ || c === 39 /* ' */) {
      const j = skip(c === 34 ? DOUBLE_QUOTED : SINGLE_QUOTED, text, i + 1);
      stringToken(i + 1, j);
      i = j + 1;
    } else if (c === 45 /* - */ && text.charCodeAt(i + 1) === 45) {
      const level = longBracket(text, i + 2);
      i = level >= 0 ? closeLongBracket(text, i + 2, level) : lineEnd(text, i + 2);
    } else if (c === 91 /* [ */ && longBracket(text, i) >= 0) {
      const level = longBracket(text, i);
      const end = closeLongBracket(text, i, level);
      let from = i + level + 2;
      if (text.charCodeAt(from) === 10) from++; // a long string's first newline is not part of it
      stringToken(from, Math.max(from, end - level - 2));
      i = end;
    } else if (isDigit(c) || (c === 46 && isDigit(text.charCodeAt(i + 1)))) {
      // Digits, letters (hex, exponents) and dots; a sign right after the exponent's letter (e, or p in hex) too.
      const exponent = c === 48 && (text.charCodeAt(i + 1) | 32) === 120 ? 112 : 101;
      let j = skip(NUMBER, text, i);
      while ((text.charCodeAt(j) === 43 || text.charCodeAt(j) === 45) && (text.charCodeAt(j - 1) | 32) === exponent) j = skip(NUMBER, text, j + 1);
      token(j - i === 1 && c === 49 ? ONE : OTHER_NUMBER);
      i = j;
    } else {
      const d = text.charCodeAt(i + 1);
      if (d === 61 /* = */ && (c === 61 || c === 126 || c === 60 || c === 62)) {
        token(c === 61 || c === 126 ? EQUALS : OTHER_OP); // == ~= | <= >=
        i += 2;
      } else if (c === 46 && d === 46) {
        token(OTHER_OP); // .. or ...
        i += text.charCodeAt(i + 2) === 46 ? 3 : 2;
      } else {
        token(c === 46 ? DOT : c === 40 ? OPEN : c === 41 ? CLOSE : c === 91 ? INDEX : c === 93 ? INDEX_END : OTHER_OP);
        i++;
      }
    }
  }
  return { calls, readsArgv1, compares, setsWithTtl, nx };
}

/** At `[` followed by `=`… and `[`: the number of `=` (a long bracket's level); otherwise -1. */
function longBracket(text: string, at: number): number {
  if (text.charCodeAt(at) !== 91) return -1;
  let j = at + 1;
  while (text.charCodeAt(j) === 61) j++;
  return text.charCodeAt(j) === 91 ? j - at - 1 : -1;
}

/** Where a long string or comment opened at `at` with `level` ends (just past its `]=…]`; the text's end if unclosed). */
function closeLongBracket(text: string, at: number, level: number): number {
  const close = level === 0 ? ']]' : `]${'='.repeat(level)}]`;
  const end = text.indexOf(close, at + level + 2);
  return end < 0 ? text.length : end + close.length;
}

function lineEnd(text: string, from: number): number {
  const end = text.indexOf('\n', from);
  return end < 0 ? text.length : end + 1;
}
