import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteRecorder, type LockSample } from '../../src/index.js';
import { formatRate, log, median, round } from './stats.js';

function makeSamples(count: number): LockSample[] {
  const start = Date.UTC(2026, 0, 1);
  const samples: LockSample[] = new Array(count);
  for (let i = 0; i < count; i++) {
    samples[i] = {
      key: `order:lock:product:${i % 5000}`,
      at: start + i * 5,
      holdMs: 1 + ((i * 7919) % 5000) / 100,
      waitMs: (i % 7) / 10,
      attempts: 1,
      ttlMs: 10_000,
      outcome: i % 1000 === 0 ? 'expired' : 'released',
    };
  }
  return samples;
}

/**
 * Recorder ingest, end to end: from `record()` to raw rows and rollups committed
 * on disk. Also the amortized cost of `record()` alone, which is all the lock's
 * path ever pays.
 */
export async function benchRecorderIngest(dir: string, { count = 1_000_000, repeats = 3 } = {}) {
  const samples = makeSamples(count);
  const results = [];
  for (const rawSampleRate of [1, 0.1]) {
    const recordNs: number[] = [];
    const ingest: number[] = [];
    for (let r = 0; r < repeats; r++) {
      const path = join(dir, `bench-ingest-${r}.db`);
      rmSync(path, { force: true });
      // Large queue and batch: this measures the writer's throughput, not back-pressure.
      const recorder = new SqliteRecorder({ path, rawSampleRate, maxPendingRawRows: count, flushBatchSize: 20_000, flushIntervalMs: 60_000 });
      const t0 = performance.now();
      for (let i = 0; i < count; i++) recorder.record(samples[i]!);
      const t1 = performance.now();
      const stats = await recorder.close();
      const t2 = performance.now();
      if (stats.written !== count) throw new Error(`ingest lost samples: ${JSON.stringify(stats)}`);
      recordNs.push(((t1 - t0) * 1e6) / count);
      ingest.push(count / ((t2 - t0) / 1000));
      rmSync(path, { force: true });
    }
    const result = {
      samples: count,
      rawSampleRate,
      recordNsPerCall: round(median(recordNs), 1),
      ingestSamplesPerSec: round(median(ingest), 0),
      targets: { ingestSamplesPerSec: '≥ 500000', recordNsPerCall: '≤ 1000' },
    };
    log(
      `recorder ingest  rawSampleRate=${rawSampleRate}  record() ${result.recordNsPerCall} ns/call (target ≤ 1000)  record→disk ${formatRate(result.ingestSamplesPerSec)} (target ≥ 500 k/s)`,
    );
    results.push(result);
  }
  return results;
}
