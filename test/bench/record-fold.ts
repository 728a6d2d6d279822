import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { LockSample } from '../../src/index.js';
// The aggregator is internal (not exported by the package): bundled from source with the benchmark code.
import { aggregatorFor } from '../../src/record/aggregator.js';
import { lib } from './lib.js';
import { log, median, round } from './stats.js';

const START = Date.UTC(2026, 0, 1);
/** Simulated time between two samples: a pass of 400,000 samples covers about 7 minutes. */
const STEP_MS = 1;
/** Pattern names without digits, so that each is a pattern of its own (as in recorder-ingest.ts). */
const PATTERN_NAMES = Array.from({ length: 20 }, (_, i) => String.fromCharCode(97 + i));

/** What is timed: anything with the recorder's `record()`. */
export interface Recording {
  record(sample: LockSample): void;
}

/** CPU (the calling thread's, where known, and the process's) and wall ns per call of one timed pass. */
interface Pass {
  threadNs: number;
  cpuNs: number;
  wallNs: number;
}

/**
 * The calling thread's CPU time (ns), from Linux's schedstat; the process's
 * elsewhere. A recorder's writer thread works beside the caller (on seals the
 * caller hands it): the process's CPU time counts that work too, the thread's
 * only what the caller pays. (Node 20 has no `process.threadCpuUsage`.)
 */
export function threadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) * 1000;
  }
}

/** Keeps the last sample and a sum of key lengths, so the baseline builds every sample and key as the measured loop does. */
let kept: LockSample | undefined;
let keyChars = 0;
const noop: Recording = { record: (sample) => void (kept = sample) };

/** Where each recorder's simulated clock stands: every pass goes on from the last, as a service's clock does. */
const clocks = new WeakMap<Recording, number>();

/**
 * `count` samples built as a lock builds them — a fresh key string each,
 * `service<x>:lock:item:<k>` over `keys` distinct keys and 20 patterns, sent
 * first (which flattens the string, as a Redis client's write does) — handed to
 * `recorder`; the calling thread's and the process's CPU time, and wall time,
 * per call.
 */
export function pass(recorder: Recording, count: number, keys: number, offset = 0): Pass {
  let at = clocks.get(recorder) ?? START;
  const thread0 = threadCpuNs();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let state = (offset * 2_654_435_761) >>> 0;
  for (let i = 0; i < count; i++) {
    const k = (i + offset) % keys;
    const key = `service${PATTERN_NAMES[k % 20]}:lock:item:${k}`;
    // What the client does with the key when the lock sends it (ioredis measures it first).
    keyChars += Buffer.byteLength(key);
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    at += STEP_MS;
    recorder.record({
      key,
      at,
      holdMs: Math.exp(1 + (k % 20) / 10 + (state / 2 ** 32) * 2),
      waitMs: 0,
      attempts: 1,
      ttlMs: 10_000,
      outcome: i % 2000 === 0 ? 'expired' : 'released',
    });
  }
  const wallNs = ((performance.now() - t0) * 1e6) / count;
  const cpu = process.cpuUsage(cpu0);
  const threadNs = (threadCpuNs() - thread0) / count;
  clocks.set(recorder, at);
  return { threadNs, cpuNs: ((cpu.user + cpu.system) * 1000) / count, wallNs };
}

/** Median and spread of what the recorders cost beyond the baseline, ns per call. */
function summary(values: readonly number[]) {
  return { median: round(median(values), 1), min: round(Math.min(...values), 1), max: round(Math.max(...values), 1) };
}

type Summary = ReturnType<typeof summary>;

/** One recorder's figures at one key count: ns per call over the baseline. */
export interface FoldResult {
  recorder: string;
  distinctKeys: number;
  /** The calling thread's CPU time: what `record()` costs the caller. */
  threadNs: Summary;
  /** The process's CPU time: the caller's, and what a writer thread did meanwhile. */
  processNs: Summary;
  wallNs: Summary;
}

/**
 * ns per `record()` call over the baseline, for each recorder and key count:
 * each round times the no-op baseline and every recorder once, in an order
 * that rotates from round to round, and each figure is the median of the
 * rounds' differences, with their min–max. Every recorder is warmed up by one
 * untimed pass first.
 */
export function compareRecorders(
  recorders: Record<string, (keys: number) => Recording>,
  { count = 400_000, rounds = 9, keyCounts = [5000, 200_000] } = {},
): FoldResult[] {
  const names = Object.keys(recorders);
  const results: FoldResult[] = [];
  for (const keys of keyCounts) {
    const made = names.map((name) => recorders[name]!(keys));
    for (const r of made) pass(r, count, keys);
    pass(noop, count, keys);
    const diffs = names.map(() => ({ threadNs: [] as number[], processNs: [] as number[], wallNs: [] as number[] }));
    for (let round = 0; round < rounds; round++) {
      const order = [-1, ...made.keys()];
      const times = new Map<number, Pass>();
      for (let j = 0; j < order.length; j++) {
        const which = order[(j + round) % order.length]!;
        times.set(which, pass(which < 0 ? noop : made[which]!, count, keys, round + 1));
      }
      const base = times.get(-1)!;
      for (let n = 0; n < names.length; n++) {
        const t = times.get(n)!;
        diffs[n]!.threadNs.push(t.threadNs - base.threadNs);
        diffs[n]!.processNs.push(t.cpuNs - base.cpuNs);
        diffs[n]!.wallNs.push(t.wallNs - base.wallNs);
      }
    }
    for (let n = 0; n < names.length; n++) {
      const d = diffs[n]!;
      results.push({ recorder: names[n]!, distinctKeys: keys, threadNs: summary(d.threadNs), processNs: summary(d.processNs), wallNs: summary(d.wallNs) });
    }
  }
  if (kept === undefined || keyChars === 0) throw new Error('the baseline built nothing');
  return results;
}

