// The recorder's writer thread: owns the SQLite connection, so that disk I/O,
// fsyncs, checkpoints and lock waits never run on the service's event loop.
import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { pruneOlderThan } from '../../store/prune.js';
import { openForWriting, type Db } from '../../store/schema.js';
import { SampleWriter, type WriteResult, type WriterCounters } from '../../store/writer.js';
import { COMMIT, SHARED, type RecorderCounters, type SealedWrite, type ToWriter, type WriterData, type WriterWarning } from './protocol.js';
import { decodeSealedWrite, releaseSealBuffer } from './wire.js';

/** The recorder gave up on this batch: it is counted as dropped there and must not be committed. */
class Abandoned extends Error {}

const init = workerData as WriterData;
const flags = new Int32Array(init.shared, 0, SHARED.flagSlots);
const totals = new Float64Array(init.shared, SHARED.totalsOffset, SHARED.totalSlots);

// Another process holding the write lock: try again, up to the close deadline.
const TRANSIENT_CODES = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY']);
const RETRY_DELAY_MS = 25;

let db: Db | undefined;
let writer: SampleWriter | undefined;
const queue: { write: SealedWrite; counters: RecorderCounters; wire: SharedArrayBuffer | ArrayBuffer }[] = [];
const PRUNE_EVERY_MS = 60 * 60 * 1000;
let prunedAt = Number.NEGATIVE_INFINITY;
let working = false;
let closeDeadline = Number.POSITIVE_INFINITY;
let closing: RecorderCounters | undefined;

