import type * as TS from 'typescript';
import { Bindings } from './bindings.js';
import { Evaluator, isInside, type Frame } from './evaluate.js';
import type { TypeScript } from './load.js';
import { callsIn, displayPath, isStackOverflow, repositoryProgram, type SkippedFile } from './program.js';
import { Reader } from './read.js';
import { redlockModule, Shapes, type DefinedCommands } from './shapes.js';
import { SiteBuilder, type Found } from './sites.js';
import type { CodeSite } from './types.js';

export { MAX_SYNTAX_DEPTH, type SkippedFile } from './program.js';
export type { Found } from './sites.js';

/**
 * Finds the lock call sites in a repository's TypeScript/JavaScript files
 * with the compiler API. A lock call is a library's (told by its import, a
 * fork's or a re-export's), or Redis commands that take a lock by hand
 * (`shapes.ts`), whatever the client is and wherever it was made. Where the
 * key or the TTL of a lock call is a parameter of the function around it, that
 * function is the service's own lock API (a wrapper): each of its callers is a
 * site, with the key and TTL as that caller writes them — through defaults,
 * prefixes the wrapper adds, and wrappers of wrappers — and the lock call
 * inside is listed as the wrapper's, judged through its callers.
 */
export function scanCode(ts: TypeScript, files: readonly string[], root: string): CodeScan {
  const { program, sources, skipped, realRoot } = repositoryProgram(ts, files, root);
  const checker = program.getTypeChecker();
  const bindings = new Bindings(ts, checker);
  const callsByFile = new Map<TS.SourceFile, (TS.CallExpression | TS.NewExpression)[]>();
  for (const source of sources) {
    try {
      callsByFile.set(source, callsIn(ts, source));
    } catch (error) {
      if (!isStackOverflow(error)) throw error;
      skipped.set(source.fileName, 'nested too deep to walk (generated code?): not read');
    }
  }
  const calls = [...callsByFile.values()].flat();
  const evaluator = new Evaluator(ts, checker, bindings, () => calls);
  const reader = new Reader(ts, checker, evaluator);
  const text = (e: TS.Expression) => {
    const u = bindings.unwrap(e);
    if (ts.isStringLiteralLike(u)) return u.text;
    const step = evaluator.step({ expr: u, frame: undefined });
    const v = step.kind === 'ref' ? bindings.unwrap(step.ref.expr) : undefined;
    return v && ts.isStringLiteralLike(v) ? v.text : undefined;
  };
  const importsRedlock = sources.some((source) => source.statements.some((st) => (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier) && redlockModule(st.moduleSpecifier.text)) || /require\(\s*['"][^'"]*redlock['"]\s*\)/.test(st.getText())));
  let commands: DefinedCommands = new Map();
  try {
    commands = definedCommands(ts, calls, text, evaluator);
  } catch (error) {
    if (!isStackOverflow(error)) throw error;
  }
  const shapes = new Shapes(ts, bindings, text, commands, importsRedlock);
  const builder = new SiteBuilder(ts, reader, realRoot);
  const wrappers = new Wrappers(ts, checker, calls, builder, bindings);
  const sites: CodeSite[] = [];
  for (const [source, fileCalls] of callsByFile) {
    try {
      for (const call of fileCalls) {
        const shape = shapes.of(call);
        if (shape) for (const site of wrappers.expand({ node: call, lockCall: call, shape, frame: undefined, via: [] })) sites.push(site);
      }
    } catch (error) {
      if (!isStackOverflow(error)) throw error;
      skipped.set(source.fileName, 'nested too deep to follow its bindings (generated code?): not read');
    }
  }
  return {
    sites: dedupe(sites).sort((a, b) => a.at.file.localeCompare(b.at.file) || a.at.line - b.at.line),
    skipped: [...skipped].map(([path, reason]) => ({ file: displayPath(realRoot, path), reason })).sort((a, b) => a.file.localeCompare(b.file)),
  };
}

/** What a scan found: the call sites, and the files it could not read, each with why. */
export interface CodeScan {
  sites: CodeSite[];
  skipped: SkippedFile[];
}

/** How many wrappers deep a lock call is followed out, and how many callers of one wrapper are read. */
const MAX_WRAPPER_DEPTH = 6;
const MAX_CALLERS = 2000;
/** The most lock calls read through wrappers in one scan. */
const MAX_SITES = 50_000;