/**
 * What `record()` costs the caller (issue 26: ≤ 200 ns per call), with 5,000
 * and with 200,000 distinct keys, for the same samples as recorder-ingest.ts:
 * ns per call over a no-op recorder's, median of interleaved rounds with the
 * spread. Two recorders: the `Aggregator` that `record()` folds into (the fold
 * alone), and a `SqliteRecorder` at its defaults (the fold, the seals it hands
 * its writer thread every so many samples, and — in the process's CPU time —
 * the writer's work beside it).
 */
export async function benchRecordFold(dir: string, { count = 400_000, rounds = 9 } = {}) {
  const opened: InstanceType<typeof lib.SqliteRecorder>[] = [];
  const paths: string[] = [];
  // Sealed now and then, as a recorder does, so hours and raw rows do not pile up.
  const folding = (made: typeof aggregatorFor): Recording => {
    const aggregator = made('bench', [], { maxPatterns: 1000, budget: { failed: 1000, slowest: 10, uniform: 40 }, rawSampleRate: 0, maxPendingRawRows: 50_000 });
    let folded = 0;
    return { record: (sample) => void (aggregator.foldSafely(sample, false), ++folded % 65_536 === 0 && aggregator.seal(Date.now())) };
  };
  // TTL_ADVISOR_BENCH_BASELINE=<commit>: that commit's aggregator beside today's, in the same rounds (a change's cost, measured).
  const baselineCommit = process.env.TTL_ADVISOR_BENCH_BASELINE;
  const baseline = baselineCommit ? await aggregatorAt(baselineCommit, dir) : undefined;
  const results = compareRecorders(
    {
      Aggregator: () => folding(aggregatorFor),
      ...(baseline ? { [`Aggregator@${baselineCommit}`]: () => folding(baseline) } : {}),
      SqliteRecorder: (keys) => {
        const path = join(dir, `bench-record-fold-${keys}.db`);
        rmSync(path, { force: true });
        paths.push(path);
        const recorder = new lib.SqliteRecorder({ path, flushIntervalMs: 60_000 });
        opened.push(recorder);
        return recorder;
      },
    },
    { count, rounds },
  );
  let recorded = 0;
  let counted = 0;
  for (const recorder of opened) {
    const stats = await recorder.close();
    recorded += stats.recorded;
    counted += stats.written;
    if (stats.dropped !== 0 || stats.written !== stats.recorded) throw new Error(`record() lost samples: ${JSON.stringify(stats)}`);
  }
  for (const path of paths) rmSync(path, { force: true });
  const spread = (x: Summary) => `${x.median} ns (min–max ${x.min}–${x.max})`;
  for (const r of results) {
    log(
      `record() fold  ${r.recorder}  ${r.distinctKeys} distinct keys  caller's CPU ${spread(r.threadNs)}, process CPU ${spread(r.processNs)}, ` +
        `wall ${r.wallNs.median} ns — per call over a no-op recorder building the same samples, ${rounds} rounds (target ≤ 200)`,
    );
  }
  let vsBaseline: { distinctKeys: number; ratio: number }[] | undefined;
  if (baseline) {
    vsBaseline = [...new Set(results.map((r) => r.distinctKeys))].map((keys) => {
      const of = (name: string) => results.find((r) => r.recorder === name && r.distinctKeys === keys)!.threadNs.median;
      return { distinctKeys: keys, ratio: round(of('Aggregator') / of(`Aggregator@${baselineCommit}`), 3) };
    });
    for (const v of vsBaseline) log(`record() fold  ${v.distinctKeys} distinct keys: today's aggregator ÷ ${baselineCommit}'s = ${v.ratio} (caller's CPU, medians of the same rounds)`);
  }
  return { samplesPerPass: count, rounds, recorded, counted, results, ...(vsBaseline && { baseline: baselineCommit, vsBaseline }), target: { recordNsPerCall: '≤ 200' } };
}

/** `commit`'s `aggregatorFor`, built from git into `dir`: the bench's baseline. */
async function aggregatorAt(commit: string, dir: string): Promise<typeof aggregatorFor> {
  const root = join(dir, `baseline-${commit.replace(/[^\w.-]/g, '_')}`);
  mkdirSync(root, { recursive: true });
  const archive = execFileSync('git', ['archive', '--format=tar', commit, 'src'], { maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', root], { input: archive });
  const outfile = join(root, 'aggregator.mjs');
  await build({ entryPoints: [join(root, 'src/record/aggregator.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile, logLevel: 'warning' });
  return ((await import(pathToFileURL(outfile).href)) as { aggregatorFor: typeof aggregatorFor }).aggregatorFor;
}
