import { realpathSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type * as TS from 'typescript';
import { Bindings, type Origin } from './bindings.js';
import type { TypeScript } from './load.js';
import type { CodeLibrary, CodePosition, CodeSite, TtlRole, TtlValue } from './types.js';
import { REPRESENTATIVE_ID, Values } from './values.js';
import { LEASE_LIBRARY_FACTS } from '../sample/libraries.js';
import type { LeaseLibrary } from '../sample/sample.js';
import { printable } from '../text.js';

/**
 * Finds the lock call sites in TypeScript/JavaScript files with the compiler
 * API: the program binds each name to its declaration, so a call is ours,
 * node-redlock's, redis-semaphore's, BullMQ's or a raw `SET … PX … NX` only
 * when its binding leads to that library's import. Packages are not read
 * (the import's module name is all it takes), so a checkout without
 * `node_modules` scans the same.
 *
 * One file the compiler or the scan cannot read (nested deeper than any
 * written code, such as a generated `+` chain of thousands of terms) is
 * skipped and listed with its reason; the rest of the repository is checked.
 */
export function scanCode(ts: TypeScript, files: readonly string[], root: string): CodeScan {
  const wanted = new Set(files.map((f) => resolve(f)));
  const realRoot = realpathSync(root);
  const skipped = new Map<string, string>();
  const options: TS.CompilerOptions = {
    allowJs: true,
    checkJs: false,
    noEmit: true,
    noLib: true,
    types: [],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    jsx: ts.JsxEmit.Preserve,
  };
  const host = ts.createCompilerHost(options, true);
  // Only the repository's own files: a package's declarations are never needed (see above).
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (path) => !/[\\/]node_modules[\\/]/.test(path) && fileExists(path);
  // A file nested too deep for the parser, or for the binder and checker that recurse over it, is left out of the program.
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError, shouldCreate) => {
    try {
      const source = getSourceFile(fileName, language, onError, shouldCreate);
      const depth = source && depthOf(ts, source);
      if (depth === undefined || depth <= MAX_SYNTAX_DEPTH) return source;
      skipped.set(resolve(fileName), `nested more than ${MAX_SYNTAX_DEPTH} levels deep (generated code?): not read`);
    } catch (error) {
      if (!isStackOverflow(error)) throw error;
      skipped.set(resolve(fileName), 'nested too deep for the TypeScript parser (generated code?): not read');
    }
    return undefined;
  };
  const program = ts.createProgram({ rootNames: [...wanted], options, host });
  const scanner = new Scanner(ts, program.getTypeChecker(), realRoot);
  const sites: CodeSite[] = [];
  for (const source of program.getSourceFiles()) {
    const path = resolve(source.fileName);
    if (!wanted.has(path)) continue;
    try {
      sites.push(...scanner.scan(source));
    } catch (error) {
      if (!isStackOverflow(error)) throw error;
      skipped.set(path, 'nested too deep to follow its bindings (generated code?): not read');
    }
  }
  return {
    sites: sites.sort((a, b) => a.at.file.localeCompare(b.at.file) || a.at.line - b.at.line),
    skipped: [...skipped].filter(([path]) => wanted.has(path)).map(([path, reason]) => ({ file: displayPath(realRoot, path), reason })).sort((a, b) => a.file.localeCompare(b.file)),
  };
}

/**
 * The deepest syntax a file may have to be read: past it, recursion in the compiler's binder and checker
 * could exhaust the stack (a 2,500-term `+` chain did). Written code stays far below: a few dozen levels.
 */
export const MAX_SYNTAX_DEPTH = 1000;

/** What a scan found: the call sites, and the files it could not read, each with why. */
export interface CodeScan {
  sites: CodeSite[];
  skipped: SkippedFile[];
}

/** A file left out of the check, by its path from the repository's root (printable), and why. */
export interface SkippedFile {
  file: string;
  reason: string;
}

/** How deep a file's syntax goes, walked with a stack of its own (no recursion: the file may be that deep). */
function depthOf(ts: TypeScript, source: TS.SourceFile): number {
  let deepest = 0;
  const stack: [TS.Node, number][] = [[source, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > deepest) deepest = depth;
    if (deepest > MAX_SYNTAX_DEPTH) return deepest;
    ts.forEachChild(node, (child) => void stack.push([child, depth + 1]));
  }
  return deepest;
}