/** Finds a lock call's wrappers and their callers (see {@link scanCode}). */
class Wrappers {
  private readonly callers = new Map<TS.SignatureDeclaration, (TS.CallExpression | TS.NewExpression)[]>();
  private readonly index: CallIndex;
  private expanded = 0;

  constructor(
    private readonly ts: TypeScript,
    private readonly checker: TS.TypeChecker,
    calls: readonly (TS.CallExpression | TS.NewExpression)[],
    private readonly builder: SiteBuilder,
    private readonly bindings: Bindings,
  ) {
    this.index = indexCalls(ts, calls);
  }

  /** The sites a lock call makes: itself, or (a wrapper's) its callers', each as far out as the wrappers go. */
  expand(found: Found, depth = 0): CodeSite[] {
    const read = this.builder.read(found);
    // Wrappers of wrappers multiply their callers: past this many sites in all, a lock call is listed where it is.
    if (++this.expanded > MAX_SITES) return [this.builder.site(found, read)];
    // The wrapper is the innermost function around the call whose parameters the key or the TTL takes.
    const open = new Set([...(read.key?.open ?? []), ...(read.ttl?.open ? [read.ttl.open] : [])]);
    const fn = this.enclosingOf(found.node, open);
    if (!fn || depth >= MAX_WRAPPER_DEPTH) return [this.builder.site(found, read)];
    const keyOpen = read.key?.open.has(fn) === true;
    const ttlOpen = read.ttl?.open === fn;
    const callers = this.callersOf(fn);
    if (callers.length === 0) return [this.builder.site(found, read)];
    const path = [...(found.path ?? []), { node: found.node, fn }];
    const outward = callers
      .map((call): Found => ({ node: call, lockCall: found.lockCall, shape: found.shape, frame: extend(found.frame, { fn, args: call.arguments ?? [], parent: undefined, thisClass: this.thisAt(call) }), via: [calleeName(this.ts, call), ...found.via], path }))
      // A caller whose arguments turn the lock off anywhere on the way in (`lockIf(!skipRunLock, …)` given `skipRunLock: true`) takes no lock there.
      .filter((o) => path.every((step) => this.builder.reachable(step.node, step.fn, frameIn(o.frame!, step.fn))));
    // A parameter that only carries an id (`notify(teamId)` → `alert:${teamId}`) makes no wrapper — unless the function
    // runs its caller's critical section (a callback): then it is a lock API, and each caller is a site.
    // The same for a factory that returns the lock it makes (`cardMutex(id)` → `new Mutex(…)`).
    const namesLock = ttlOpen || letters(read.key) === 0 || this.takesCallback(fn, found.node) || (found.shape.returnsLock === true && this.returns(fn, found.node)) || outward.some((o) => letters(this.builder.read(o).key) > letters(read.key));
    if (keyOpen && !namesLock) return [this.builder.site(found, read)];
    const out = [this.builder.site(found, read, { wrapper: wrapperName(this.ts, fn), callers: callers.length })];
    for (const o of outward) for (const site of this.expand(o, depth + 1)) out.push(site);
    return out;
  }

