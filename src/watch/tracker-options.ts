import type { CompiledTemplate } from '../keys/pattern.js';
import { zeroOutcomeCounts, type Outcome, type SampleRecorder } from '../sample/sample.js';
import type { OpenLimit } from './open-limit.js';

/** What the keyspace tracker (keyspace-tracker.ts) counts and is given, apart from how it works. */

/** What `watch` has counted so far: its progress line and its last line say it. */
export interface WatchStats {
  /** Notifications read. */
  events: number;
  /** Samples recorded, by outcome (expiries on patterns never released are `unconfirmed`, not here). */
  recorded: Record<Outcome, number>;
  /** Locks held now, as far as the notifications tell. */
  open: number;
  /** Keys set without a TTL, or whose TTL was removed: not locks. */
  notLocks: number;
  /**
   * Holds that ended by expiry or eviction on a pattern never seen released, not recorded: with
   * `--match '*'` every one (caches, most likely), else the evicted ones (expired ones are `unconfirmed`).
   */
  ignored: number;
  /** Expirations recorded on a pattern never seen released: a lock whose every hold overruns, or a cache the glob matches. */
  unconfirmed: number;
  /** Holds whose TTL could not be read (the key was gone before PTTL ran, and its pattern's TTL is unknown). */
  unknownTtl: number;
  /** Holds dropped because `maxOpen` were open, or because their node's connection dropped while they were open. */
  dropped: number;
  /** Of `dropped`, those open across a lost connection (their end was not seen). */
  droppedInGaps: number;
  /** Of `dropped`, locks taken while `maxOpen` were open: never followed (each stretch is recorded as an `open-limit` gap). */
  droppedAtLimit: number;
}

/** The tracker's counters at its start: all but `open`, which it reads off its holds. */
export function zeroCounts(): Omit<WatchStats, 'open'> {
  return {
    events: 0,
    recorded: zeroOutcomeCounts(),
    notLocks: 0,
    ignored: 0,
    unconfirmed: 0,
    unknownTtl: 0,
    dropped: 0,
    droppedInGaps: 0,
    droppedAtLimit: 0,
  };
}

/** What the watcher hands the tracker: where samples go, how keys are named, and how to read a TTL. */
export interface KeyspaceTrackerOptions {
  /** Never throws (see `safeRecorder`). */
  recorder: SampleRecorder;
  templates: readonly CompiledTemplate[];
  instance: string | undefined;
  maxOpen: number;
  /**
   * Record expirations on patterns never seen released, flagged `unconfirmed` (the lock glob is
   * narrow: `*lock*`); with `--match '*'` they are not locks until a release is seen. @default true
   */
  keepUnconfirmed?: boolean;
  /** Reads a key's PTTL on the node it lives on: `key` is as shown, `keyBytes` the exact bytes to send. */
  readTtl: (node: string, db: number, key: string, keyBytes: Buffer) => Promise<number>;
  /** Where the stretches at `maxOpen` are said and recorded (see `OpenLimit`). */
  openLimit?: OpenLimit;
}
