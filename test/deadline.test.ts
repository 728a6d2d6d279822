import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { CommandTimeoutError, withDeadline } from '../src/deadline.js';

/** Keeps the event loop busy in turns of `turnMs` until `until` settles. */
async function busyLoop(turnMs: number, until: Promise<unknown>): Promise<void> {
  let settled = false;
  void until.catch(() => undefined).finally(() => (settled = true));
  while (!settled) {
    const end = performance.now() + turnMs;
    while (performance.now() < end) {
      // a service doing CPU work between its awaits
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('command deadlines', () => {
  it.each([30, 100])('a 500 ms timeout fires after about 500 ms even when the event loop runs %d ms turns', async (turnMs) => {
    const started = performance.now();
    const never = new Promise<never>(() => undefined);
    const timed = withDeadline(never, 500);
    await busyLoop(turnMs, timed);
    const error = await timed.catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(CommandTimeoutError);
    expect(elapsed).toBeGreaterThanOrEqual(500);
    // About one turn plus one watchdog tick late, with room for a busy CI machine (counting ticks made it 1.5 s and 5 s).
    expect(elapsed).toBeLessThan(500 + turnMs + 250);
  });

  it('a reply in time wins, and a late reply after the timeout changes nothing', async () => {
    await expect(withDeadline(Promise.resolve('OK'), 50)).resolves.toBe('OK');
    let reply!: (v: string) => void;
    const slow = withDeadline(new Promise<string>((resolve) => (reply = resolve)), 30);
    await expect(slow).rejects.toBeInstanceOf(CommandTimeoutError);
    reply('late');
  });
});
