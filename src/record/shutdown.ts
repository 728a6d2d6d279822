import { endsWithProcess, loopEndFlush } from './lifetime.js';

/** What {@link flushOnShutdown} needs of a recorder. */
export interface ClosableRecorder {
  flush(): Promise<unknown>;
  /** With it, the flush when the event loop runs dry happens only when something new was recorded. */
  stats?(): { recorded: number; pending: number };
  /** Sends what is buffered and closes, for signals: a sink to Redis has no synchronous way there. */
  close?(): Promise<unknown>;
  closeSync(): unknown;
}

/** Options of {@link flushOnShutdown}. */
export interface FlushOnShutdownOptions {
  /** Signals after which the recorder is closed and the signal's default action runs. @default ['SIGTERM', 'SIGINT'] */
  signals?: readonly NodeJS.Signals[];
  /** How long a signal waits for the recorder's `close()` before the process ends anyway (ms). @default 5000 */
  timeoutMs?: number;
}

/**
 * Makes sure buffered samples reach the disk when the process ends:
 * - on SIGTERM / SIGINT, when nothing else listens to that signal, the recorder
 *   is closed — `close()`, so that a `RedisStreamSink` sends what it holds, for at
 *   most `timeoutMs` — and the signal is raised again so the process ends as it
 *   would have without us;
 * - when the application listens too (a graceful drain: stop taking requests,
 *   finish those in flight, then exit), the recorder keeps recording, so the
 *   locks that finish during the drain are recorded; it is flushed now and
 *   closed on `exit`;
 * - on `beforeExit` (the event loop ran dry) it is flushed, once per new samples, so that
 *   the process then ends by itself: nothing of ours is left that keeps it alive;
 * - on `exit` (also after an explicit exit call) it is written and closed synchronously
 *   (a stream sink cannot send then: what it still holds is counted as dropped).
 * A `SqliteRecorder` does the last two by itself; what this adds for it is the signals.
 *
 * Returns a function that removes the handlers.
 */
export function flushOnShutdown(recorder: ClosableRecorder, options: FlushOnShutdownOptions = {}): () => void {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const timeoutMs = options.timeoutMs ?? 5000;
  let shuttingDown = false;
  const closeNow = (): void => {
    try {
      recorder.closeSync();
    } catch {
      // The recorder never throws; this guards a foreign implementation.
    }
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (process.listenerCount(signal) > 1) {
      // The application drains and exits by itself: keep recording until then, close on `exit`.
      recorder.flush().catch(() => undefined);
      return;
    }
    if (shuttingDown) return; // a second signal while closing: the first one ends the process
    shuttingDown = true;
    const finish = (): void => {
      if (!shuttingDown) return;
      shuttingDown = false;
      clearTimeout(timer);
      closeNow();
      remove();
      // We replaced the default action by listening; restore it, as no one else handles the signal.
      process.kill(process.pid, signal);
    };
    const timer = setTimeout(finish, timeoutMs);
    if (typeof recorder.close !== 'function') return finish();
    try {
      recorder.close().then(finish, finish);
    } catch {
      finish();
    }
  };
  const onBeforeExit = loopEndFlush(recorder);
  // A recorder that ends with the process by itself (SqliteRecorder) needs only the signals from us.
  const processEndToo = !endsWithProcess(recorder);
  // First in line, so that every handler of the application (`once` ones included) is still
  // registered when we look: their presence tells whether the application drains by itself.
  for (const signal of signals) process.prependListener(signal, onSignal);
  if (processEndToo) {
    process.on('beforeExit', onBeforeExit);
    process.on('exit', closeNow);
  }

  function remove(): void {
    for (const signal of signals) process.off(signal, onSignal);
    process.off('beforeExit', onBeforeExit);
    process.off('exit', closeNow);
  }
  return remove;
}
