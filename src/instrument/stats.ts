import type { Outcome } from '../sample/sample.js';

/** What an instrumented client saw, since it was instrumented. */
export interface InstrumentStats {
  /** Lock acquisitions seen won. */
  acquired: number;
  /** Samples handed to the recorder, by outcome. */
  recorded: Record<Outcome, number>;
  /** Holds and give-ups never confirmed as locks (a `SET NX` with no token-checked release on its pattern: a cache write), so not recorded. */
  ignored: number;
  /** Acquisitions not followed because `maxOpenLocks` were open already. */
  untracked: number;
  /** Holds open, attempts waiting and acquires awaiting their reply when the instrumentation was closed: never recorded. */
  abandoned: number;
  /** Locks held now, as far as this client saw. */
  open: number;
  /** Keys being retried now. */
  waiting: number;
}
