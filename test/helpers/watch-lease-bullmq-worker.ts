import { Queue, Worker, type Job } from 'bullmq';

/**
 * A BullMQ worker for the watch lease tests, in a process of its own (a job that
 * blocks the event loop blocks only its worker). Each job's data says what it does:
 * sleep `sleepMs`, block the event loop in a busy loop for `blockMs` (from the job's next lock renewal on),
 * sleep `afterMs`.
 *
 * It times its own lock traffic by its monotonic clock: for each job, when it sent
 * the command that took the job's lock (`moveToActive`, or `moveToFinished` fetching
 * the next job), and when it sent each `extendLocks` that renewed it (those Redis
 * refused, the lock gone, are left out). Redis ran each somewhere between its send
 * and its answer: `windowMs` is the widest such window, how well the worker knows its
 * own times (windows a busy loop ran in, whose answer it read late, are left out).
 *
 * Prints `ready` once it waits for jobs, then, when `jobs` processors have returned
 * and it has closed, one JSON line: `{ "jobs": [{ "id", "acquiredMs", "renewedMs" }], "windowMs" }`.
 *
 * argv: <port> <queue> <lockDuration ms> <concurrency> <jobs>
 */

interface JobPlan {
  sleepMs?: number;
  blockMs?: number;
  afterMs?: number;
}

type NextJob = [unknown, string | undefined, ...unknown[]] | undefined;
/** The two backend calls that take a job's lock (BullMQ 6's Redis backend). */
interface AcquireCalls {
  moveToActive(...args: unknown[]): Promise<NextJob>;
  moveToFinished(...args: unknown[]): Promise<NextJob>;
}

const [port, queue, lockDuration, concurrency, jobs] = process.argv.slice(2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const acquiredMs = new Map<string, number>();
const renewedMs = new Map<string, number[]>();
let windowMs = 0;
let blocks = 0;
let returned = 0;
let allReturned: () => void = () => undefined;
const done = new Promise<void>((resolve) => (allReturned = resolve));

/** Resolves once the job's lock has been renewed once more than now (or after 3 s, when it never is). */
async function renewed(id: string): Promise<void> {
  const before = renewedMs.get(id)?.length ?? 0;
  const until = performance.now() + 3000;
  while ((renewedMs.get(id)?.length ?? 0) === before && performance.now() < until) await sleep(2);
  if ((renewedMs.get(id)?.length ?? 0) === before) console.error(`job ${id}: no lock renewal within 3 s; blocking anyway`);
}

/** Times `call`: returns when it was sent, and widens `windowMs` by its send → answer unless a busy loop ran meanwhile. */
async function timed<T>(call: () => Promise<T>): Promise<{ sentMs: number; result: T }> {
  const [sentMs, blocksBefore] = [performance.now(), blocks];
  const result = await call();
  if (blocks === blocksBefore) windowMs = Math.max(windowMs, performance.now() - sentMs);
  return { sentMs, result };
}

// The first job a process takes runs code paths for the first time (and BullMQ's first EVALSHA of a script
// Redis lacks is sent again by EVAL): ~15 ms between the first acquire's send and its lock. One job taken on
// database 1 beforehand, which the tests do not watch, makes the send of every acquire the lock's time.
{
  const warmup = { host: '127.0.0.1', port: Number(port), db: 1, maxRetriesPerRequest: null };
  const queued = new Queue(`warmup-${queue}`, { connection: warmup }); // one per worker: another's would take its job
  await queued.add('warmup', {});
  let warmed: () => void = () => undefined;
  const processed = new Promise<void>((resolve) => (warmed = resolve));
  const first = new Worker(`warmup-${queue}`, async () => undefined, { connection: warmup });
  first.on('completed', () => warmed());
  await processed;
  await Promise.all([first.close(), queued.close()]);
}

const worker = new Worker(
  queue!,
  async (job: Job<JobPlan>) => {
    try {
      const { sleepMs = 0, blockMs = 0, afterMs = 0 } = job.data;
      await sleep(sleepMs);
      // A block starts right after this job's lock was renewed, so that how late it makes the next renewal does
      // not depend on where BullMQ's renewal timer (every lockDuration / 4) stood: the next gap is the block's length.
      if (blockMs > 0) await renewed(job.id!);
      if (blockMs > 0) blocks++;
      const until = performance.now() + blockMs;
      while (performance.now() < until); // the event loop blocked: no timer, no renewal
      await sleep(afterMs);
    } finally {
      if (++returned === Number(jobs)) allReturned();
    }
  },
  {
    connection: { host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: null },
    lockDuration: Number(lockDuration),
    concurrency: Number(concurrency),
  },
);
worker.on('error', () => undefined); // a lost lock's moveToFinished fails: expected for the job that overruns

const backend = worker.backend as unknown as AcquireCalls;
for (const name of ['moveToActive', 'moveToFinished'] as const) {
  const call = backend[name].bind(backend);
  backend[name] = async (...args: unknown[]) => {
    const { sentMs, result } = await timed(() => call(...args));
    if (Array.isArray(result) && typeof result[1] === 'string' && result[1] !== '') acquiredMs.set(result[1], sentMs);
    return result;
  };
}
const extend = worker.extendJobLocks.bind(worker);
worker.extendJobLocks = async (jobIds: string[], tokens: string[], duration: number) => {
  const { sentMs, result: failed } = await timed(() => extend(jobIds, tokens, duration));
  for (const id of jobIds) if (!failed.includes(id)) renewedMs.set(id, [...(renewedMs.get(id) ?? []), sentMs]);
  return failed;
};

await worker.waitUntilReady();
console.log('ready');
await done;
await sleep(200); // the last moveToFinished
await worker.close(true);
const timedJobs = [...acquiredMs].map(([id, at]) => ({ id, acquiredMs: at, renewedMs: renewedMs.get(id) ?? [] }));
console.log(JSON.stringify({ jobs: timedJobs, windowMs }));
process.exit(0);
