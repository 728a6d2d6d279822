import { ConfigError } from '../errors.js';
import { compileTemplates, type CompiledTemplate } from '../keys/pattern.js';
import { safeRecorder } from '../sample/safe-recorder.js';
import type { SampleRecorder } from '../sample/sample.js';
import { nonEmptyString, optionalFunction, optionalStrings, optionsObject, positiveInteger } from '../validate.js';

/** Options of {@link instrument}. */
export interface InstrumentOptions {
  /** Where to record one sample per lock; several as an array. */
  recorder: SampleRecorder | readonly SampleRecorder[];
  /** Pattern templates such as `order:lock:product:{productId}`, tried before the patterns learned from the keys (`KeyPatternMiner`). @default [] */
  patterns?: readonly string[];
  /** Which process recorded the samples. @default the recorder's own instance id */
  instance?: string;
  /**
   * A lock whose attempts all failed is given up (`not_acquired`) when no new
   * attempt with the same key and token follows within this window (ms). Make
   * it longer than your lock library's longest pause between retries. @default 5000
   */
  retryWindowMs?: number;
  /**
   * After a held lock's TTL has certainly run out, how long to wait for its
   * holder's release (whose reply gives the true hold time) before recording it
   * `expired` with the TTL as its hold (ms). @default 10000
   */
  expiredGraceMs?: number;
  /** Locks followed at once (held, or being retried); more are counted in `untracked`, with a warning. @default 100000 */
  maxOpenLocks?: number;
  /**
   * Called once per kind: `tracking-full` when `maxOpenLocks` is reached; `bullmq-scripts` when the client
   * runs BullMQ's worker scripts, whose job locks it cannot see (`ttl-advisor watch` measures them).
   * Without it, a process warning says so.
   */
  onWarning?: (warning: { kind: InstrumentWarningKind; message: string }) => void;
}

/** What `instrument()` warns about (each once). */
export type InstrumentWarningKind = 'tracking-full' | 'bullmq-scripts';

/** The defaults of {@link InstrumentOptions}. */
export const INSTRUMENT_DEFAULTS = Object.freeze({ retryWindowMs: 5000, expiredGraceMs: 10_000, maxOpenLocks: 100_000 });

/** Validates {@link InstrumentOptions} at the boundary; a {@link ConfigError} names the option. */
export function resolveInstrumentOptions(options: InstrumentOptions) {
  optionsObject('instrument', options);
  if (options.recorder === undefined || (Array.isArray(options.recorder) && options.recorder.length === 0)) {
    throw new ConfigError('Expected `recorder`: where to record the locks the client takes');
  }
  const d = INSTRUMENT_DEFAULTS;
  return {
    recorder: safeRecorder(options.recorder),
    templates: compileTemplates(optionalStrings('patterns', options.patterns) ?? []) as readonly CompiledTemplate[],
    instance: options.instance === undefined ? undefined : nonEmptyString('instance', options.instance),
    retryWindowMs: positiveInteger('retryWindowMs', options.retryWindowMs, d.retryWindowMs),
    expiredGraceMs: positiveInteger('expiredGraceMs', options.expiredGraceMs, d.expiredGraceMs),
    maxOpenLocks: positiveInteger('maxOpenLocks', options.maxOpenLocks, d.maxOpenLocks),
    onWarning: optionalFunction('onWarning', options.onWarning),
  };
}
