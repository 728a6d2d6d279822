import type { MessagePort } from 'node:worker_threads';
import type { DeltaBatch } from '../../store/input.js';

/** What the recorder hands its writer thread at start. */
export interface WriterInit {
  path: string;
  instance: string;
  maxPatterns: number;
  busyTimeoutMs: number;
  /** Raw rows stop past this many bytes; 0: no limit. */
  maxDatabaseBytes: number;
  /** Data older than this is pruned when the file is opened and every hour after (ms); 0: kept. */
  retainMs: number;
  shared: SharedArrayBuffer;
}

/** What the thread is started with: the recorder's {@link WriterInit}, and the port its warnings go through (see `spawn.ts`). */
export interface WriterData extends WriterInit {
  warnings: MessagePort;
}

/** The recorder's own counters when it sent a batch, stored with it for `ttl-advisor stats`. */
export interface RecorderCounters {
  recorded: number;
  /** Samples dropped before reaching the writer (invalid, closed, no room). */
  droppedBeforeWriter: number;
  /** Raw rows the budget chose that were dropped before reaching the writer. */
  rawDroppedBeforeWriter: number;
}

/** One seal of the recorder's aggregates: a batch per instance, `samples` locks counted in their rollups. */
export interface SealedWrite {
  batches: DeltaBatch[];
  samples: number;
  rawRows: number;
}

export type ToWriter =
  /** `wire`: the seal encoded by `SealBuffers` (see wire.ts), shared or transferred, not copied. */
  | { type: 'batch'; wire: SharedArrayBuffer | ArrayBuffer; counters: RecorderCounters }
  /** The recorder's final counters, written last, so the file's recorder row tells the truth. */
  | { type: 'close'; timeoutMs: number; counters: RecorderCounters };

export interface WriterWarning {
  kind: 'open-failed' | 'write-failed' | 'pattern-overflow' | 'unreadable-rollup' | 'file-replaced' | 'file-full';
  message: string;
}

export type FromWriter = { type: 'progress' } | { type: 'closed' } | { type: 'warning'; warning: WriterWarning };

/**
 * Layout of the memory shared with the writer thread. The writer keeps running
 * totals there, so the recorder's counters are exact even while its own event
 * loop is blocked (in `closeSync`), and it can wait on `progress` with Atomics.
 */
export const SHARED = Object.freeze({
  // Int32 slots
  flagSlots: 5,
  progress: 0,
  closed: 1,
  /** {@link COMMIT}: whether the writer may commit, is committing, or must not any more. */
  commit: 2,
  /**
   * 1 while the writer is inside SQLite. Ending the thread then (a `terminate()`, the process
   * exiting) makes better-sqlite3 abort the whole process when the call fails (WiseLibs/better-sqlite3#842: a
   * SQLITE_BUSY, a file locked by another process), so the recorder waits for 0, after ABANDONED.
   */
  inSqlite: 3,
  /**
   * Batches the writer is done with (written, dropped or abandoned): the recorder counts the
   * seals in flight from it, even while a synchronous burst of `record()` calls keeps its own
   * event loop from hearing the writer's messages.
   */
  batchesDone: 4,
  // Float64 slots, after the Int32 ones (8-byte aligned)
  totalsOffset: 24,
  totalSlots: 5,
  /** Samples whose rollups are committed. */
  written: 0,
  rawWritten: 1,
  /** Samples the writer could not write (their rollups are lost). */
  dropped: 2,
  patternOverflow: 3,
  /** Raw rows the writer could not write, or left out at `maxDatabaseBytes`. */
  rawDropped: 4,
  bytes: 24 + 5 * 8,
});

/**
 * The commit handshake, so that counters equal what is on disk even when a close
 * gives up during a slow write: the writer moves IDLE → COMMITTING right before a
 * transaction commits (and back once its totals are updated); a recorder that gives
 * up moves IDLE → ABANDONED, waiting out a commit under way. After that nothing commits.
 */
export const COMMIT = Object.freeze({ idle: 0, committing: 1, abandoned: 2 });

/** Blocks the calling thread until the writer has closed (see SHARED.closed), or until `deadlineMs`. */
export function waitUntilClosed(flags: Int32Array, deadlineMs: number): void {
  while (Atomics.load(flags, SHARED.closed) === 0) {
    const left = deadlineMs - Date.now();
    if (left <= 0) break;
    const seen = Atomics.load(flags, SHARED.progress);
    if (Atomics.load(flags, SHARED.closed) === 1) break;
    Atomics.wait(flags, SHARED.progress, seen, left);
  }
}

/**
 * From now on the writer commits nothing (see COMMIT): what it did not confirm stays off the disk.
 * Then waits, up to `deadlineMs`, for it to leave SQLite (see SHARED.inSqlite), so that ending the thread is safe.
 */
export function stopCommits(flags: Int32Array, deadlineMs: number): void {
  while (Atomics.compareExchange(flags, SHARED.commit, COMMIT.idle, COMMIT.abandoned) === COMMIT.committing) {
    if (Date.now() >= deadlineMs) break;
    Atomics.wait(flags, SHARED.commit, COMMIT.committing, 20);
  }
  while (Atomics.load(flags, SHARED.inSqlite) === 1 && Date.now() < deadlineMs) Atomics.wait(flags, SHARED.inSqlite, 1, 20);
}
