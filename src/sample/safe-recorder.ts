import { ConfigError } from '../errors.js';
import type { LockSample, ObservationGap, SampleRecorder } from './sample.js';
import { emitProcessWarning } from './warn-once.js';

const combined = new WeakMap<object, SampleRecorder>();
const guarded = new WeakMap<object, SampleRecorder>();
/** Failures per user recorder: thrown by `record()` or a promise it returned that rejected. */
const failures = new WeakMap<object, number>();

/**
 * Recording must never break its caller: a recorder that throws, or returns a
 * promise that rejects (an `async record()`), loses that sample and nothing
 * else. The failure is counted, and said once per recorder as a process
 * warning, so it is never silent — and never an unhandled rejection that would
 * end the host process.
 */
function recordSafely(recorder: SampleRecorder, sample: LockSample): void {
  try {
    const result = recorder.record(sample) as unknown;
    if (result !== undefined && result !== null && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then(undefined, (error: unknown) => failed(recorder, error));
    }
  } catch (error) {
    failed(recorder, error);
  }
}

function failed(recorder: SampleRecorder, error: unknown, method = 'record'): void {
  const n = (failures.get(recorder) ?? 0) + 1;
  failures.set(recorder, n);
  if (n > 1) return;
  try {
    const name = (recorder as { constructor?: { name?: string } }).constructor?.name ?? 'recorder';
    const who = name === 'Object' ? 'a recorder' : `a ${name}`;
    emitProcessWarning('recorder-failed', `${who}'s ${method}() failed (${(error as Error)?.message ?? String(error)}); what it failed to take is lost, counted in recorderFailures(recorder)`);
  } catch {
    // ignored on purpose
  }
}

/** How many samples a recorder lost to its own `record()` throwing or rejecting, as seen through {@link safeRecorder}. */
export function recorderFailures(recorder: SampleRecorder): number {
  return failures.get(recorder) ?? 0;
}

/**
 * One never-throwing recorder for one or several, for every door a sample is
 * born at (the lock, `instrument`, `watch`). Cached per recorder (or array), so
 * a lock's path allocates nothing; a {@link ConfigError} for what cannot record.
 */
export function safeRecorder(recorder: SampleRecorder | readonly SampleRecorder[]): SampleRecorder {
  if (!Array.isArray(recorder) || recorder.length === 1) {
    const only = (Array.isArray(recorder) ? recorder[0] : recorder) as SampleRecorder;
    if (typeof only?.record !== 'function') throw new ConfigError('Expected `recorder` to have a `record(sample)` method');
    let safe = guarded.get(only);
    if (!safe) guarded.set(only, (safe = { record: (sample) => recordSafely(only, sample) }));
    return safe;
  }
  const list = recorder as readonly SampleRecorder[];
  let tee = combined.get(list);
  if (!tee) {
    for (const r of list) if (typeof r?.record !== 'function') throw new ConfigError('Expected every `recorder` to have a `record(sample)` method');
    const all = [...list];
    tee = {
      // One failing recorder must not keep the sample from the others.
      record: (sample) => {
        for (const r of all) recordSafely(r, sample);
      },
    };
    combined.set(list, tee);
  }
  return tee;
}

/**
 * Hands a gap to each recorder that keeps gaps (`recordGap`), never throwing;
 * a recorder that keeps none (a user's own) is skipped: its counts simply
 * carry no mark of what was missed.
 */
export function recordGapSafely(recorder: SampleRecorder | readonly SampleRecorder[], gap: ObservationGap): void {
  for (const r of Array.isArray(recorder) ? recorder : [recorder]) {
    if (typeof r?.recordGap !== 'function') continue;
    try {
      r.recordGap(gap);
    } catch (error) {
      failed(r, error, 'recordGap');
    }
  }
}
