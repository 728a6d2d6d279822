import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Runs `work` and says how late this process ran its timers meanwhile (the longest delay, ms, the 5 ms
 * resolution included). A measure of how busy the host was, for tests that hold watch's stamps to a
 * client's: an allowance that grows with the load, not a bound on the watcher's own wait for a CPU.
 */
export async function withTimerLag<T>(work: () => Promise<T>): Promise<{ result: T; lagMs: number }> {
  const lag = monitorEventLoopDelay({ resolution: 5 });
  lag.enable();
  try {
    const result = await work();
    return { result, lagMs: lag.max / 1e6 };
  } finally {
    lag.disable();
  }
}
