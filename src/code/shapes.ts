import type * as TS from 'typescript';
import { LEASE_LIBRARY_FACTS } from '../sample/libraries.js';
import type { LeaseLibrary } from '../sample/sample.js';
import type { Bindings, Origin } from './bindings.js';
import type { TypeScript } from './load.js';
import type { CodeLibrary, TtlRole } from './types.js';

/**
 * What a lock call looks like: the lock APIs of the libraries (as data,
 * reached from their imports, forks and re-exports included), and the Redis
 * commands that take a lock by hand — `SET … NX PX|EX` in either argument
 * order, node-redis's options, `SETNX` then `EXPIRE` on the same key, and a
 * Lua script that does `SET … NX PX|EX` sent with `EVAL` or `defineCommand`.
 */
export interface Shape {
  library: CodeLibrary;
  call: string;
  key: TS.Expression | undefined;
  /** What the library puts before the key (`mutex:`), or the key's whole template around it (BullMQ). */
  keyPrefix?: string;
  keySuffix?: string;
  /** The TTL as an argument; `unitMs` 1000 where it is in seconds (`EX`, `EXPIRE`). */
  ttl?: { expr: TS.Expression | undefined; option: string; unitMs: number };
  options?: TS.Expression | undefined;
  ttlOption?: string;
  renewOptions?: [string, TtlRole][];
  /** The TTL the library uses when the call passes none (redis-semaphore's 10 s, BullMQ's 30 s). */
  libraryDefaultMs?: number;
  /** The call gives back a lock to hold and release (`new Mutex(…)`, `redlock.acquire(…)`), not the routine's result. */
  returnsLock?: boolean;
  /** Where the options object goes in the call's arguments (a library's default is added there). */
  optionsIndex?: number;
}

/** A lock API of a library, as data: how its call is reached from the import, and where the call carries the key, the TTL and the options. */
interface CallShape {
  library: LeaseLibrary & CodeLibrary;
  /** The module, or a test of it: forks and re-exports (`@sesamecare-oss/redlock`) are recognized by their name's end. */
  module: (name: string) => boolean;
  names: readonly string[];
  /** `new X(…)`; `f(…)`; `X.method(…)` on the import itself (`static`) or on an instance made with `new` (`instance`). */
  form: 'new' | 'call' | 'static' | 'instance';
  method?: string;
  keyArg: number;
  keyPrefix?: string;
  ttlArg?: { index: number; option: string };
  optionsArg?: { index: number; minArgs?: number };
  renews?: 'renewEvery' | 'threshold';
  libraryDefaultMs?: number;
}

const is = (module: string) => (name: string) => name === module;
export const redlockModule = (name: string) => name === 'redlock' || /[/-]redlock$/.test(name);
const REDLOCK = ['default', '*', 'Redlock'];
const CALL_SHAPES: readonly CallShape[] = [
  { library: 'ttl-advisor', module: is('ttl-advisor'), names: ['RedisLock'], form: 'new', keyArg: 1, optionsArg: { index: 2 }, renews: 'renewEvery' },
  { library: 'ttl-advisor', module: is('ttl-advisor'), names: ['withLock'], form: 'call', keyArg: 1, optionsArg: { index: 3 }, renews: 'renewEvery' },
  { library: 'ttl-advisor', module: is('ttl-advisor'), names: ['RedisLock'], form: 'static', method: 'acquire', keyArg: 1, optionsArg: { index: 2 }, renews: 'renewEvery' },
  { library: 'redis-semaphore', module: is('redis-semaphore'), names: ['Mutex'], form: 'new', keyArg: 1, keyPrefix: 'mutex:', optionsArg: { index: 2 }, renews: 'renewEvery', libraryDefaultMs: 10_000 },
  { library: 'redis-semaphore', module: is('redis-semaphore'), names: ['Semaphore'], form: 'new', keyArg: 1, keyPrefix: 'semaphore:', optionsArg: { index: 3 }, renews: 'renewEvery', libraryDefaultMs: 10_000 },
  { library: 'redis-semaphore', module: is('redis-semaphore'), names: ['RedlockMutex'], form: 'new', keyArg: 1, keyPrefix: 'mutex:', optionsArg: { index: 2 }, renews: 'renewEvery', libraryDefaultMs: 10_000 },
  { library: 'redis-semaphore', module: is('redis-semaphore'), names: ['RedlockSemaphore'], form: 'new', keyArg: 1, keyPrefix: 'semaphore:', optionsArg: { index: 3 }, renews: 'renewEvery', libraryDefaultMs: 10_000 },
  // The key is BullMQ's own, made of its prefix and the queue's name (see `bullmqKey`).
  { library: 'bullmq', module: is('bullmq'), names: ['Worker'], form: 'new', keyArg: 0, optionsArg: { index: 2 }, renews: 'renewEvery', libraryDefaultMs: 30_000 },
  { library: 'redlock', module: redlockModule, names: REDLOCK, form: 'instance', method: 'using', keyArg: 0, ttlArg: { index: 1, option: 'duration' }, optionsArg: { index: 2, minArgs: 4 }, renews: 'threshold' },
  { library: 'redlock', module: redlockModule, names: REDLOCK, form: 'instance', method: 'acquire', keyArg: 0, ttlArg: { index: 1, option: 'duration' }, optionsArg: { index: 2, minArgs: 3 } },
  { library: 'redlock', module: redlockModule, names: REDLOCK, form: 'instance', method: 'lock', keyArg: 0, ttlArg: { index: 1, option: 'ttl' } },
];

