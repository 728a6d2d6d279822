import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfirmedPatterns, MAX_CONFIRMED_PATTERNS } from '../../src/sample/confirmed.js';
import { recorderFailures, safeRecorder } from '../../src/sample/safe-recorder.js';
import type { LockSample } from '../../src/sample/sample.js';
import { WarnOnce } from '../../src/sample/warn-once.js';

const sample: LockSample = { key: 'order:lock:1', at: Date.now(), holdMs: 5, ttlMs: 1000, outcome: 'released' };

afterEach(() => vi.restoreAllMocks());

describe('WarnOnce', () => {
  it('tells a callback once per kind, and a listener too', () => {
    const seen: string[] = [];
    const emitter = new EventEmitter();
    emitter.on('warning', (w: { kind: string }) => seen.push(`event:${w.kind}`));
    const w = new WarnOnce<'a' | 'b'>(emitter, (warning) => seen.push(`callback:${warning.kind}`));
    w.warn('a', 'first');
    w.warn('a', 'again');
    w.warn('b', 'other');
    expect(seen).toEqual(['callback:a', 'event:a', 'callback:b', 'event:b']);
  });

  it('speaks through process.emitWarning when nobody listens, and a throwing listener reaches nobody', () => {
    const emitted = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    new WarnOnce<'tracking-full'>(undefined, undefined).warn('tracking-full', 'full');
    expect(emitted).toHaveBeenCalledWith('ttl-advisor: full', { type: 'TtlAdvisorWarning', code: 'TTL_ADVISOR_TRACKING_FULL' });
    // Control: with a callback, nothing goes to the process.
    emitted.mockClear();
    const throwing = new WarnOnce<'x'>(new EventEmitter(), () => {
      throw new Error('listener bug');
    });
    expect(() => throwing.warn('x', 'm')).not.toThrow();
    expect(emitted).not.toHaveBeenCalled();
  });
});

describe('safeRecorder', () => {
  it('a recorder that throws loses its sample, counted and said once; the others still get it', () => {
    const emitted = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const bad = { record: () => { throw new Error('disk on fire'); } };
    const got: LockSample[] = [];
    const good = { record: (s: LockSample) => void got.push(s) };
    const both = safeRecorder([bad, good]);
    both.record(sample);
    both.record(sample);
    expect(got).toHaveLength(2);
    expect(recorderFailures(bad)).toBe(2);
    expect(emitted).toHaveBeenCalledTimes(1);
    expect(String(emitted.mock.calls[0]![0])).toMatch(/record\(\) failed \(disk on fire\)/);
  });

  it('a recorder whose record() returns a rejecting promise never makes an unhandled rejection', async () => {
    const emitted = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const asyncRecorder = { record: async () => { throw new Error('async boom'); } };
      const safe = safeRecorder(asyncRecorder);
      safe.record(sample);
      safe.record(sample);
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
      expect(recorderFailures(asyncRecorder)).toBe(2);
      expect(emitted).toHaveBeenCalledTimes(1);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('is cached per recorder, so a lock allocates nothing per sample; refuses what cannot record', () => {
    const r = { record: () => undefined };
    expect(safeRecorder(r)).toBe(safeRecorder(r));
    expect(() => safeRecorder({} as never)).toThrow(/record\(sample\)/);
  });
});

describe('ConfirmedPatterns', () => {
  it('confirms a pattern once a release is seen, and stays bounded', () => {
    const confirmed = new ConfirmedPatterns();
    expect(confirmed.has('a:{id}')).toBe(false);
    expect(confirmed.confirm('a:{id}')).toBe(true);
    expect(confirmed.has('a:{id}')).toBe(true);
    for (let i = 0; confirmed.size < MAX_CONFIRMED_PATTERNS; i++) confirmed.confirm(`p${i}`);
    expect(confirmed.confirm('one-too-many')).toBe(false);
    expect(confirmed.has('one-too-many')).toBe(false);
    expect(confirmed.confirm('a:{id}')).toBe(true); // known ones still answer
  });
});