parentPort!.on('message', (message: ToWriter) => {
  if (message.type === 'batch') queue.push({ write: decodeSealedWrite(message.wire), counters: message.counters, wire: message.wire });
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
      if (!enterSqlite()) {
        done(queue.splice(0));
        break;
      }
      let outcome: ReturnType<typeof writeOne>;
      try {
        outcome = writeOne(queue[0]!);
        // Past the close deadline, dropped and counted inside the same SQLite section as the write that found the
        // file locked: a recorder that gives up meanwhile waits for it, then counts only what is still unconfirmed
        // (counted after it, 30,000 samples were 60,000 dropped, at load in CI).
        if (outcome === 'busy' && Date.now() >= closeDeadline) {
          const lost = queue.reduce((sum, item) => sum + item.write.samples, 0);
          warn({
            kind: 'write-failed',
            message: `${init.path} stayed locked by another writer past the recorder's flushTimeoutMs; dropping ${lost} sample(s)`,
          });
          drop(queue[0]!.write);
          outcome = 'dropped';
        }
      } finally {
        leaveSqlite();
      }
      if (outcome === 'busy') {
        setTimeout(() => {
          working = false;
          work();
        }, RETRY_DELAY_MS);
        return;
      }
      if (outcome === 'abandoned') continue; // the check above empties the queue
      done(queue.splice(0, 1));
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

/** Opens the file (creating, migrating) for the writer; throws as `openForWriting` does. */
function open(): SampleWriter {
  db = openForWriting(init.path, init.busyTimeoutMs);
  const { dev, ino } = statSync(init.path);
  opened = { dev, ino };
  return (writer = new SampleWriter(db, { instance: init.instance, maxPatterns: init.maxPatterns, maxDatabaseBytes: init.maxDatabaseBytes }));
}

// The thread starts with the recorder's first sample: the file is opened (created, migrated) while samples
// fold, not when the first seal arrives. A failure here is met again, and reported, by that seal.
if (enterSqlite()) {
  try {
    open();
  } catch {
    closeDb();
  } finally {
    leaveSqlite();
  }
}

function writeOne({ write, counters }: { write: SealedWrite; counters: RecorderCounters }): 'written' | 'busy' | 'dropped' | 'abandoned' {
  // SQLite keeps writing to a deleted file's inode: samples counted as written, nothing on disk.
  if (writer && !stillTheFile()) fileReplaced();
  let opening = !writer;
  try {
    writer ??= open();
    opening = false;
    prune(db!);
    let result: WriteResult;
    try {
      result = writer.apply(write.batches, {
        counters: (so) => countersOf(counters, so),
        beforeCommit: () => {
          if (Atomics.compareExchange(flags, SHARED.commit, COMMIT.idle, COMMIT.committing) === COMMIT.abandoned) throw new Abandoned();
        },
      });
    } catch (error) {
      if (error instanceof Abandoned) return 'abandoned';
      Atomics.compareExchange(flags, SHARED.commit, COMMIT.committing, COMMIT.idle); // a failed COMMIT
      throw error;
    }
    if (!stillTheFile()) {
      // Deleted or replaced during this very write: these samples went into the void.
      drop(write);
      fileReplaced();
      return 'dropped';
    }
    totals[SHARED.rawWritten] = totals[SHARED.rawWritten]! + result.raw;
    if (result.rawOverLimit > 0) {
      totals[SHARED.rawDropped] = totals[SHARED.rawDropped]! + result.rawOverLimit;
      warn({
        kind: 'file-full',
        message: `${init.path} reached maxDatabaseBytes (${init.maxDatabaseBytes} bytes): raw rows stop, rollups go on counting every lock`,
      });
    }
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
    totals[SHARED.written] = totals[SHARED.written]! + write.samples;
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
    drop(write);
    // The connection may be unusable (file replaced, disk gone): reopen for the next batch.
    closeDb();
    return 'dropped';
  }
}

/** The counters stored with a batch (`adding` what it writes) or at close. */
function countersOf(counters: RecorderCounters, adding?: { samples: number; raw: number; rawOverLimit: number }): WriterCounters {
  return {
    recorded: counters.recorded,
    written: totals[SHARED.written]! + (adding?.samples ?? 0),
    dropped: counters.droppedBeforeWriter + totals[SHARED.dropped]!,
    rawWritten: totals[SHARED.rawWritten]! + (adding?.raw ?? 0),
    rawDropped: counters.rawDroppedBeforeWriter + totals[SHARED.rawDropped]! + (adding?.rawOverLimit ?? 0),
  };
}

/** Batches off the queue (written, dropped or abandoned): what the recorder counts as no longer in flight; their buffers are free. */
function done(batches: readonly { wire: SharedArrayBuffer | ArrayBuffer }[]): void {
  for (const { wire } of batches) releaseSealBuffer(wire);
  Atomics.add(flags, SHARED.batchesDone, batches.length);
}

function drop(write: SealedWrite): void {
  totals[SHARED.dropped] = totals[SHARED.dropped]! + write.samples;
  totals[SHARED.rawDropped] = totals[SHARED.rawDropped]! + write.rawRows;
}

/** With `retainMs`, data older than it goes when the file is opened and every hour after; a failure is reported, never fatal. */
function prune(on: Db): void {
  if (init.retainMs <= 0 || Date.now() - prunedAt < PRUNE_EVERY_MS) return;
  prunedAt = Date.now();
  try {
    pruneOlderThan(on, init.path, Date.now() - init.retainMs);
  } catch (error) {
    warn({ kind: 'write-failed', message: `Cannot prune ${init.path}: ${(error as Error).message}` });
  }
}

/** Through a port of their own, which the recorder empties before it ends the thread: no warning is lost at close. */
function warn(warning: WriterWarning): void {
  init.warnings.postMessage(warning);
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

/**
 * Enters SQLite unless the recorder gave up on this thread (see SHARED.inSqlite): the flag is set
 * before the check, and the recorder checks it after giving up, so one of the two always sees the other.
 */
function enterSqlite(): boolean {
  Atomics.store(flags, SHARED.inSqlite, 1);
  if (Atomics.load(flags, SHARED.commit) !== COMMIT.abandoned) return true;
  leaveSqlite();
  return false;
}

function leaveSqlite(): void {
  Atomics.store(flags, SHARED.inSqlite, 0);
  Atomics.notify(flags, SHARED.inSqlite);
}

function finish(): void {
  if (enterSqlite()) {
    // The final counters, after the last batch: what the recorder recorded and dropped up to its close.
    try {
      writer?.writeCounters(countersOf(closing!));
    } catch {
      // the batches' own counters stay; nothing more can be done on a failing file
    }
    closeDb();
    leaveSqlite();
  }
  Atomics.store(flags, SHARED.closed, 1);
  Atomics.add(flags, SHARED.progress, 1);
  Atomics.notify(flags, SHARED.progress);
  parentPort!.postMessage({ type: 'closed' });
  parentPort!.close();
}
