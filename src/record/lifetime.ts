// A recorder and the process it records in: it never keeps the process alive, and what it holds
// is written when the process ends by itself (`beforeExit`) or exits on purpose (the `exit` event).
// Signals end a process without either event: `flushOnShutdown` handles those.

/** What a loop-end flush needs of a recorder. */
export interface FlushableRecorder {
  flush(): Promise<unknown>;
  stats?(): { recorded: number; pending: number };
}

/**
 * A `beforeExit` handler that flushes `recorder` only when samples were recorded
 * since its last flush. `beforeExit` fires again each time the loop runs dry,
 * and the flush's own write ends by running it dry: flushing every time would
 * keep the process alive for as long as a write cannot finish (a file locked by
 * another process, a Redis that is gone). Without `stats()`, it flushes once.
 */
export function loopEndFlush(recorder: FlushableRecorder): () => void {
  let flushedAt: number | undefined;
  return () => {
    let stats: { recorded: number; pending: number } | undefined;
    try {
      stats = recorder.stats?.();
    } catch {
      // a foreign recorder: flush once, as if it had no stats
    }
    if (stats?.pending === 0) return;
    const mark = stats?.recorded ?? 0;
    if (mark === flushedAt) return;
    flushedAt = mark;
    try {
      recorder.flush().catch(() => undefined);
    } catch {
      // The recorders never throw; this guards a foreign implementation.
    }
  };
}

/** What a recorder does when the event loop runs dry, and when the process exits (synchronously). */
export interface ProcessEnd {
  atLoopEnd(): void;
  atExit(): void;
}

const bound = new Set<ProcessEnd>();
/** The recorders bound to the process by themselves: `flushOnShutdown` adds only the signals for them. */
const selfBound = new WeakSet<object>();

/** Whether `recorder` writes at the loop's end and at exit by itself (a `SqliteRecorder` until it closed). */
export function endsWithProcess(recorder: object): boolean {
  return selfBound.has(recorder);
}

function onBeforeExit(): void {
  for (const recorder of [...bound]) recorder.atLoopEnd();
}

function onExit(): void {
  for (const recorder of [...bound]) recorder.atExit();
}

/**
 * Calls `atLoopEnd` on `beforeExit` and `atExit` on `exit` until the returned
 * function is called. One listener of each serves every recorder of the process.
 */
export function bindToProcess(recorder: ProcessEnd, owner?: object): () => void {
  if (bound.size === 0) {
    process.on('beforeExit', onBeforeExit);
    process.on('exit', onExit);
  }
  bound.add(recorder);
  if (owner) selfBound.add(owner);
  return () => {
    if (owner) selfBound.delete(owner);
    if (!bound.delete(recorder) || bound.size > 0) return;
    process.off('beforeExit', onBeforeExit);
    process.off('exit', onExit);
  };
}
