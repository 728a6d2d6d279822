// npm run bench [-- name…]: runs the benchmarks, prints figures and ratios, and
// writes them to reports/bench-results.json. Never asserts on time.
//
// Each section runs in a process of its own, as a service runs one recorder and one
// or two doors, not every door, library and sample shape there is: in one process
// running every section, record() cost three times as much by the time its section
// came (630 against 211 ns per call, the same code, two runs an hour apart; what V8
// compiled for the sections before stays), and withLock slowed down after the
// options-spread rounds (see lock-micro.ts).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisServer } from '../helpers/redis-server.js';
import { benchInstrument } from './instrument.js';
import { benchLockOverhead } from './lock-overhead.js';
import { benchLockMicro, benchLockMicroSpread } from './lock-micro.js';
import { benchLeases } from './lease.js';
import { benchMachine } from './machine.js';
import { benchWatch } from './watch.js';
import { benchFootprint, benchRecorderIngest } from './recorder-ingest.js';
import { benchRecordFold } from './record-fold.js';
import { benchReport } from './report.js';
import { benchCollector, benchFleetReport } from './fleet.js';
import { log } from './stats.js';

/** The sections, in the order they run; `lock-micro` is part of `lock`. `machine` first: what a system call costs here (see machine.ts). */
const SECTIONS = ['machine', 'lock', 'lease', 'instrument', 'watch', 'record', 'ingest', 'footprint', 'report', 'fleet', 'collect'];
/** Where a section's own process writes its figures, for the process that started it to merge. */
const PART = process.env.TTL_ADVISOR_BENCH_PART;
const only = new Set(process.argv.slice(2));
const wanted = (name: string) => only.size === 0 || only.has(name);
const sections = SECTIONS.filter(wanted);
const dir = mkdtempSync(join(tmpdir(), 'ttl-advisor-bench-'));
const results: Record<string, unknown> = {
  startedAt: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model,
};

/** Runs each section in a process of its own and merges their figures into `results`. */
function runEachAlone(): void {
  for (const section of sections) {
    const part = join(dir, `${section}.json`);
    const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, section], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, TTL_ADVISOR_BENCH_PART: part },
    });
    if (child.status !== 0) throw new Error(`the ${section} benchmark failed (exit ${child.status ?? child.signal})`);
    const figures = JSON.parse(readFileSync(part, 'utf8')) as Record<string, unknown>;
    for (const [name, value] of Object.entries(figures)) if (!(name in results)) results[name] = value;
  }
}

try {
  if (PART === undefined && sections.length > 1) runEachAlone();
  else await runHere();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Runs the wanted sections in this process. */
async function runHere(): Promise<void> {
  if (wanted('machine')) {
    // What it measures explains the others; a machine where it cannot run (no /dev/null) still gets the rest.
    try {
      results.machine = benchMachine();
    } catch (error) {
      log(`machine  not measured: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (wanted('lock') || wanted('lock-micro')) results.lockMicro = await benchLockMicro(dir);
  if (wanted('lock')) {
    const server = process.env.REDIS_URL ? undefined : await startRedisServer();
    const redis = new Redis(process.env.REDIS_URL ?? server!.url);
    try {
      results.lockOverhead = await benchLockOverhead(redis, dir);
    } finally {
      redis.disconnect();
      await server?.stop();
    }
  }
  // Last of the lock benchmarks: options spread per call slow down every withLock measured after them (see lock-micro.ts).
  if (wanted('lock') || wanted('lock-micro')) results.lockMicroSpread = await benchLockMicroSpread();
  if (wanted('lease')) {
    const server = process.env.REDIS_URL ? undefined : await startRedisServer();
    const redis = new Redis(process.env.REDIS_URL ?? server!.url);
    try {
      results.leases = await benchLeases(redis, dir);
    } finally {
      redis.disconnect();
      await server?.stop();
    }
  }
  if (wanted('instrument')) {
    const server = process.env.REDIS_URL ? undefined : await startRedisServer();
    try {
      results.instrument = await benchInstrument(process.env.REDIS_URL ?? server!.url, dir);
    } finally {
      await server?.stop();
    }
  }
  if (wanted('watch')) {
    // Always a server of its own: the benchmark changes its notification settings.
    const server = await startRedisServer();
    try {
      results.watch = await benchWatch(server.url, server.port);
    } finally {
      await server.stop();
    }
  }
  if (wanted('record')) results.recordFold = await benchRecordFold(dir);
  if (wanted('ingest')) results.recorderIngest = await benchRecorderIngest(dir);
  if (wanted('footprint')) results.footprint = await benchFootprint(dir);
  if (wanted('report')) results.report = await benchReport(dir);
  if (wanted('fleet')) results.fleetReport = await benchFleetReport(dir);
  if (wanted('collect')) results.collector = await benchCollector(dir);
}

if (PART !== undefined) writeFileSync(PART, JSON.stringify(results) + '\n');
else {
  mkdirSync('reports', { recursive: true });
  const out = join('reports', 'bench-results.json');
  writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
  log(`\nwritten to ${out}`);
}
