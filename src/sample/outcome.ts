import type { Outcome } from './sample.js';

/** What a holder's token-checked release answered: our key deleted, the key not ours (or gone), or no answer. */
export type ReleaseReply = 'deleted' | 'gone' | 'failed';

/**
 * The outcome of a held lock's release, by one rule for every door that sees
 * the release (the lock, `instrument`). Times are one monotonic clock (ms):
 * - `sentMs`, `repliedMs`: when the release was sent, and when its reply (or error) came;
 * - `mayExpireMs`: the earliest the TTL can have run out (counted from when the
 *   acquire — or the last extension — was *sent*: Redis cannot have started it sooner);
 * - `certainExpiryMs`: by when it has run out for certain (counted from their reply).
 *
 * `lost` and `expired` need certainty in opposite directions, because they
 * lead to opposite advice: `expired` says the TTL was too short, `lost` says
 * the key vanished for another reason (deleted by someone else, a restart
 * without persistence, a failover). So a gone key is `lost` only when its
 * release was answered before the TTL could have run out, and `expired`
 * otherwise; a failed release is `expired` only when it was sent after the TTL
 * had certainly run out (the hold outlived the TTL, whatever Redis did), and
 * `error` otherwise.
 */
export function releaseOutcome(reply: ReleaseReply, sentMs: number, repliedMs: number, mayExpireMs: number, certainExpiryMs: number): Outcome {
  if (reply === 'deleted') return 'released';
  if (reply === 'gone') return repliedMs < mayExpireMs ? 'lost' : 'expired';
  return sentMs >= certainExpiryMs ? 'expired' : 'error';
}