function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/** A path from the repository's root, with `/` separators and any control character shown, not sent to a terminal. */
function displayPath(root: string, path: string): string {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // a file the host made up: keep its name
  }
  return printable(relative(root, real).split('\\').join('/'));
}

interface Shape {
  library: CodeLibrary;
  call: string;
  key: TS.Expression | undefined;
  /** A prefix the library puts before the key (`mutex:`), or the key's whole template (BullMQ). */
  keyPrefix?: string;
  keySuffix?: string;
  /** The TTL as an argument, or as options. */
  ttl?: { expr: TS.Expression | undefined; option: string };
  options?: TS.Expression | undefined;
  ttlOption?: string;
  renewOptions?: [string, TtlRole][];
}

/**
 * A lock API of a library, as data: how its call is reached from the import, and where the call
 * carries the key and the TTL. The option names come from the libraries' table (`LEASE_LIBRARY_FACTS`).
 */
interface CallShape {
  library: LeaseLibrary & CodeLibrary;
  module: string;
  /** The exports it is reached from (`default` and `*` for a module's main export). */
  names: readonly string[];
  /** `new X(…)`; `f(…)`; `X.method(…)` on the import itself (`static`) or on an instance made with `new` (`instance`). */
  form: 'new' | 'call' | 'static' | 'instance';
  method?: string;
  /** The argument that holds the key, and what the library puts before it. */
  keyArg: number;
  keyPrefix?: string;
  /** The TTL as an argument (node-redlock), named as its documentation names it. */
  ttlArg?: { index: number; option: string };
  /** The argument that holds the options object; `minArgs`: only when the call has at least that many arguments. */
  optionsArg?: { index: number; minArgs?: number };
  /** Which renewal option the call takes (the library's `renewEvery` or `threshold`). */
  renews?: 'renewEvery' | 'threshold';
}

const REDLOCK = ['default', '*', 'Redlock'];
const CALL_SHAPES: readonly CallShape[] = [
  { library: 'ttl-advisor', module: 'ttl-advisor', names: ['RedisLock'], form: 'new', keyArg: 1, optionsArg: { index: 2 }, renews: 'renewEvery' },
  { library: 'ttl-advisor', module: 'ttl-advisor', names: ['withLock'], form: 'call', keyArg: 1, optionsArg: { index: 3 }, renews: 'renewEvery' },
  { library: 'ttl-advisor', module: 'ttl-advisor', names: ['RedisLock'], form: 'static', method: 'acquire', keyArg: 1, optionsArg: { index: 2 }, renews: 'renewEvery' },
  { library: 'redis-semaphore', module: 'redis-semaphore', names: ['Mutex'], form: 'new', keyArg: 1, keyPrefix: 'mutex:', optionsArg: { index: 2 }, renews: 'renewEvery' },
  { library: 'redis-semaphore', module: 'redis-semaphore', names: ['Semaphore'], form: 'new', keyArg: 1, keyPrefix: 'semaphore:', optionsArg: { index: 3 }, renews: 'renewEvery' },
  // The key is BullMQ's own, made of its prefix and the queue's name (see `bullmqKey`).
  { library: 'bullmq', module: 'bullmq', names: ['Worker'], form: 'new', keyArg: 0, optionsArg: { index: 2 }, renews: 'renewEvery' },
  { library: 'redlock', module: 'redlock', names: REDLOCK, form: 'instance', method: 'using', keyArg: 0, ttlArg: { index: 1, option: 'duration' }, optionsArg: { index: 2, minArgs: 4 }, renews: 'threshold' },
  { library: 'redlock', module: 'redlock', names: REDLOCK, form: 'instance', method: 'acquire', keyArg: 0, ttlArg: { index: 1, option: 'duration' }, optionsArg: { index: 2, minArgs: 3 } },
  { library: 'redlock', module: 'redlock', names: REDLOCK, form: 'instance', method: 'lock', keyArg: 0, ttlArg: { index: 1, option: 'ttl' } },
];

