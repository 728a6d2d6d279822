import { realpathSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type * as TS from 'typescript';
import { Bindings, type Origin } from './bindings.js';
import type { TypeScript } from './load.js';
import type { CodeLibrary, CodePosition, CodeSite, TtlRole, TtlValue } from './types.js';
import { REPRESENTATIVE_ID, Values } from './values.js';

/**
 * Finds the lock call sites in TypeScript/JavaScript files with the compiler
 * API: the program binds each name to its declaration, so a call is ours,
 * node-redlock's, redis-semaphore's, BullMQ's or a raw `SET … PX … NX` only
 * when its binding leads to that library's import. Packages are not read
 * (the import's module name is all it takes), so a checkout without
 * `node_modules` scans the same.
 */
export function scanCode(ts: TypeScript, files: readonly string[], root: string): CodeSite[] {
  const wanted = new Set(files.map((f) => resolve(f)));
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
  const program = ts.createProgram({ rootNames: [...wanted], options, host });
  const scanner = new Scanner(ts, program.getTypeChecker(), realpathSync(root));
  const sites: CodeSite[] = [];
  for (const source of program.getSourceFiles()) {
    if (!wanted.has(resolve(source.fileName))) continue;
    sites.push(...scanner.scan(source));
  }
  return sites.sort((a, b) => a.at.file.localeCompare(b.at.file) || a.at.line - b.at.line);
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
    const visit = (node: TS.Node): void => {
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const shape = this.shapeOf(node);
        if (shape) sites.push(this.siteOf(node, shape));
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return sites;
  }

  private shapeOf(node: TS.CallExpression | TS.NewExpression): Shape | undefined {
    const ts = this.ts;
    const args = node.arguments ?? ts.factory.createNodeArray<TS.Expression>();
    const callee = this.bindings.unwrap(node.expression);
    if (ts.isNewExpression(node)) {
      const o = this.bindings.originOf(callee);
      if (!o || o.made !== 'import') return undefined;
      if (o.module === 'ttl-advisor' && o.name === 'RedisLock') return this.ours('new RedisLock', args[1], args[2]);
      if (o.module === 'redis-semaphore' && (o.name === 'Mutex' || o.name === 'Semaphore')) {
        const isMutex = o.name === 'Mutex';
        const shape: Shape = { library: 'redis-semaphore', call: `new ${o.name}`, key: args[1], keyPrefix: isMutex ? 'mutex:' : 'semaphore:', options: args[isMutex ? 2 : 3], ttlOption: 'lockTimeout', renewOptions: [['refreshInterval', 'renew']] };
        return shape;
      }
      if (o.module === 'bullmq' && o.name === 'Worker') {
        const opts = this.values.objectOf(args[2]);
        const prefix = this.values.property(opts, 'prefix');
        const prefixText = prefix && ts.isStringLiteralLike(this.bindings.unwrap(prefix)) ? (this.bindings.unwrap(prefix) as TS.StringLiteral).text : prefix ? undefined : 'bull';
        if (prefixText === undefined) return { library: 'bullmq', call: 'new Worker', key: undefined, options: args[2], ttlOption: 'lockDuration', renewOptions: [['lockRenewTime', 'renew']] };
        return { library: 'bullmq', call: 'new Worker', key: args[0], keyPrefix: `${prefixText}:`, keySuffix: `:${REPRESENTATIVE_ID}:lock`, options: args[2], ttlOption: 'lockDuration', renewOptions: [['lockRenewTime', 'renew']] };
      }
      return undefined;
    }
    if (ts.isIdentifier(callee)) {
      const o = this.bindings.originOf(callee);
      if (o?.module === 'ttl-advisor' && o.name === 'withLock' && o.made === 'import') return this.ours('withLock', args[1], args[3]);
      return undefined;
    }
    if (!ts.isPropertyAccessExpression(callee)) return undefined;
    const method = callee.name.text;
    const receiver = this.bindings.originOf(callee.expression);
    if (!receiver) return undefined;
    if (receiver.module === 'ttl-advisor' && receiver.name === 'RedisLock' && receiver.made === 'import' && method === 'acquire') return this.ours('RedisLock.acquire', args[1], args[2]);
    if (receiver.module === 'redlock' && isDefault(receiver) && receiver.made === 'new') {
      if (method === 'using' || method === 'acquire') {
        const settings = args.length >= 4 || (method === 'acquire' && args.length >= 3) ? args[2] : undefined;
        return { library: 'redlock', call: `redlock.${method}`, key: args[0], ttl: { expr: args[1], option: 'duration' }, options: settings, renewOptions: method === 'using' ? [['automaticExtensionThreshold', 'threshold']] : [] };
      }
      if (method === 'lock') return { library: 'redlock', call: 'redlock.lock', key: args[0], ttl: { expr: args[1], option: 'ttl' } };
    }
    if (method === 'set' && isClient(receiver)) return this.rawSet(receiver.module as 'ioredis' | 'redis', args);
    return undefined;
  }

  private ours(call: string, key: TS.Expression | undefined, options: TS.Expression | undefined): Shape {
    return { library: 'ttl-advisor', call, key, options, ttlOption: 'ttlMs', renewOptions: [['autoExtend', 'renew']] };
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
    let path = source.fileName;
    try {
      path = realpathSync(path);
    } catch {
      // a file the host made up: keep its name
    }
    return { file: relative(this.root, path).split('\\').join('/'), line: line + 1 };
  }
}

function isDefault(o: Origin): boolean {
  return o.name === 'default' || o.name === '*' || o.name === 'Redlock';
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

