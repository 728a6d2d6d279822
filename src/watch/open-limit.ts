import { recordGapSafely } from '../sample/safe-recorder.js';
import type { SampleRecorder } from '../sample/sample.js';

/**
 * The stretches in which `maxOpen` locks are open (keys set and never
 * released, most likely) and new locks are not followed until one ends: each
 * is said once per process, counted, and recorded as a gap of reason
 * `open-limit` when it ends, so that `stats` and the report show what it cost
 * and mark its hours' counts as lower bounds.
 */
export class OpenLimit {
  private stretch: { fromMs: number; dropped: number } | undefined;
  private warned = false;

  constructor(
    private readonly options: {
      maxOpen: number;
      recorders: readonly SampleRecorder[];
      instance: string | undefined;
      onNotice: ((message: string) => void) | undefined;
    },
  ) {}

  /** A lock that could not be followed: the stretch begins (said once per process) or goes on. */
  dropped(): void {
    if (!this.stretch) {
      this.stretch = { fromMs: Date.now(), dropped: 0 };
      if (!this.warned) {
        this.warned = true;
        this.options.onNotice?.(
          `${this.options.maxOpen} locks are open at once (--max-open ${this.options.maxOpen}): new locks are not followed until one ends, counted as dropped and recorded as a gap. ` +
            'Keys set with a TTL and never deleted (a cache --match also matches?) fill it: narrow --match, or raise --max-open',
        );
      }
    }
    this.stretch.dropped++;
  }

  /** Room again (or stopping): the stretch, if any, is over and recorded. */
  end(): void {
    const stretch = this.stretch;
    if (!stretch) return;
    this.stretch = undefined;
    const { instance } = this.options;
    recordGapSafely(this.options.recorders, {
      source: `--max-open ${this.options.maxOpen}`,
      fromMs: stretch.fromMs,
      toMs: Date.now(),
      reason: 'open-limit',
      openHolds: stretch.dropped,
      ...(instance !== undefined && { instance }),
    });
  }
}
