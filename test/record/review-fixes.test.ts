import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RedisStreamSink, SqliteRecorder, flushOnShutdown } from '../../src/index.js';
import { resolveWatchOptions } from '../../src/watch/options.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();

describe('a recorder and its options, at the boundary', () => {
  it('pattern templates must be an array of strings, for the recorders as for instrument and watch', () => {
    expect(() => new SqliteRecorder({ path: join(dir, 'a.db'), patterns: 'order:{id}' as never })).toThrow('Expected `patterns` to be an array of strings, got `"order:{id}"`');
    expect(() => new RedisStreamSink({ xadd: async () => '1-0' } as never, { patterns: [1] as never })).toThrow('Expected `patterns` to be an array of strings');
  });

  it("flushOnShutdown adds only the signals for a SqliteRecorder, which writes at the loop's end and at exit by itself", async () => {
    const recorder = new SqliteRecorder({ path: join(dir, 'b.db') });
    const [exitBefore, loopEndBefore] = [process.listenerCount('exit'), process.listenerCount('beforeExit')];
    const remove = flushOnShutdown(recorder);
    expect([process.listenerCount('exit'), process.listenerCount('beforeExit')]).toEqual([exitBefore, loopEndBefore]);
    remove();
    await recorder.close();
    // Control: a recorder that no longer ends with the process by itself (closed) gets both handlers from it.
    const [exitClosed, loopEndClosed] = [process.listenerCount('exit'), process.listenerCount('beforeExit')];
    const removeToo = flushOnShutdown(recorder);
    expect([process.listenerCount('exit'), process.listenerCount('beforeExit')]).toEqual([exitClosed + 1, loopEndClosed + 1]);
    removeToo();
  });

  it("watch's onNotice is the operator's: one that throws never reaches a socket handler or a timer", () => {
    const options = resolveWatchOptions({ url: 'redis://127.0.0.1:1', recorder: { record: () => undefined }, onNotice: () => { throw new Error('operator bug'); } });
    expect(() => options.onNotice!('lost 127.0.0.1:1')).not.toThrow();
  });
});
