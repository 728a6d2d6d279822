// The recorder's writer thread: owns the SQLite connection, so that disk I/O,
// fsyncs, checkpoints and lock waits never run on the service's event loop.
import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { compileTemplates, resolvePattern } from '../../keys/pattern.js';
import type { EncodedBatch } from '../../store/input.js';
import { openForWriting, type Db } from '../../store/schema.js';
import { SampleWriter } from '../../store/writer.js';
import { COMMIT, SHARED, type RecorderCounters, type ToWriter, type WriterInit, type WriterWarning } from './protocol.js';

/** The recorder gave up on this batch: it is counted as dropped there and must not be committed. */
class Abandoned extends Error {}

const init = workerData as WriterInit;
const flags = new Int32Array(init.shared, 0, SHARED.flagSlots);
const totals = new Float64Array(init.shared, SHARED.totalsOffset, SHARED.totalSlots);
const templates = compileTemplates(init.templates);

// Another process holding the write lock: try again, up to the close deadline.
const TRANSIENT_CODES = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY']);
const RETRY_DELAY_MS = 25;

let db: Db | undefined;
let writer: SampleWriter | undefined;
const queue: { batch: EncodedBatch; counters: RecorderCounters }[] = [];
let working = false;
let closeDeadline = Number.POSITIVE_INFINITY;
let closing: RecorderCounters | undefined;

parentPort!.on('message', (message: ToWriter) => {
  if (message.type === 'batch') queue.push({ batch: message.batch, counters: message.counters });
  else {
    closing = message.counters;
    closeDeadline = Date.now() + message.timeoutMs;
  }
  work();
});

function work(): void {
  if (working) return;
  working = true;
  try {
    while (queue.length > 0) {
      // The recorder gave up (its close timed out): what is left is counted as dropped there.
      if (Atomics.load(flags, SHARED.commit) === COMMIT.abandoned) {
        queue.length = 0;
        break;
      }
      const outcome = writeOne(queue[0]!);
      if (outcome === 'busy') {
        if (Date.now() < closeDeadline) {
          setTimeout(() => {
            working = false;
            work();
          }, RETRY_DELAY_MS);
          return;
        }
        const lost = queue.reduce((sum, item) => sum + item.batch.count, 0);
        warn({
          kind: 'write-failed',
          message: `${init.path} stayed locked by another writer past the recorder's flushTimeoutMs; dropping ${lost} sample(s)`,
        });
        drop(queue[0]!.batch.count);
      }
      if (outcome === 'abandoned') continue; // the check above empties the queue
      queue.shift();
      wake();
    }
    if (closing) finish();
  } finally {
    working = false;
  }
}

/** The file the connection writes to; when the path names another file (or none), the connection writes into the void. */
let opened: { dev: number; ino: number } | undefined;

function stillTheFile(): boolean {
  try {
    const now = statSync(init.path);
    return now.dev === opened?.dev && now.ino === opened.ino;
  } catch {
    return false;
  }
}

function fileReplaced(): void {
  warn({
    kind: 'file-replaced',
    message: `${init.path} was deleted or replaced while recording; writing to a new file there (SQLite would have gone on writing to the old one)`,
  });
  closeDb();
}

function writeOne({ batch, counters }: { batch: EncodedBatch; counters: RecorderCounters }): 'written' | 'busy' | 'dropped' | 'abandoned' {
  // SQLite keeps writing to a deleted file's inode: samples counted as written, nothing on disk.
  if (writer && !stillTheFile()) fileReplaced();
  let opening = !writer;
  try {
    if (!writer) {
      db = openForWriting(init.path, init.busyTimeoutMs);
      const { dev, ino } = statSync(init.path);
      opened = { dev, ino };
      writer = new SampleWriter(db, {
        instance: init.instance,
        rawSampleRate: init.rawSampleRate,
        maxPatterns: init.maxPatterns,
        patternOf: (key) => resolvePattern(key, templates),
      });
    }
    opening = false;
    let result;
    try {
      result = writer.write(batch, countersOf(counters, batch.count), () => {
        if (Atomics.compareExchange(flags, SHARED.commit, COMMIT.idle, COMMIT.committing) === COMMIT.abandoned) throw new Abandoned();
      });
    } catch (error) {
      if (error instanceof Abandoned) return 'abandoned';
      Atomics.compareExchange(flags, SHARED.commit, COMMIT.committing, COMMIT.idle); // a failed COMMIT
      throw error;
    }
    if (!stillTheFile()) {
      // Deleted or replaced during this very write: these samples went into the void.
      drop(batch.count);
      fileReplaced();
      return 'dropped';
    }
    totals[SHARED.rawWritten] = totals[SHARED.rawWritten]! + result.raw;
    if (result.replacedUnreadable > 0) {
      warn({
        kind: 'unreadable-rollup',
        message: `${init.path} held ${result.replacedUnreadable} unreadable rollup row(s); replaced by the new samples (their old counts are lost)`,
      });
    }
    if (result.patternOverflow > 0) {
      totals[SHARED.patternOverflow] = totals[SHARED.patternOverflow]! + result.patternOverflow;
      warn({
        kind: 'pattern-overflow',
        message: `More than ${init.maxPatterns} key patterns; further ones are recorded as {other}`,
      });
    }
    // Last, so that the main thread never sees a batch as written before its details.
    totals[SHARED.written] = totals[SHARED.written]! + result.written;
    Atomics.store(flags, SHARED.commit, COMMIT.idle);
    Atomics.notify(flags, SHARED.commit);
    return 'written';
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (TRANSIENT_CODES.has(code)) return 'busy';
    const reason = (error as Error).message;
    warn(
      opening
        ? { kind: 'open-failed', message: `Cannot open samples database ${init.path}: ${reason}` }
        : { kind: 'write-failed', message: `Cannot write samples to ${init.path}: ${reason}` },
    );
    drop(batch.count);
    // The connection may be unusable (file replaced, disk gone): reopen for the next batch.
    closeDb();
    return 'dropped';
  }
}

/** The counters stored with a batch (`adding` samples about to be written) or at close. */
function countersOf(counters: RecorderCounters, adding = 0): { recorded: number; written: number; dropped: number } {
  return {
    recorded: counters.recorded,
    written: totals[SHARED.written]! + adding,
    dropped: counters.droppedBeforeWriter + totals[SHARED.dropped]!,
  };
}

function drop(count: number): void {
  totals[SHARED.dropped] = totals[SHARED.dropped]! + count;
}

function warn(warning: WriterWarning): void {
  parentPort!.postMessage({ type: 'warning', warning });
}

/** Tells the main thread that totals changed: by message if its loop runs, by futex if it waits in closeSync. */
function wake(): void {
  Atomics.add(flags, SHARED.progress, 1);
  Atomics.notify(flags, SHARED.progress);
  parentPort!.postMessage({ type: 'progress' });
}

function closeDb(): void {
  try {
    db?.close();
  } catch {
    // nothing left to save on a broken connection
  }
  db = undefined;
  writer = undefined;
}

function finish(): void {
  // The final counters, after the last batch: what the recorder recorded and dropped up to its close.
  try {
    writer?.writeCounters(countersOf(closing!));
  } catch {
    // the batches' own counters stay; nothing more can be done on a failing file
  }
  closeDb();
  Atomics.store(flags, SHARED.closed, 1);
  Atomics.add(flags, SHARED.progress, 1);
  Atomics.notify(flags, SHARED.progress);
  parentPort!.postMessage({ type: 'closed' });
  parentPort!.close();
}