  /**
   * A function whose caller hands it the work to run under the lock: a parameter of a function type, one
   * passed as is to the lock call, or one called in the routine the lock call runs (`fn()`), not data it reads.
   */
  private takesCallback(fn: TS.SignatureDeclaration, lockCall: TS.Node): boolean {
    const ts = this.ts;
    if (fn.parameters.some((p) => p.type !== undefined && ts.isFunctionTypeNode(p.type))) return true;
    const params = new Set(fn.parameters.map((p) => p.name).filter(ts.isIdentifier).map((n) => n.text));
    if (!ts.isCallExpression(lockCall) && !ts.isNewExpression(lockCall)) return false;
    for (const arg of lockCall.arguments ?? []) {
      if (ts.isIdentifier(arg) && params.has(arg.text)) return true;
      if (!ts.isArrowFunction(arg) && !ts.isFunctionExpression(arg)) continue;
      let called = false;
      const visit = (n: TS.Node): void => {
        if (called) return;
        if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && params.has(n.expression.text)) called = true;
        else ts.forEachChild(n, visit);
      };
      visit(arg.body);
      if (called) return true;
    }
    return false;
  }

  /** Whether `fn` returns what `node` makes: its expression body, or a `return` of it (awaited or not). */
  private returns(fn: TS.SignatureDeclaration, node: TS.Node): boolean {
    const ts = this.ts;
    let n: TS.Node = node;
    while (ts.isAwaitExpression(n.parent) || ts.isParenthesizedExpression(n.parent) || ts.isAsExpression(n.parent)) n = n.parent;
    return (ts.isArrowFunction(fn) && fn.body === n) || (ts.isReturnStatement(n.parent) && ts.findAncestor(n.parent, ts.isFunctionLike) === fn);
  }

  /** `this` in the function a call reaches, where the call passes its own (`this.m(…)`, `super(…)`): the caller's class. */
  private thisAt(call: TS.CallExpression | TS.NewExpression): TS.ClassLikeDeclaration | undefined {
    const ts = this.ts;
    const callee = call.expression;
    const passesThis = callee.kind === ts.SyntaxKind.SuperKeyword || (ts.isPropertyAccessExpression(callee) && callee.expression.kind === ts.SyntaxKind.ThisKeyword);
    return passesThis ? (ts.findAncestor(call, ts.isClassLike) as TS.ClassLikeDeclaration | undefined) : undefined;
  }

  /**
   * The innermost of `fns` that `node` is written in — or, for a method reading a field its class's
   * constructor set from a parameter (`this.lockKey`), that constructor: each `new` of the class is a caller.
   */
  private enclosingOf(node: TS.Node, fns: ReadonlySet<TS.SignatureDeclaration>): TS.SignatureDeclaration | undefined {
    if (fns.size === 0) return undefined;
    const ts = this.ts;
    const around = ts.findAncestor(node.parent, (n) => fns.has(n as TS.SignatureDeclaration) || (ts.isClassLike(n) && [...fns].some((f) => ts.isConstructorDeclaration(f) && f.parent === n)));
    if (!around) return undefined;
    if (!ts.isClassLike(around)) return around as TS.SignatureDeclaration;
    return [...fns].find((f) => ts.isConstructorDeclaration(f) && f.parent === around);
  }

  /** The calls of a function (or `new` of a constructor, `super(…)` of a subclass) in the program. */
  private callersOf(fn: TS.SignatureDeclaration): (TS.CallExpression | TS.NewExpression)[] {
    let found = this.callers.get(fn);
    if (found) return found;
    found = [];
    const ts = this.ts;
    const name = ts.isConstructorDeclaration(fn) ? fn.parent.name?.text : wrapperName(ts, fn).split('.').pop();
    const candidates = [...(name === undefined ? [] : (this.index.byName.get(name) ?? [])), ...(ts.isConstructorDeclaration(fn) ? (this.index.byName.get('super') ?? []) : [])];
    for (const call of candidates) {
      if (found.length >= MAX_CALLERS) break;
      const target = this.checker.getResolvedSignature(call)?.declaration;
      // A call the checker resolves to no body (a method reached through a mapped type, a `Proxy` facade) is the
      // wrapper's when the wrapper is the only function of the repository by that name.
      const typeOnly = target === undefined || !('body' in target) || target.body === undefined;
      // …but never a call on a value a package made (`limiter.lock(…)` of another library).
      const fromPackage = typeOnly && ts.isPropertyAccessExpression(call.expression) && !(this.bindings.originOf(call.expression.expression)?.module.startsWith('.') ?? true);
      if ((target === fn || (typeOnly && !fromPackage && !ts.isConstructorDeclaration(fn) && this.index.functions.get(name!) === 1)) && !isInside(call, fn)) found.push(call);
    }
    this.callers.set(fn, found);
    return found;
  }
}

/** The program's calls by the last name of their callee (`super` for `super(…)`), and its functions with a body by name. */
interface CallIndex {
  byName: Map<string, (TS.CallExpression | TS.NewExpression)[]>;
  functions: Map<string, number>;
}

function indexCalls(ts: TypeScript, calls: readonly (TS.CallExpression | TS.NewExpression)[]): CallIndex {
  const byName = new Map<string, (TS.CallExpression | TS.NewExpression)[]>();
  for (const call of calls) {
    const callee = call.expression;
    const name = callee.kind === ts.SyntaxKind.SuperKeyword ? 'super' : ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
    if (name === undefined) continue;
    const list = byName.get(name);
    if (list) list.push(call);
    else byName.set(name, [call]);
  }
  const functions = new Map<string, number>();
  for (const source of new Set(calls.map((c) => c.getSourceFile()))) {
    const stack: TS.Node[] = [source];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const fnName = wrapperName(ts, node as TS.SignatureDeclaration).split('.').pop()!;
        functions.set(fnName, (functions.get(fnName) ?? 0) + 1);
      }
      ts.forEachChild(node, (child) => void stack.push(child));
    }
  }
  return { byName, functions };
}

