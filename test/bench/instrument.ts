import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { Mutex } from 'redis-semaphore';
import Redlock from 'redlock';
import { RELEASE } from '../../src/lock/scripts.js';
import { commands, lib } from './lib.js';
import { measure } from './lock-overhead.js';
import { formatRate, log, median, round } from './stats.js';

const { SqliteRecorder, instrument, instrumentationOf } = lib;

type Op = (worker: number) => Promise<unknown>;
type NodeRedis = ReturnType<typeof createClient>;

/** The lock cycles measured, as each library's users write them (one key per caller). */
const handWritten = (c: Redis): Op => async (w) => {
  const token = randomUUID();
  await c.set(`bench:hw:lock:${w}`, token, 'PX', 10_000, 'NX');
  await c.evalsha(RELEASE.sha, 1, `bench:hw:lock:${w}`, token);
};
const redlockOf = (c: Redis): Op => {
  const redlock = new Redlock([c], { retryCount: 0 });
  return (w) => redlock.using([`bench:redlock:lock:${w}`], 10_000, async () => undefined);
};
const mutexOf = (c: Redis): Op => async (w) => {
  const mutex = new Mutex(c, `bench:sem:lock:${w}`, { lockTimeout: 10_000, acquireAttemptsLimit: 1, refreshInterval: 0 });
  await mutex.acquire();
  await mutex.release();
};
const VALUE = 'x'.repeat(64);
const getSet = (c: Redis): Op => (w) => (w % 2 === 0 ? c.get(`bench:cache:${w}`) : c.set(`bench:cache:${w}`, VALUE));
const getSetNr = (c: NodeRedis): Op => (w) => (w % 2 === 0 ? c.get(`bench:cache:${w}`) : c.set(`bench:cache:${w}`, VALUE));

/** What Redis answers each command of the cycles above (as the parser hands it over: a simple string as bytes). */
function instantReply(name: string): unknown {
  if (name === 'get') return null;
  if (name === 'set') return Buffer.from('OK');
  return 1; // EVALSHA/EVAL of an acquire, release or extend script: one key done
}

/**
 * An ioredis client answering every command at once, in the process: ioredis
 * still builds, serializes and settles each `Command`, the lock library still
 * runs, only the socket and Redis are gone — so a cycle's CPU time is all
 * JavaScript, and the instrumented client's extra time is ours.
 */
function instantIoredis(): Redis {
  const c = new Redis({ lazyConnect: true });
  type Sent = { name: string; toWritable(socket: unknown): unknown; resolve(v: unknown): void; promise: Promise<unknown> };
  (c as unknown as { sendCommand: unknown }).sendCommand = (command: Sent) => {
    command.toWritable(undefined); // as ioredis writes it to its socket
    command.resolve(instantReply(command.name));
    return command.promise;
  };
  return c;
}

/** The same for node-redis: its client's `_self.sendCommand` (which `instrument` wraps) answers at once. */
function instantNodeRedis(): NodeRedis {
  const c = createClient();
  const self = (c as unknown as { _self: Record<string, unknown> })._self;
  self.sendCommand = (args: string[]) => Promise.resolve(args[0] === 'GET' ? null : 'OK');
  return c;
}

/** Process CPU µs per op of `count` ops by `concurrency` callers (each awaits its own op before the next). */
async function cpuPerOp(concurrency: number, count: number, op: Op): Promise<number> {
  const each = Math.ceil(count / concurrency);
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; i < each; i++) await op(worker);
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / (each * concurrency);
}

/**
 * Our CPU time per op: the same op through a plain instant client and an
 * instrumented one, interleaved round by round (alternating which goes
 * first); per round the difference, reported as the median with its min–max.
 */
