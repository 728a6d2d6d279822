import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { Mutex } from 'redis-semaphore';
import Redlock from 'redlock';
import { RELEASE } from '../../src/lock/scripts.js';
import { lib } from './lib.js';
import { measure } from './lock-overhead.js';
import { formatRate, log, median, round } from './stats.js';

const { SqliteRecorder, instrument, instrumentationOf } = lib;

type Op = (worker: number) => Promise<unknown>;

/** Each pair (plain client, instrumented client) interleaved round by round; the median of the per-round ratios. */
async function sideBySide(label: string, concurrency: number, plain: Op, wrapped: Op, { rounds = 9, roundMs = 500 } = {}) {
  await measure(concurrency, 300, plain);
  await measure(concurrency, 300, wrapped);
  const ratios: number[] = [];
  const rates = { plain: [] as number[], wrapped: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    const first = round % 2 === 0;
    const a = await measure(concurrency, roundMs, first ? plain : wrapped);
    const b = await measure(concurrency, roundMs, first ? wrapped : plain);
    const [p, w] = first ? [a, b] : [b, a];
    rates.plain.push(p.opsPerSec);
    rates.wrapped.push(w.opsPerSec);
    ratios.push(w.opsPerSec / p.opsPerSec);
  }
  const result = { label, concurrency, plainOpsPerSec: round(median(rates.plain), 0), instrumentedOpsPerSec: round(median(rates.wrapped), 0), ratio: round(median(ratios)) };
  log(`  ${label.padEnd(44)} c=${String(concurrency).padEnd(3)} plain ${formatRate(result.plainOpsPerSec).padStart(9)}  instrumented ${formatRate(result.instrumentedOpsPerSec).padStart(9)}  ratio ${result.ratio}`);
  return result;
}

/**
 * What an instrumented client costs: ordinary commands (GET/SET) and lock
 * cycles of each library, through a plain client and an instrumented one side by side.
 */
export async function benchInstrument(url: string, dir: string) {
  const path = join(dir, 'bench-instrument.db');
  rmSync(path, { force: true });
  const recorder = new SqliteRecorder({ path });
  const plain = new Redis(url);
  const wrapped = instrument(new Redis(url), { recorder });
  const plainNr = await createClient({ url }).connect();
  const wrappedNr = await instrument(createClient({ url }), { recorder }).connect();
  await plain.script('LOAD', RELEASE.source);
  log('instrument(client): throughput through an instrumented client over the same client plain (median of interleaved rounds):');
  const results = [];
  try {
    const value = 'x'.repeat(64);
    const getSet = (c: Redis): Op => (w) => (w % 2 === 0 ? c.get(`bench:cache:${w}`) : c.set(`bench:cache:${w}`, value));
    const getSetNr = (c: typeof plainNr): Op => (w) => (w % 2 === 0 ? c.get(`bench:cache:${w}`) : c.set(`bench:cache:${w}`, value));
    results.push(await sideBySide('ioredis GET/SET (not locks)', 64, getSet(plain), getSet(wrapped)));
    results.push(await sideBySide('node-redis GET/SET (not locks)', 64, getSetNr(plainNr), getSetNr(wrappedNr)));

    const handWritten = (c: Redis): Op => async (w) => {
      const token = randomUUID();
      await c.set(`bench:hw:lock:${w}`, token, 'PX', 10_000, 'NX');
      await c.evalsha(RELEASE.sha, 1, `bench:hw:lock:${w}`, token);
    };
    const redlockOf = (c: Redis) => {
      const redlock = new Redlock([c], { retryCount: 0 });
      return (w: number) => redlock.using([`bench:redlock:lock:${w}`], 10_000, async () => undefined);
    };
    const mutexOf = (c: Redis) => async (w: number) => {
      const mutex = new Mutex(c, `bench:sem:lock:${w}`, { lockTimeout: 10_000, acquireAttemptsLimit: 1, refreshInterval: 0 });
      await mutex.acquire();
      await mutex.release();
    };
    for (const concurrency of [1, 64]) {
      results.push(await sideBySide('hand-written lock cycles', concurrency, handWritten(plain), handWritten(wrapped)));
      results.push(await sideBySide('node-redlock 5 using() cycles', concurrency, redlockOf(plain), redlockOf(wrapped)));
      results.push(await sideBySide('redis-semaphore Mutex cycles', concurrency, mutexOf(plain), mutexOf(wrapped)));
    }
  } finally {
    const seen = instrumentationOf(wrapped)!.stats();
    plain.disconnect();
    wrapped.disconnect();
    await Promise.all([plainNr.close(), wrappedNr.close()]);
    const stats = await recorder.close();
    log(`  during the run: ${seen.acquired} locks seen, ${seen.recorded.released} recorded released, ${seen.ignored} ignored; SqliteRecorder wrote ${stats.written} (${stats.dropped} dropped)`);
  }
  return { results, targets: { notLocksRatio: '≥ 0.95 at c=64', lockCyclesRatio: '≥ 0.95 of the unwrapped library' } };
}
