import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CommandTimeoutError } from '../../src/deadline.js';
import { StreamCollector } from '../../src/fleet/collector.js';
import { tempDir } from '../helpers/temp.js';

// The unit half of collector.test.ts's "SIGTERM while a connected Redis stalls": the clock is injected, so a
// loaded machine cannot stretch what is measured. The integration half runs the real command against a real Redis.

const dir = tempDir();
const COMMAND_TIMEOUT_MS = 5000;
const BLOCK_MS = 1000;

/**
 * An ioredis-like client for one collector: the group exists, nothing is pending, and the
 * blocking read and everything after it never get an answer (a Redis that stalls).
 */
function stallingRedis() {
  const sent: string[] = [];
  const unanswered: ((reply: null) => void)[] = [];
  const client = {
    call(command: string, ...args: (string | number)[]): Promise<unknown> {
      const blocking = command === 'XREADGROUP' && args.includes('BLOCK');
      sent.push(blocking ? 'XREADGROUP BLOCK' : command);
      if (command === 'XGROUP') return Promise.resolve('OK');
      if (command === 'XAUTOCLAIM') return Promise.resolve(['0-0', []]);
      if (command === 'XREADGROUP' && !blocking) return Promise.resolve(null);
      return new Promise((resolve) => unanswered.push(resolve));
    },
    sent,
    /** Answers what is still waiting, so no command outlives its test. */
    release: () => unanswered.splice(0).forEach((resolve) => resolve(null)),
  };
  return client;
}

let redis: ReturnType<typeof stallingRedis>;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  // Command deadlines are read on the monotonic clock: it follows the fake one.
  vi.spyOn(performance, 'now').mockImplementation(() => Date.now());
  redis = stallingRedis();
});
afterEach(async () => {
  redis.release();
  await vi.advanceTimersByTimeAsync(100);
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function start(signal: AbortSignal, onRedisError = vi.fn()) {
  const collector = new StreamCollector(redis as never, {
    db: join(dir, `stop-${Math.random().toString(36).slice(2)}.db`),
    blockMs: BLOCK_MS,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    progressIntervalMs: 60_000,
    onRedisError,
  });
  const done = vi.fn();
  const running = collector.run(signal).then(done);
  return { running, done, onRedisError };
}

describe('a stop while Redis stalls (injected clock)', () => {
  it('ends the run after the short final-progress wait, not at the stalled command’s deadline', async () => {
    const stop = new AbortController();
    const { running, done, onRedisError } = start(stop.signal);
    await vi.advanceTimersByTimeAsync(0);
    expect(redis.sent.at(-1)).toBe('XREADGROUP BLOCK'); // reading, and Redis does not answer
    stop.abort();
    await vi.advanceTimersByTimeAsync(300); // the final lag query gets 300 ms, and Redis stays silent
    expect(done).toHaveBeenCalledWith(expect.objectContaining({ entries: 0, lag: undefined, pending: undefined }));
    expect(onRedisError).not.toHaveBeenCalled();
    await running;
  });

  it('control: without a stop, the stalled read ends only at its deadline (block time + command timeout)', async () => {
    const stop = new AbortController();
    const { running, done, onRedisError } = start(stop.signal);
    await vi.advanceTimersByTimeAsync(BLOCK_MS + COMMAND_TIMEOUT_MS - 20);
    expect(onRedisError).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(40); // the watchdog looks every 10 ms
    expect(onRedisError).toHaveBeenCalledWith(expect.any(CommandTimeoutError));
    expect(done).not.toHaveBeenCalled(); // it retries: only a stop ends it
    stop.abort();
    await vi.advanceTimersByTimeAsync(1000);
    await running;
  });
});