async function ourCpu(label: string, concurrency: number, plain: Op, wrapped: Op, { rounds = 9, count = 20_000 } = {}) {
  await cpuPerOp(concurrency, count, plain);
  await cpuPerOp(concurrency, count, wrapped);
  const plainUs: number[] = [];
  const wrappedUs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const first = r % 2 === 0;
    const a = await cpuPerOp(concurrency, count, first ? plain : wrapped);
    const b = await cpuPerOp(concurrency, count, first ? wrapped : plain);
    plainUs.push(first ? a : b);
    wrappedUs.push(first ? b : a);
  }
  const ours = wrappedUs.map((w, i) => w - plainUs[i]!);
  const ratios = wrappedUs.map((w, i) => plainUs[i]! / w);
  const result = {
    label,
    concurrency,
    plainCpuUsPerOp: round(median(plainUs), 2),
    oursCpuUsPerOp: round(median(ours), 2),
    oursMinUs: round(Math.min(...ours), 2),
    oursMaxUs: round(Math.max(...ours), 2),
    cpuRatio: round(median(ratios)),
  };
  log(
    `  ${label.padEnd(36)} c=${String(concurrency).padEnd(3)} plain ${result.plainCpuUsPerOp.toFixed(2).padStart(6)} µs  ours ${result.oursCpuUsPerOp.toFixed(2).padStart(5)} µs (${result.oursMinUs.toFixed(2)}–${result.oursMaxUs.toFixed(2)})  plain/instrumented ${result.cpuRatio}`,
  );
  return result;
}

/**
 * Our own CPU time per lock cycle and per ordinary command, against clients
 * that answer at once (no Redis, no socket: steady on a shared machine), with a
 * recorder that keeps nothing, so what is measured is `instrument`'s hooks and
 * tracker. Goal: ≤ 1 µs per lock cycle, ordinary commands ≥ 0.98 of plain.
 * `use` picks the `instrument` measured (the built package by default).
 */
export async function benchInstrumentCpu({ use = instrument, rounds = 9, count = 20_000 } = {}) {
  const recorder = { record: () => undefined };
  const plain = instantIoredis();
  const wrapped = use(instantIoredis(), { recorder });
  const plainNr = instantNodeRedis();
  const wrappedNr = use(instantNodeRedis(), { recorder });
  log(`instrument(client), our CPU time: process CPU µs per op through an instrumented client minus the same plain client, both answering at once (median of ${rounds} interleaved rounds of ${count} ops; min–max):`);
  const results = [];
  try {
    results.push(await ourCpu('ioredis GET/SET (not locks)', 64, getSet(plain), getSet(wrapped), { rounds, count }));
    results.push(await ourCpu('node-redis GET/SET (not locks)', 64, getSetNr(plainNr), getSetNr(wrappedNr), { rounds, count }));
    for (const concurrency of [1, 64]) {
      results.push(await ourCpu('hand-written lock cycles', concurrency, handWritten(plain), handWritten(wrapped), { rounds, count }));
      results.push(await ourCpu('node-redlock 5 using() cycles', concurrency, redlockOf(plain), redlockOf(wrapped), { rounds, count }));
      results.push(await ourCpu('redis-semaphore Mutex cycles', concurrency, mutexOf(plain), mutexOf(wrapped), { rounds, count }));
    }
  } finally {
    plain.disconnect();
    wrapped.disconnect();
  }
  return { results, targets: { lockCycleOursUs: '≤ 1 µs', notLocksRatio: '≥ 0.98' } };
}

/**
 * The floor of `instrument`'s present design, as a client of its own: every command's name is looked at and a
 * lock's arguments read as `instrument` reads them (the same functions, from the built package), and a lock
 * command's reply is hooked and stamped with the clock at its send and at its reply, as `instrument` does it;
 * nothing is tracked or recorded. It does a little less than `instrument` even there (no look at whether a
 * command is sent again, no try/catch around the reading), so what it costs against the plain client, that
 * design cannot cost less.
 */
