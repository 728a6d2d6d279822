// npm run bench [-- name…]: runs the benchmarks, prints figures and ratios, and
// writes them to reports/bench-results.json. Never asserts on time.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisServer } from '../helpers/redis-server.js';
import { benchInstrument } from './instrument.js';
import { benchLockOverhead } from './lock-overhead.js';
import { benchLockMicro, benchLockMicroSpread } from './lock-micro.js';
import { benchLeases } from './lease.js';
import { benchWatch } from './watch.js';
import { benchFootprint, benchRecorderIngest } from './recorder-ingest.js';
import { benchRecordFold } from './record-fold.js';
import { benchReport } from './report.js';
import { benchCollector, benchFleetReport } from './fleet.js';
import { log } from './stats.js';

const only = new Set(process.argv.slice(2));
const wanted = (name: string) => only.size === 0 || only.has(name);
const dir = mkdtempSync(join(tmpdir(), 'ttl-advisor-bench-'));
const results: Record<string, unknown> = {
  startedAt: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model,
};

try {
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
} finally {
  rmSync(dir, { recursive: true, force: true });
}

mkdirSync('reports', { recursive: true });
const out = join('reports', 'bench-results.json');
writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
log(`\nwritten to ${out}`);
