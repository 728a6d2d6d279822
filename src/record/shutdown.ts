/** What {@link flushOnShutdown} needs of a recorder. */
export interface ClosableRecorder {
  flush(): Promise<unknown>;
  closeSync(): unknown;
}

/** Options of {@link flushOnShutdown}. */
export interface FlushOnShutdownOptions {
  /** Signals after which the recorder is closed and the signal's default action runs. @default ['SIGTERM', 'SIGINT'] */
  signals?: readonly NodeJS.Signals[];
}

/**
 * Makes sure buffered samples reach the disk when the process ends:
 * - on SIGTERM / SIGINT the recorder is written and closed synchronously; if
 *   nothing else listens to that signal, it is raised again so the process ends
 *   as it would have without us;
 * - on `beforeExit` (the event loop ran dry) it is flushed;
 * - on `exit` (also after an explicit exit call) it is written and closed synchronously.
 *
 * Returns a function that removes the handlers.
 */
export function flushOnShutdown(recorder: ClosableRecorder, options: FlushOnShutdownOptions = {}): () => void {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const closeNow = (): void => {
    try {
      recorder.closeSync();
    } catch {
      // The recorder never throws; this guards a foreign implementation.
    }
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    closeNow();
    remove();
    // We replaced the default action by listening; restore it if no one else handles the signal.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const onBeforeExit = (): void => {
    recorder.flush().catch(() => undefined);
  };
  for (const signal of signals) process.on(signal, onSignal);
  process.on('beforeExit', onBeforeExit);
  process.on('exit', closeNow);

  function remove(): void {
    for (const signal of signals) process.off(signal, onSignal);
    process.off('beforeExit', onBeforeExit);
    process.off('exit', closeNow);
  }
  return remove;
}