function readingAndStampingOnly(c: Redis): Redis {
  type Sent = { name: string; args: unknown[]; inTransaction?: boolean; resolve(v: unknown): void; reject(e: unknown): void };
  const original = (c as unknown as { sendCommand: (command: Sent, ...rest: unknown[]) => unknown }).sendCommand;
  /** Replies stamped, per kind of lock command read: every acquire and every release of a cycle must be. */
  const stamped = { acquire: 0, release: 0, other: 0 };
  let elapsedMs = 0;
  (c as unknown as { sendCommand: unknown }).sendCommand = function sendCommand(this: unknown, command: Sent, stream?: unknown, node?: unknown) {
    const verb = commands.verbOf(command.name);
    const read = verb === undefined ? undefined : commands.readLockCommand(verb, command.args, Date.now, 0);
    if (read !== undefined && !command.inTransaction) {
      read.sentMs = performance.now();
      // The release script is one `instrument` does not know by its SHA1: read as a `script` (ARGV a token), made a release by the tracker.
      const kind = read.op === 'acquire' ? 'acquire' : read.op === 'release' || read.op === 'script' ? 'release' : 'other';
      const { resolve, reject } = command;
      command.resolve = function replied(value: unknown) {
        resolve(value);
        elapsedMs += performance.now() - read.sentMs!;
        stamped[kind]++;
      };
      command.reject = (error: unknown) => {
        reject(error);
        elapsedMs += performance.now() - read.sentMs!;
        stamped[kind]++;
      };
    }
    return original.call(this, command, stream, node);
  };
  (c as unknown as { stamped: () => typeof stamped & { elapsedMs: number } }).stamped = () => ({ ...stamped, elapsedMs });
  return c;
}

/**
 * Each pair (plain client, instrumented client) interleaved round by round
 * (alternating which goes first): the median of the per-round throughput
 * ratios, and our CPU time per op — process CPU µs per op of the instrumented
 * client minus the plain one's in the same round (Redis runs in its own
 * process, so this is the client side: ioredis, the library, and us), as the
 * median of the rounds with their min–max.
 */
export async function sideBySide(label: string, concurrency: number, plain: Op, wrapped: Op, { rounds = 9, roundMs = 500, settle = undefined as (() => Promise<unknown>) | undefined } = {}) {
  await measure(concurrency, 300, plain);
  await measure(concurrency, 300, wrapped);
  const ratios: number[] = [];
  const oursUs: number[] = [];
  const oursMainUs: number[] = [];
  const rates = { plain: [] as number[], wrapped: [] as number[] };
  const cpu = { plain: [] as number[], wrapped: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    const first = round % 2 === 0;
    // The recorder's writer finishes the instrumented round's samples within it, not in the plain round next.
    const a = await measure(concurrency, roundMs, first ? plain : wrapped, first ? undefined : settle);
    const b = await measure(concurrency, roundMs, first ? wrapped : plain, first ? settle : undefined);
    const [p, w] = first ? [a, b] : [b, a];
    rates.plain.push(p.opsPerSec);
    rates.wrapped.push(w.opsPerSec);
    cpu.plain.push(p.cpuUsPerOp);
    cpu.wrapped.push(w.cpuUsPerOp);
    ratios.push(w.opsPerSec / p.opsPerSec);
    oursUs.push(w.cpuUsPerOp - p.cpuUsPerOp);
    oursMainUs.push(w.mainCpuUsPerOp - p.mainCpuUsPerOp);
  }
  const result = {
    label,
    concurrency,
    plainOpsPerSec: round(median(rates.plain), 0),
    instrumentedOpsPerSec: round(median(rates.wrapped), 0),
    ratio: round(median(ratios)),
    ratioMin: round(Math.min(...ratios)),
    ratioMax: round(Math.max(...ratios)),
    plainCpuUsPerOp: round(median(cpu.plain), 2),
    oursCpuUsPerOp: round(median(oursUs), 2),
    oursCpuUsMin: round(Math.min(...oursUs), 2),
    oursCpuUsMax: round(Math.max(...oursUs), 2),
    // The main thread's share (the event loop the callers wait on): what throughput follows.
    oursMainCpuUs: round(median(oursMainUs), 2),
  };
  log(
    `  ${label.padEnd(36)} c=${String(concurrency).padEnd(3)} plain ${formatRate(result.plainOpsPerSec).padStart(9)}  instrumented ${formatRate(result.instrumentedOpsPerSec).padStart(9)}  ratio ${result.ratio} (${result.ratioMin}–${result.ratioMax})` +
      `  CPU/op plain ${result.plainCpuUsPerOp.toFixed(1)} µs, ours ${result.oursCpuUsPerOp.toFixed(2)} µs (${result.oursCpuUsMin.toFixed(2)}–${result.oursCpuUsMax.toFixed(2)}), ${result.oursMainCpuUs.toFixed(2)} µs of it on the main thread`,
  );
  return result;
}

