import { ConfigError } from './errors.js';

/** Anything with `record(sample)`: the recorder contract, without naming the sample type (a leaf module imports no folder). */
interface Recorder<S> {
  record(sample: S): void;
}

const combined = new WeakMap<object, Recorder<never>>();
const guarded = new WeakMap<object, Recorder<never>>();

/** Recording must never break its caller: a recorder that throws loses its sample, nothing else. */
function recordSafely<S>(recorder: Recorder<S>, sample: S): void {
  try {
    recorder.record(sample);
  } catch {
    // ignored on purpose
  }
}

/**
 * One never-throwing recorder for one or several, for every door a sample is
 * born at (the lock, `instrument`, `watch`). Cached per recorder (or array), so
 * a lock's path allocates nothing; a {@link ConfigError} for what cannot record.
 */
export function safeRecorder<S>(recorder: Recorder<S> | readonly Recorder<S>[]): Recorder<S> {
  if (!Array.isArray(recorder) || recorder.length === 1) {
    const only = (Array.isArray(recorder) ? recorder[0] : recorder) as Recorder<S>;
    if (typeof only?.record !== 'function') throw new ConfigError('Expected `recorder` to have a `record(sample)` method');
    let safe = guarded.get(only) as Recorder<S> | undefined;
    if (!safe) guarded.set(only, (safe = { record: (sample) => recordSafely(only, sample) }));
    return safe;
  }
  const list = recorder as readonly Recorder<S>[];
  let tee = combined.get(list) as Recorder<S> | undefined;
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
