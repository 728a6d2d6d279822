/**
 * BullMQ takes its job locks inside its own Lua scripts — `moveToActive` sets
 * `<prefix>:<queue>:<jobId>:lock`, `extendLock`/`extendLocks` renew it,
 * `moveToFinished` deletes it — so no command `instrument()` reads is a lock
 * operation. Rather than record nothing in silence, the tracker says once
 * where these locks are measured.
 *
 * The scripts are recognized by the keys they are called with, not by their
 * text or SHA1: a service whose Redis has them cached sends only EVALSHA (the
 * text is never seen), and text and SHA1 change with every BullMQ release,
 * while the keys go with every call and have kept their shape across versions.
 * A queue's keys share the stem `<prefix>:<queue>:` (a queue name has no `:`,
 * BullMQ refuses one), and each worker script that touches a job lock takes
 * the queue's `stalled` set: a key `<stem>stalled` with another key, or an
 * ARGV (the key prefix BullMQ passes), on the same stem. A `…:stalled` key
 * alone (an application's own) is not enough.
 */

import { Buffer } from 'node:buffer';
import { keyAt, keyCount, type MoreKeys } from './key-list.js';

const STALLED = 'stalled';

/**
 * The `<stem>stalled` key of a BullMQ worker script's call, or `undefined` when the call is not one.
 * Its keys are `key` and `more` (the keys after the first, or undefined for one key); `args[from]` on
 * are its ARGV, as the client sends them (strings, bytes or numbers).
 */
export function bullmqStalledKey(key: string, more: MoreKeys, args: readonly unknown[], from = 0): string | undefined {
  const count = keyCount(more);
  for (let i = 0; i < count; i++) {
    const candidate = keyAt(key, more, i);
    const stemLength = candidate.length - STALLED.length;
    // `<prefix>:<queue>:stalled`: at least two colons before `stalled`. Its last letter first: most keys end otherwise.
    if (
      stemLength < 4 ||
      candidate.charCodeAt(candidate.length - 1) !== 100 /* d */ ||
      !candidate.endsWith(STALLED) ||
      candidate.charCodeAt(stemLength - 1) !== 58 /* : */ ||
      candidate.lastIndexOf(':', stemLength - 2) <= 0
    )
      continue;
    const stem = candidate.slice(0, stemLength);
    for (let j = 0; j < count; j++) if (j !== i && keyAt(key, more, j).startsWith(stem)) return candidate;
    for (let j = from; j < args.length; j++) {
      const arg = args[j];
      if (arg === stem || (Buffer.isBuffer(arg) && arg.toString('utf8') === stem)) return candidate;
    }
  }
  return undefined;
}

/** Redis glob metacharacters, escaped so that a prefix such as `{bull}` or `jobs[1]` matches itself. */
const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

/** The warning, with the `--match` glob of the job locks of the queues under the stalled key's prefix. */
export function bullmqWarning(stalledKey: string): string {
  const stem = stalledKey.slice(0, stalledKey.length - STALLED.length); // `<prefix>:<queue>:`
  const prefix = stem.slice(0, stem.lastIndexOf(':', stem.length - 2) + 1); // `<prefix>:`
  return (
    `instrument: this client runs BullMQ's worker scripts (queue keys \`${stem}*\`). BullMQ takes and renews its job locks ` +
    `inside those Lua scripts, where instrument() cannot see them, so they are not recorded here. To measure them, run ` +
    `\`ttl-advisor watch --match '${escapeGlob(prefix)}*:lock'\` against this Redis: it sees each job lock as Redis sets, renews and deletes it.`
  );
}