/** The call as users write it, in short: `new Mutex`, `withLock`, `RedisLock.acquire`, `redlock.using`. */
function callText(shape: CallShape): string {
  const name = shape.form === 'instance' ? shape.library : shape.names[0]!;
  if (shape.form === 'new') return `new ${name}`;
  return shape.form === 'call' ? name : `${name}.${shape.method}`;
}

function callShapeOf(origin: Origin, form: CallShape['form'], method?: string): CallShape | undefined {
  const made = form === 'instance' ? 'new' : 'import';
  return CALL_SHAPES.find((c) => c.form === form && c.module(origin.module) && origin.made === made && c.names.includes(origin.name) && c.method === method);
}

/**
 * The key and TTL slots of a Lua script's `redis.call('SET', key, value, 'NX', 'PX'|'EX', ttl)`, each a
 * `KEYS[i]` or `ARGV[j]` — directly, or through a `local x = KEYS[i]` / `local t = tonumber(ARGV[j])`.
 */
export function luaSetNx(lua: string): { key: { of: 'KEYS' | 'ARGV'; index: number }; ttl: { of: 'KEYS' | 'ARGV'; index: number }; unit: 'PX' | 'EX' } | undefined {
  const locals = new Map<string, { of: 'KEYS' | 'ARGV'; index: number }>();
  for (const m of lua.matchAll(/local\s+(\w+)\s*=\s*(?:tonumber\s*\(\s*)?(KEYS|ARGV)\[(\d+)\]/g)) locals.set(m[1]!, { of: m[2] as 'KEYS' | 'ARGV', index: Number(m[3]) });
  const slot = (text: string) => {
    const t = text.trim().replace(/^tonumber\s*\(\s*/, '').replace(/\s*\)$/, '');
    const direct = /^(KEYS|ARGV)\[(\d+)\]$/.exec(t);
    return direct ? { of: direct[1] as 'KEYS' | 'ARGV', index: Number(direct[2]) } : locals.get(t);
  };
  for (const call of lua.matchAll(/redis\.p?call\s*\(\s*['"]set['"]\s*,([^\n]*)\)/gi)) {
    const parts = call[1]!.split(',').map((p) => p.trim());
    const words = parts.map((p) => /^['"](\w+)['"]$/.exec(p)?.[1]?.toUpperCase());
    const u = words.findIndex((w) => w === 'PX' || w === 'EX');
    const key = slot(parts[0] ?? '');
    const ttl = u >= 0 ? slot(parts[u + 1] ?? '') : undefined;
    if (words.includes('NX') && key && ttl) return { key, ttl, unit: words[u] as 'PX' | 'EX' };
  }
  return undefined;
}

/** Stands in for each `${…}` of a key: several digits, so `patternOf` reads it as an id (`user${id}` → `user{id}`). */
export const REPRESENTATIVE_ID = '12345';

/** Lua scripts registered with `defineCommand(name, { lua, numberOfKeys })` in the program, by command name. */
export type DefinedCommands = ReadonlyMap<string, { lua: string; numberOfKeys: number }>;

/** A value made from a Redis client library (ioredis, node-redis, or a re-export whose name says so). */
function isClientOrigin(o: Origin): boolean {
  return /(^|[/-])(ioredis|redis|@redis\/client|valkey|iovalkey)$/.test(o.module);
}

/** node-redlock's `using` and `acquire`, for calls on a Redlock whose making the bindings cannot follow. */
const REDLOCK_BY_SHAPE = new Map(CALL_SHAPES.filter((c) => c.library === 'redlock' && c.method !== 'lock').map((c) => [c.method!, c]));

export class Shapes {
  constructor(
    private readonly ts: TypeScript,
    private readonly bindings: Bindings,
    /** Reads a string a script is held in (a literal, a `const`). */
    private readonly text: (e: TS.Expression) => string | undefined,
    private readonly commands: DefinedCommands,
    /** Some file of the repository imports node-redlock (or a fork of it). */
    private readonly importsRedlock: boolean,
  ) {}

  /** The lock a call takes, if it is a lock call. */
  of(node: TS.CallExpression | TS.NewExpression): Shape | undefined {
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
    const shape = receiver && (callShapeOf(receiver, 'static', method) ?? callShapeOf(receiver, 'instance', method));
    if (shape) return this.fromCallShape(shape, args);
    // A Redlock the bindings lose (made lazily behind a mutex, passed through a promise): node-redlock's API shape, in a repository that imports it.
    const byShape = !receiver && this.importsRedlock && args.length >= 2 && ts.isArrayLiteralExpression(this.bindings.unwrap(args[0]!)) ? REDLOCK_BY_SHAPE.get(method) : undefined;
    if (byShape) return this.fromCallShape(byShape, args);
    // Redis's own words say a command is one, whatever made the client — unless it is known to be something else.
    if (receiver && !isClientOrigin(receiver) && !receiver.module.startsWith('.')) return undefined;
    if (!receiver && this.notAClient(callee.expression)) return undefined;
    return this.redisCommand(method, args, node as TS.CallExpression);
  }

  /** A receiver known not to be a Redis client: an object literal, a function, an instance of a class of the repository's own. */
  private notAClient(e: TS.Expression): boolean {
    const ts = this.ts;
    let current = this.bindings.unwrap(e);
    for (let i = 0; i < 10; i++) {
      if (ts.isObjectLiteralExpression(current) || ts.isArrowFunction(current) || ts.isFunctionExpression(current)) return true;
      if (ts.isNewExpression(current)) {
        const decl = this.bindings.targetOf(current.expression);
        return decl !== undefined && ts.isClassLike(decl) && !decl.heritageClauses?.some((h) => h.token === ts.SyntaxKind.ExtendsKeyword);
      }
      if (!ts.isIdentifier(current)) return false;
      const decl = this.bindings.targetOf(current);
      if (!decl || !ts.isVariableDeclaration(decl) || !decl.initializer || decl.type) return false;
      current = this.bindings.unwrap(decl.initializer);
    }
    return false;
  }

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
    if (c.libraryDefaultMs !== undefined) shape.libraryDefaultMs = c.libraryDefaultMs;
    if (c.optionsArg) shape.optionsIndex = c.optionsArg.index;
    if (c.ttlArg) shape.ttl = { expr: args[c.ttlArg.index], option: c.ttlArg.option, unitMs: 1 };
    else shape.ttlOption = words.ttl;
    if (c.library === 'bullmq') shape.keySuffix = `:${REPRESENTATIVE_ID}:lock`;
    if (c.form === 'new' || c.method === 'acquire' || c.method === 'lock') shape.returnsLock = true;
    return shape;
  }

  /**
   * A lock taken with Redis commands: the arguments say it, whatever the client (one from a factory, a
   * field, a parameter): `SET key v [PX|EX] ttl NX` in any order, node-redis's `{ NX: true, PX }` or
   * `{ condition: 'NX', expiration: { type, value } }`, `SETNX` then `EXPIRE`, a Lua `SET … NX PX|EX`.
   */
  private redisCommand(method: string, args: readonly TS.Expression[], node: TS.CallExpression): Shape | undefined {
    const ts = this.ts;
    const m = method.toLowerCase();
    if (m === 'set' && args.length >= 3) {
      const words = args.slice(2).map((a) => this.word(a));
      const nx = words.indexOf('NX');
      const unit = words.findIndex((w) => w === 'PX' || w === 'EX');
      if (nx >= 0 && unit >= 0) return this.raw('ioredis', args[0], args[2 + unit + 1], words[unit]!);
      const opts = this.bindings.unwrap(args[2]!);
      if (!ts.isObjectLiteralExpression(opts)) return undefined;
      const prop = (o: TS.ObjectLiteralExpression, name: string) => o.properties.find((p): p is TS.PropertyAssignment => ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && p.name.text === name)?.initializer;
      const nxFlag = prop(opts, 'NX');
      const condition = prop(opts, 'condition');
      const isNx = (nxFlag && nxFlag.kind === ts.SyntaxKind.TrueKeyword) || (condition && this.word(condition) === 'NX');
      if (!isNx) return undefined;
      for (const u of ['PX', 'EX']) if (prop(opts, u)) return this.raw('redis', args[0], prop(opts, u), u);
      const expiration = prop(opts, 'expiration');
      const exp = expiration && this.bindings.unwrap(expiration);
      if (exp && ts.isObjectLiteralExpression(exp)) {
        const type = prop(exp, 'type');
        const value = prop(exp, 'value');
        const u = type && this.word(type);
        if ((u === 'PX' || u === 'EX') && value) return this.raw('redis', args[0], value, u);
      }
      return undefined;
    }
    if (m === 'setnx' && args.length >= 1) return this.setnxThenExpire(node, args[0]!);
    if ((m === 'eval' || m === 'evalsha') && args.length >= 2) return this.lua(this.text(args[0]!), args.slice(1), node);
    const defined = this.commands.get(method);
    if (defined) return this.luaCommand(defined, args, method);
    return undefined;
  }

  /** `SET … NX` with its TTL in `PX` (ms) or `EX` (seconds), written the ioredis way (arguments) or node-redis's (options). */
  private raw(library: 'ioredis' | 'redis', key: TS.Expression | undefined, ttl: TS.Expression | undefined, unit: string): Shape {
    return { library, call: `SET ${unit} NX`, key, ttl: { expr: ttl, option: unit, unitMs: unit === 'EX' ? 1000 : 1 } };
  }

  /** `SETNX key` whose TTL is set right after by `EXPIRE`/`PEXPIRE` on the same key (in the same function). */
  private setnxThenExpire(node: TS.CallExpression, key: TS.Expression): Shape | undefined {
    const ts = this.ts;
    const scope = ts.findAncestor(node, (n) => ts.isFunctionLike(n) || ts.isSourceFile(n));
    const keyText = key.getText();
    let found: Shape | undefined;
    const visit = (n: TS.Node): void => {
      if (found) return;
      if (ts.isCallExpression(n) && n.pos > node.pos && ts.isPropertyAccessExpression(n.expression) && n.arguments.length >= 2 && n.arguments[0]!.getText() === keyText) {
        const name = n.expression.name.text.toLowerCase();
        if (name === 'expire' || name === 'pexpire') found = { library: 'ioredis', call: `SETNX + ${name.toUpperCase()}`, key, ttl: { expr: n.arguments[1], option: name.toUpperCase(), unitMs: name === 'expire' ? 1000 : 1 } };
      }
      ts.forEachChild(n, visit);
    };
    if (scope) visit(scope);
    return found;
  }

  /** `EVAL script numKeys key… arg…` (ioredis's argument list) whose script does `SET KEYS[i] … NX PX|EX ARGV[j]`. */
  private lua(script: string | undefined, rest: readonly TS.Expression[], node: TS.CallExpression): Shape | undefined {
    if (!script || !this.ts.isNumericLiteral(this.bindings.unwrap(rest[0] ?? node))) return undefined;
    const numberOfKeys = Number((this.bindings.unwrap(rest[0]!) as TS.NumericLiteral).text);
    return this.luaCommand({ lua: script, numberOfKeys }, rest.slice(1), 'EVAL');
  }

  private luaCommand(defined: { lua: string; numberOfKeys: number }, args: readonly TS.Expression[], name: string): Shape | undefined {
    const taken = luaSetNx(defined.lua);
    if (!taken) return undefined;
    const argIndex = (slot: { of: 'KEYS' | 'ARGV'; index: number }) => (slot.of === 'KEYS' ? slot.index - 1 : defined.numberOfKeys + slot.index - 1);
    const { key, ttl, unit } = taken;
    return { library: 'ioredis', call: `${name} (Lua SET NX ${unit})`, key: args[argIndex(key)], ttl: { expr: args[argIndex(ttl)], option: unit, unitMs: unit === 'EX' ? 1000 : 1 } };
  }

  /** A Redis word written as a string literal (`'PX'`, `"nx"`), upper-cased; `undefined` otherwise. */
  private word(e: TS.Expression): string | undefined {
    const u = this.bindings.unwrap(e);
    return this.ts.isStringLiteralLike(u) ? u.text.toUpperCase() : undefined;
  }
}
