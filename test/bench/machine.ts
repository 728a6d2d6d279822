import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { RELEASE } from '../../src/lock/scripts.js';
import { commands } from './lib.js';
import { log, median, round, spread } from './stats.js';


/** The control's result, kept so that its arithmetic is not optimized away. */
export let kept = 0;

/** A file's first line, or undefined where it cannot be read (not Linux, no such file). */
function firstLine(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').split('\n')[0]!.trim();
  } catch {
    return undefined;
  }
}

/**
 * What this machine charges for a system call, and what one does to the JavaScript that runs after it.
 * Timed in loops of `count`, interleaved over `rounds`: `fs.writeSync` of 64 bytes to /dev/null (Node's
 * checks, its binding and the `write(2)` itself); a piece of
 * `instrument`'s own work (reading a `SET key token PX 10000 NX` and its release's `EVALSHA` as lock commands,
 * the library's own functions from dist/); and the two one after the other. Every command a client sends to
 * Redis goes out through system calls (several commands to one at times), so where the work after one runs
 * several times slower than in a loop without any, the JavaScript a lock cycle adds may cost more against a
 * real Redis than against a client that answers at once: the ratios against Redis are read with this in mind.
 * The "after" time is (write + work) − write, so it cannot tell the work's slowdown from the write's. The
 * control: the same work after arithmetic that takes about as long as the write, with no system call; it
 * stays in registers, so a factor near 1 there says time alone does not slow the work, not that other work
 * touching memory would not. Also what the kernel says of its Meltdown mitigation, and whether page-table
 * isolation was forced on its command line (`pti=on`): with it, every system call switches page tables.
 */
export function benchMachine({ rounds = 9, count = 200_000 } = {}) {
  const fd = openSync('/dev/null', 'w');
  const bytes = Buffer.alloc(64);
  const keys = Array.from({ length: 64 }, (_, i) => `bench:machine:lock:${i}`);
  const tokens = keys.map(() => randomUUID());
  const sets = keys.map((key, i) => [key, tokens[i], 'PX', 10_000, 'NX']);
  const releases = keys.map((key, i) => [RELEASE.sha, 1, key, tokens[i]]);
  let read = 0;
  const work = (i: number) => {
    if (commands.readLockCommand('set', sets[i & 63]!, Date.now) !== undefined) read++;
    if (commands.readLockCommand('evalsha', releases[i & 63]!, Date.now) !== undefined) read++;
  };
  const nsPer = (body: (i: number) => void) => {
    const t0 = performance.now();
    for (let i = 0; i < count; i++) body(i);
    return ((performance.now() - t0) * 1e6) / count;
  };
  // The control: arithmetic that takes about as long as the write, no system call and hardly any memory.
  let x = 1;
  let steps = 400;
  const arithmetic = () => {
    for (let k = 0; k < steps; k++) x = (Math.imul(x, 31) + k) | 0;
  };
  const alone: number[] = [];
  const syscall: number[] = [];
  const after: number[] = [];
  const control: number[] = [];
  const afterControl: number[] = [];
  try {
    steps = Math.max(1, Math.round((steps * nsPer(() => writeSync(fd, bytes))) / nsPer(arithmetic)));
    for (let r = 0; r < rounds; r++) {
      const w = nsPer(work);
      const s = nsPer(() => writeSync(fd, bytes));
      const both = nsPer((i) => {
        writeSync(fd, bytes);
        work(i);
      });
      const a = nsPer(arithmetic);
      const bothControl = nsPer((i) => {
        arithmetic();
        work(i);
      });
      alone.push(w);
      syscall.push(s);
      after.push(both - s);
      control.push(a);
      afterControl.push(bothControl - a);
    }
  } finally {
    closeSync(fd);
  }
  kept = x;
  if (read !== 6 * rounds * count) throw new Error(`read ${read} lock commands, expected ${6 * rounds * count}`);
  const factors = after.map((a, i) => a / alone[i]!);
  const controlFactors = afterControl.map((a, i) => a / alone[i]!);
  const cmdline = firstLine('/proc/cmdline');
  const result = {
    rounds,
    writeToDevNullNs: round(median(syscall), 0),
    readingTwoCommandsNs: round(median(alone), 0),
    readingTwoCommandsAfterAWriteNs: round(median(after), 0),
    /** How many times slower the same JavaScript runs right after a system call than in a loop without one: median, min, max. */
    afterSyscallFactor: spread(factors, 2),
    /** The control: the same after arithmetic of about the write's time (`arithmeticNs`), no system call. */
    arithmeticNs: round(median(control), 0),
    afterArithmeticFactor: spread(controlFactors, 2),
    meltdown: firstLine('/sys/devices/system/cpu/vulnerabilities/meltdown'),
    ptiForcedOn: cmdline === undefined ? undefined : /(^|\s)pti=on(\s|$)/.test(cmdline),
  };
  const f = result.afterSyscallFactor;
  const c = result.afterArithmeticFactor;
  log(
    `machine  fs.writeSync of 64 bytes to /dev/null ${result.writeToDevNullNs} ns; reading two lock commands ${result.readingTwoCommandsNs} ns in a loop, ${result.readingTwoCommandsAfterAWriteNs} ns right after a write: ` +
      `×${f.median} (${f.min}–${f.max}); after ${result.arithmeticNs} ns of arithmetic instead: ×${c.median} (${c.min}–${c.max}); ${rounds} rounds; ` +
      `kernel: Meltdown "${result.meltdown ?? 'unknown'}"${result.ptiForcedOn ? ', pti=on on its command line' : ''}`,
  );
  return result;
}
