import { performance } from 'node:perf_hooks';
import { ConfigError } from '../errors.js';
import { readLockCommand, verbOf, type LockCommand, type Verb } from './commands.js';
import type { LockTracker } from './tracker.js';

/**
 * Where each client lets every command pass, and how we stand there. The
 * client object itself is instrumented (its `sendCommand` or, on a node-redis
 * cluster, `_execute` gets an own wrapper), so it stays the very object the
 * service made: same class, same events, same `instanceof`. A command that is
 * not lock-shaped costs a comparison or two on its name.
 *
 * - ioredis `Redis`/`Cluster` (5, 6): `sendCommand(command, stream?, node?)` sees every
 *   command, callbacks, pipelines, `defineCommand` scripts and the offline queue's replays
 *   included (a replay is seen once). Commands inside MULTI are not read.
 * - node-redis 5 client: `sendCommand(args)` on the client's `_self` sees every command
 *   and script (EVALSHA, then EVAL after NOSCRIPT); MULTI and pipelines bypass it.
 * - node-redis 5 cluster: `_execute` hands each command to a node client, which is
 *   instrumented as above the first time it is used.
 */

type Restore = () => void;

interface IoredisCommand {
  name: string;
  args: unknown[];
  inTransaction?: boolean;
  /** Settle the command's promise; ioredis calls them as the reply (or error) arrives. */
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type AnyFunction = (...args: never[]) => unknown;
type Hookable = Record<string | symbol, unknown>;

const hooked = new WeakMap<object, LockTracker>();
/**
 * Numbers the servers behind the clients we hook: a lock's attempts are counted
 * per server (one per server in a Redlock round), and a release counts only from
 * a server the lock was won on. Clients to one address (a duplicate, a second
 * connection) share a number; a client whose address cannot be read (a Cluster:
 * one logical server) gets its own.
 */
const servers = new Map<string, number>();
let serverCount = 0;

function serverOf(client: Hookable): number {
  const o = (client.options ?? (selfOf(client) as Hookable).options) as Record<string, unknown> | undefined;
  const socket = o?.socket as Record<string, unknown> | undefined;
  let address: string | undefined;
  if (o && typeof o.path === 'string') address = `unix:${o.path}/${String(o.db ?? 0)}`;
  else if (o && (typeof o.host === 'string' || typeof o.port === 'number')) address = `${String(o.host ?? 'localhost')}:${String(o.port ?? 6379)}/${String(o.db ?? 0)}`;
  else if (o && typeof o.url === 'string') address = `${o.url}#${String(o.database ?? '')}`;
  else if (socket && (socket.host !== undefined || socket.port !== undefined)) address = `${String(socket.host ?? 'localhost')}:${String(socket.port ?? 6379)}/${String(o?.database ?? 0)}`;
  if (address === undefined) return ++serverCount;
  let n = servers.get(address);
  if (n === undefined) {
    if (servers.size >= 10_000) servers.clear();
    servers.set(address, (n = ++serverCount));
  }
  return n;
}

/** The tracker a client was instrumented with, if it was. */
export function trackerOf(client: object): LockTracker | undefined {
  return hooked.get(client);
}

/** Instruments a client in place; returns how to undo it. */
export function hookClient(client: object, tracker: LockTracker): Restore {
  const c = client as Hookable;
  const undo: Restore[] = [];
  if (typeof c.call === 'function' && typeof c.sendCommand === 'function') {
    undo.push(replace(c, 'sendCommand', (original) => ioredisSend(original, tracker, serverOf(c))));
  } else if (typeof (selfOf(c) as Hookable)._execute === 'function' && Array.isArray(c.masters)) {
    undo.push(hookNodeRedisCluster(selfOf(c) as Hookable, tracker));
  } else if (typeof c.sendCommand === 'function' && typeof c.evalSha === 'function') {
    undo.push(replace(selfOf(c) as Hookable, 'sendCommand', (original) => nodeRedisSend(original, tracker, serverOf(c))));
  } else {
    throw new ConfigError('Expected a Redis client to instrument: ioredis `Redis` or `Cluster`, or a node-redis 5 client or cluster');
  }
  if (typeof c.duplicate === 'function') {
    // A duplicate (for pub/sub, blocking commands) is instrumented too, into the same tracker:
    // a lock taken on one connection and released on another is still one lock.
    undo.push(
      replace(c, 'duplicate', (original) =>
        function (this: unknown, ...args: unknown[]) {
          const copy = original.apply(this, args);
          if (copy !== null && typeof copy === 'object' && !hooked.has(copy)) hookClient(copy, tracker);
          return copy;
        },
      ),
    );
  }
  hooked.set(client, tracker);
  return () => {
    for (const u of undo.reverse()) u();
    hooked.delete(client);
  };
}

/** node-redis hands out `Object.create(client)` views; commands run on the shared `_self`. */
function selfOf(c: Hookable): object {
  const self = c._self;
  return self !== null && typeof self === 'object' ? self : c;
}

function replace(target: Hookable, name: string, wrap: (original: (...args: unknown[]) => unknown) => AnyFunction): Restore {
  const hadOwn = Object.prototype.hasOwnProperty.call(target, name);
  const previous = target[name];
  const original = previous as (...args: unknown[]) => unknown;
  target[name] = wrap(original);
  return () => {
    if (hadOwn) target[name] = previous;
    else delete target[name];
  };
}

/** The name of the reply hook we put on an ioredis command: one sent again (offline queue, reconnect) is read once. */
const REPLY_HOOK = 'ttlAdvisorReplyHook';

/**
 * Whether a command's `resolve` is our reply hook (the command is sent again). A function's `name` is a
 * native getter (~300 instructions, twice per lock cycle), so it is read only where it can be ours:
 * our hook is a `function` and has a `prototype`; ioredis's own `resolve` is an arrow function, which
 * has none — and `in` calls no getter.
 */
const isReplyHook = (resolve: (value: unknown) => void): boolean => 'prototype' in resolve && resolve.name === REPLY_HOOK;

/**
 * ioredis: the command's own `resolve`/`reject` are wrapped, so the reply is
 * seen as ioredis settles it — no promise and no microtask more per command.
 * A command that is no lock's costs a look at its name's length and letters.
 */
function ioredisSend(original: (...args: unknown[]) => unknown, tracker: LockTracker, clientNo: number) {
  return function sendCommand(this: unknown, command: IoredisCommand, stream?: unknown, node?: unknown) {
    const verb = verbOf(command.name);
    // Read first: most commands of a lock's verbs are not a lock's (a cache's SET), and reading turns them
    // away before the look at `resolve`'s name (a getter call) that tells a command sent again.
    const read = verb === undefined ? undefined : readSafely(verb, command.args, 0);
    if (read !== undefined && !command.inTransaction && !isReplyHook(command.resolve)) {
      const pending = observe(tracker, read, clientNo);
      if (pending !== undefined) hookReply(command, tracker, pending);
    }
    return original.call(this, command, stream, node);
  };
}

/** Wraps an ioredis command's settling functions: two closures over one context, and nothing else per command. */
function hookReply(command: IoredisCommand, tracker: LockTracker, pending: LockCommand): void {
  const { resolve, reject } = command;
  command.resolve = function ttlAdvisorReplyHook(value: unknown) {
    resolve(value);
    safely(tracker, pending, value, false, false);
  };
  command.reject = (error: unknown) => {
    reject(error);
    safely(tracker, pending, undefined, true, isNoScript(error));
  };
}

function nodeRedisSend(original: (...args: unknown[]) => unknown, tracker: LockTracker, clientNo: number) {
  return function sendCommand(this: unknown, args: unknown[], options?: unknown) {
    const verb = Array.isArray(args) ? verbOf(args[0]) : undefined;
    // Read before sending: a script's NOSCRIPT fallback rewrites the same array afterwards.
    const read = verb === undefined ? undefined : readSafely(verb, args, 1);
    const pending = read === undefined ? undefined : observe(tracker, read, clientNo);
    const reply = original.call(this, args, options) as Promise<unknown>;
    if (pending !== undefined) follow(reply, tracker, pending);
    return reply;
  };
}

function hookNodeRedisCluster(self: Hookable, tracker: LockTracker): Restore {
  const nodes: Restore[] = [];
  const undo = replace(
    self,
    '_execute',
    (original) =>
      function (this: unknown, firstKey: unknown, isReadonly: unknown, options: unknown, fn: (client: Hookable, opts: unknown) => unknown) {
        return original.call(this, firstKey, isReadonly, options, (client: Hookable, opts: unknown) => {
          const node = selfOf(client) as Hookable;
          if (!hooked.has(node)) {
            const restore = replace(node, 'sendCommand', (send) => nodeRedisSend(send, tracker, serverOf(client)));
            nodes.push(() => {
              restore();
              hooked.delete(node);
            });
            hooked.set(node, tracker);
          }
          return fn(client, opts);
        });
      },
  );
  return () => {
    undo();
    for (const n of nodes) n();
  };
}

/** Reads a command (its arguments from `args[from]`) as a lock's, or `undefined`; never throws. */
function readSafely(verb: Verb, args: readonly unknown[], from: number): LockCommand | undefined {
  try {
    return readLockCommand(verb, args, Date.now, from);
  } catch {
    return undefined; // reading a command must never stop it from being sent
  }
}

/** Tells the tracker a lock command was sent (only those read the clock). */
function observe(tracker: LockTracker, command: LockCommand, client: number): LockCommand | undefined {
  try {
    return tracker.sent(command, performance.now(), client);
  } catch {
    return undefined;
  }
}

function follow(reply: Promise<unknown>, tracker: LockTracker, pending: LockCommand): void {
  reply.then(
    (value) => safely(tracker, pending, value, false, false),
    (error: unknown) => safely(tracker, pending, undefined, true, isNoScript(error)),
  );
}

/** NOSCRIPT: the script was not cached, and its sender sends it again as EVAL. Not an attempt (settled as `resent`). */
function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** Our bookkeeping never throws into the client's reply handling (or an unhandled rejection). */
function safely(tracker: LockTracker, pending: LockCommand, value: unknown, failed: boolean, resent: boolean): void {
  try {
    tracker.settle(pending, value, failed, resent);
  } catch {
    // ignored on purpose
  }
}
