import type { LockSample, SampleRecorder } from '../../src/index.js';

/** Keeps samples in an array, to look at what a lock reported. */
export class MemoryRecorder implements SampleRecorder {
  readonly samples: LockSample[] = [];
  record(sample: LockSample): void {
    this.samples.push(sample);
  }
}