/**
 * What an instrumented client costs: ordinary commands (GET/SET) and lock
 * cycles of each library, through a plain client and an instrumented one side
 * by side — first against clients that answer at once (our CPU time alone, see
 * {@link benchInstrumentCpu}), then against a real Redis (throughput).
 */
export async function benchInstrument(url: string, dir: string) {
  const cpu = await benchInstrumentCpu();
  const path = join(dir, 'bench-instrument.db');
  rmSync(path, { force: true });
  const recorder = new SqliteRecorder({ path });
  const plain = new Redis(url);
  const wrapped = instrument(new Redis(url), { recorder });
  // The same with a recorder that keeps nothing: the throughput instrument() itself costs, apart from the SqliteRecorder's.
  const bare = instrument(new Redis(url), { recorder: { record: () => undefined } });
  const floor = readingAndStampingOnly(new Redis(url));
  const settle = () => recorder.flush();
  const plainNr = await createClient({ url }).connect();
  const wrappedNr = await instrument(createClient({ url }), { recorder }).connect();
  await plain.script('LOAD', RELEASE.source);
  log(
    'instrument(client) against Redis: throughput through an instrumented client over the same client plain, and CPU µs per op over plain ' +
      '(ours + the SqliteRecorder\'s, whose writer thread is in the process too; median of interleaved rounds, min–max):',
  );
  const results = [];
  try {
    results.push(await sideBySide('ioredis GET/SET (not locks)', 64, getSet(plain), getSet(wrapped)));
    results.push(await sideBySide('node-redis GET/SET (not locks)', 64, getSetNr(plainNr), getSetNr(wrappedNr)));

    for (const concurrency of [1, 64]) {
      results.push(await sideBySide('hand-written lock cycles', concurrency, handWritten(plain), handWritten(wrapped), { settle }));
      results.push(await sideBySide('node-redlock 5 using() cycles', concurrency, redlockOf(plain), redlockOf(wrapped), { settle }));
      results.push(await sideBySide('redis-semaphore Mutex cycles', concurrency, mutexOf(plain), mutexOf(wrapped), { settle }));
    }
    results.push(await sideBySide('hand-written, no-op recorder', 64, handWritten(plain), handWritten(bare)));
    results.push(await sideBySide('node-redlock 5 using(), no-op recorder', 64, redlockOf(plain), redlockOf(bare)));
    results.push(await sideBySide('redis-semaphore Mutex, no-op recorder', 64, mutexOf(plain), mutexOf(bare)));
    // The floor (see readingAndStampingOnly): of the no-op recorder's loss above, what reading and stamping alone cost.
    results.push(await sideBySide('hand-written, reading and stamping only', 64, handWritten(plain), handWritten(floor)));
    // Each cycle is an acquire and a release: both read and stamped, as many of one as of the other (give or take the cycles in flight).
    const seen = (floor as unknown as { stamped: () => { acquire: number; release: number; other: number; elapsedMs: number } }).stamped();
    if (seen.acquire === 0 || Math.abs(seen.acquire - seen.release) > 64 || seen.other !== 0 || !(seen.elapsedMs > 0)) {
      throw new Error(`the reading-and-stamping client did not read every lock command: ${JSON.stringify(seen)}`);
    }
  } finally {
    const seen = instrumentationOf(wrapped)!.stats();
    plain.disconnect();
    wrapped.disconnect();
    bare.disconnect();
    floor.disconnect();
    await Promise.all([plainNr.close(), wrappedNr.close()]);
    const stats = await recorder.close();
    log(`  during the run: ${seen.acquired} locks seen, ${seen.recorded.released} recorded released, ${seen.ignored} ignored; SqliteRecorder wrote ${stats.written} (${stats.dropped} dropped)`);
  }
  return { cpu, results, targets: { notLocksRatio: '≥ 0.98 at c=64', lockCyclesRatio: '≥ 0.95 of the unwrapped library at c=64', lockCycleOursUs: '≤ 1 µs' } };
}
