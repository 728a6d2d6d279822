import type { LockSample, SampleRecorder } from './sample.js';

/**
 * The last step of a door that sees others' locks (`instrument`, `watch`): the sample gets the pattern
 * where the recorder's own naming would differ (templates were given, or the door knows the library),
 * and the instance the door was told, then goes to the recorder. One helper so both doors add them in
 * one order: their samples keep one hidden class each. Allocates nothing.
 */
export function stampAndRecord(sample: LockSample, pattern: string | undefined, instance: string | undefined, recorder: SampleRecorder): void {
  if (pattern !== undefined) sample.pattern = pattern;
  if (instance !== undefined) sample.instance = instance;
  recorder.record(sample);
}