/** The call as users write it, in short: `new Mutex`, `withLock`, `RedisLock.acquire`, `redlock.using`. */
function callText(shape: CallShape): string {
  const name = shape.form === 'instance' ? shape.library : shape.names[0]!;
  if (shape.form === 'new') return `new ${name}`;
  return shape.form === 'call' ? name : `${name}.${shape.method}`;
}

/** The lock API a call reached from `origin` in `form` belongs to, if any. */
function callShapeOf(origin: Origin, form: CallShape['form'], method?: string): CallShape | undefined {
  const made = form === 'instance' ? 'new' : 'import';
  return CALL_SHAPES.find((c) => c.form === form && c.module === origin.module && origin.made === made && c.names.includes(origin.name) && c.method === method);
}

class Scanner {
  private readonly bindings: Bindings;
  private readonly values: Values;

  constructor(
    private readonly ts: TypeScript,
    checker: TS.TypeChecker,
    private readonly root: string,
  ) {
    this.bindings = new Bindings(ts, checker);
    this.values = new Values(ts, this.bindings);
  }

  scan(source: TS.SourceFile): CodeSite[] {
    const ts = this.ts;
    const sites: CodeSite[] = [];
    // A stack of our own, not recursion: how deep a file goes is the file's to say.
    const stack: TS.Node[] = [source];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const shape = this.shapeOf(node);
        if (shape) sites.push(this.siteOf(node, shape));
      }
      const children: TS.Node[] = [];
      ts.forEachChild(node, (child) => void children.push(child));
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
    }
    return sites;
  }

  private shapeOf(node: TS.CallExpression | TS.NewExpression): Shape | undefined {
    const ts = this.ts;
    const args = node.arguments ?? ts.factory.createNodeArray<TS.Expression>();
    const callee = this.bindings.unwrap(node.expression);
    if (ts.isNewExpression(node) || ts.isIdentifier(callee)) {
      const o = this.bindings.originOf(callee);
      const shape = o && callShapeOf(o, ts.isNewExpression(node) ? 'new' : 'call');
      return shape && this.fromCallShape(shape, args);
    }
    if (!ts.isPropertyAccessExpression(callee)) return undefined;
    const method = callee.name.text;
    const receiver = this.bindings.originOf(callee.expression);
    if (!receiver) return undefined;
    const shape = callShapeOf(receiver, 'static', method) ?? callShapeOf(receiver, 'instance', method);
    if (shape) return this.fromCallShape(shape, args);
    if (method === 'set' && isClient(receiver)) return this.rawSet(receiver.module as 'ioredis' | 'redis', args);
    return undefined;
  }

  /** A call of a lock API: its key, TTL and renewal option where the table says they are. */
  private fromCallShape(c: CallShape, args: readonly TS.Expression[]): Shape {
    const words = LEASE_LIBRARY_FACTS[c.library].options!;
    const renewOption = c.renews && words[c.renews];
    const shape: Shape = {
      library: c.library,
      call: callText(c),
      key: args[c.keyArg],
      options: c.optionsArg && args.length >= (c.optionsArg.minArgs ?? 0) ? args[c.optionsArg.index] : undefined,
      renewOptions: renewOption ? [[renewOption, c.renews === 'threshold' ? 'threshold' : 'renew']] : [],
    };
    if (c.keyPrefix !== undefined) shape.keyPrefix = c.keyPrefix;
    if (c.ttlArg) shape.ttl = { expr: args[c.ttlArg.index], option: c.ttlArg.option };
    else shape.ttlOption = words.ttl;
    return c.library === 'bullmq' ? this.bullmqKey(shape) : shape;
  }

  /** A BullMQ worker's job lock is `<prefix>:<queue>:<jobId>:lock`: readable only with its prefix a literal (or the default `bull`). */
  private bullmqKey(shape: Shape): Shape {
    const ts = this.ts;
    const prefix = this.values.property(this.values.objectOf(shape.options), 'prefix');
    const literal = prefix && this.bindings.unwrap(prefix);
    const prefixText = !prefix ? 'bull' : literal && ts.isStringLiteralLike(literal) ? literal.text : undefined;
    if (prefixText === undefined) return { ...shape, key: undefined };
    return { ...shape, keyPrefix: `${prefixText}:`, keySuffix: `:${REPRESENTATIVE_ID}:lock` };
  }

  /** `redis.set(key, token, 'PX', 5000, 'NX')` (ioredis) or `client.set(key, token, { NX: true, PX: 5000 })` (node-redis). */
  private rawSet(module: 'ioredis' | 'redis', args: readonly TS.Expression[]): Shape | undefined {
    const ts = this.ts;
    if (module === 'ioredis') {
      const words = args.slice(2).map((a) => (ts.isStringLiteralLike(a) ? a.text.toUpperCase() : undefined));
      const px = words.indexOf('PX');
      if (px < 0 || !words.includes('NX')) return undefined;
      return { library: 'ioredis', call: 'SET PX NX', key: args[0], ttl: { expr: args[2 + px + 1], option: 'PX' } };
    }
    const opts = this.values.objectOf(args[2]);
    const nx = this.values.property(opts, 'NX');
    if (!nx || nx.kind !== ts.SyntaxKind.TrueKeyword || !this.values.property(opts, 'PX')) return undefined;
    return { library: 'redis', call: 'SET PX NX', key: args[0], ttl: { expr: this.values.property(opts, 'PX'), option: 'PX' } };
  }

  private siteOf(node: TS.CallExpression | TS.NewExpression, shape: Shape): CodeSite {
    const at = this.position(node);
    const pattern = shape.key ? this.values.keyPattern(shape.key, shape.keyPrefix ?? '', shape.keySuffix ?? '') : undefined;
    const opts = this.values.objectOf(shape.options);
    const ttlExpr = shape.ttl ? shape.ttl.expr : shape.ttlOption ? this.values.property(opts, shape.ttlOption) : undefined;
    const ttlOption = shape.ttl?.option ?? shape.ttlOption ?? 'ttl';
    const renewals = (shape.renewOptions ?? []).flatMap(([option, role]) => {
      const expr = this.values.property(opts, option);
      // `autoExtend: true` renews at a share of the TTL: it follows the TTL, with nothing to edit.
      const flag = expr && (expr.kind === this.ts.SyntaxKind.TrueKeyword || expr.kind === this.ts.SyntaxKind.FalseKeyword);
      return expr && !flag ? [this.valueOf(expr, option, role)] : [];
    });
    return {
      at,
      library: shape.library,
      call: shape.call,
      pattern,
      keyText: shape.key ? oneLine(shape.key.getText()) : '(no key)',
      ttl: ttlExpr ? this.valueOf(ttlExpr, ttlOption, 'ttl') : undefined,
      renewals,
    };
  }

  private valueOf(expr: TS.Expression, option: string, role: TtlRole): TtlValue {
    const read = this.values.readNumber(expr);
    if (read.literal) {
      const source = read.literal.getSourceFile();
      const start = read.literal.getStart(source);
      return {
        option,
        role,
        valueMs: read.valueMs,
        declaration: this.position(read.literal),
        literal: { path: source.fileName, start, end: read.literal.getEnd(), text: source.text.slice(start, read.literal.getEnd()) },
        why: undefined,
      };
    }
    const computed = read.computed ?? expr;
    return { option, role, valueMs: read.valueMs, declaration: this.position(computed), literal: undefined, why: { kind: 'computed', text: oneLine(computed.getText()) } };
  }

  private position(node: TS.Node): CodePosition {
    const source = node.getSourceFile();
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    return { file: displayPath(this.root, source.fileName), line: line + 1 };
  }
}

/** An ioredis `Redis`/`Cluster` instance, or a node-redis client from `createClient`/`createCluster`. */
function isClient(o: Origin): boolean {
  if (o.module === 'ioredis') return o.made === 'new' && ['default', '*', 'Redis', 'Cluster'].includes(o.name);
  if (o.module === 'redis' || o.module === '@redis/client') return o.made === 'call' && ['createClient', 'createCluster'].includes(o.name);
  return false;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}