/** The frame chain with `outer` added at its end: the outermost caller binds last. */
function extend(frame: Frame | undefined, outer: Frame): Frame {
  return frame ? { ...frame, parent: extend(frame.parent, outer) } : outer;
}

/** The frame of a chain that binds `fn`'s parameters (the chain's own first frame when none does). */
function frameIn(frame: Frame, fn: TS.SignatureDeclaration): Frame {
  for (let f: Frame | undefined = frame; f; f = f.parent) if (f.fn === fn) return f;
  return frame;
}

/** How many letters of literal text a key has at most over its alternatives (a name's weight against an id's). */
function letters(key: { alternatives: (string | null)[][] } | undefined): number {
  if (!key) return 0;
  let most = 0;
  for (const alt of key.alternatives) most = Math.max(most, alt.reduce((n, p) => n + (p === null ? 0 : (p.match(/\p{L}/gu)?.length ?? 0)), 0));
  return most;
}

/** A function's name as its callers write it: `RunLocker.lock`, `withRedisLock`, `acquireLock`. */
export function wrapperName(ts: TypeScript, fn: TS.SignatureDeclaration): string {
  const own = fn.name && (ts.isIdentifier(fn.name) || ts.isPrivateIdentifier(fn.name)) ? fn.name.text : undefined;
  if (ts.isConstructorDeclaration(fn)) return `new ${fn.parent.name?.text ?? 'class'}`;
  const cls = ts.isMethodDeclaration(fn) && ts.isClassLike(fn.parent) ? fn.parent.name?.text : undefined;
  if (own) return cls ? `${cls}.${own}` : own;
  const holder = fn.parent;
  if (ts.isVariableDeclaration(holder) && ts.isIdentifier(holder.name)) return holder.name.text;
  if (ts.isPropertyAssignment(holder) && ts.isIdentifier(holder.name)) return holder.name.text;
  return 'a function';
}

/** A call as its caller writes it, in short: `runLock.lock`, `new RedisLock`, `super`. */
function calleeName(ts: TypeScript, call: TS.CallExpression | TS.NewExpression): string {
  const text = call.expression.getText().replace(/^this\.(\$\.)?/, '').replace(/\s+/g, '');
  const short = text.length > 40 ? `…${text.slice(-39)}` : text;
  return ts.isNewExpression(call) ? `new ${short}` : short;
}

/** `defineCommand(name, { lua, numberOfKeys })` calls: the Lua scripts a client gets as commands of their own. */
function definedCommands(ts: TypeScript, calls: readonly (TS.CallExpression | TS.NewExpression)[], text: (e: TS.Expression) => string | undefined, evaluator: Evaluator): DefinedCommands {
  const commands = new Map<string, { lua: string; numberOfKeys: number }>();
  for (const call of calls) {
    if (!ts.isCallExpression(call) || !ts.isPropertyAccessExpression(call.expression) || call.expression.name.text !== 'defineCommand' || call.arguments.length < 2) continue;
    const name = text(call.arguments[0]!);
    const lua = evaluator.propertyOf({ expr: call.arguments[1]!, frame: undefined }, 'lua');
    const keys = evaluator.propertyOf({ expr: call.arguments[1]!, frame: undefined }, 'numberOfKeys');
    const script = lua?.kind === 'ref' ? text(lua.ref.expr) : undefined;
    const count = keys?.kind === 'ref' ? Number(keys.ref.expr.getText()) : 0;
    if (name && script) commands.set(name, { lua: script, numberOfKeys: Number.isInteger(count) ? count : 0 });
  }
  return commands;
}

/** One site per place and pattern: two lock calls a wrapper makes for one caller (`lock`, `lockIf`) are one site. */
function dedupe(sites: CodeSite[]): CodeSite[] {
  const seen = new Map<string, CodeSite>();
  for (const s of sites) {
    const key = `${s.at.file}:${s.at.line}:${s.pattern ?? ''}:${s.ttl?.valueMs ?? ''}`;
    if (!seen.has(key)) seen.set(key, s);
  }
  return [...seen.values()];
}
