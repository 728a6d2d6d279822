import { NEEDED_CLASSES, WANTED_CLASSES } from './notifications.js';
import type { RespConnection, Reply } from './resp.js';

/** What a probe key told: the needed and wanted classes whose events did not arrive ('' when all did), or why it could not tell. */
export type ProbeResult = { readonly missing: string } | { readonly untested: string };

/** The event each needed or wanted class is tested with; any event at all on the keyspace channel shows `K`. */
const EVENT_OF_CLASS: Readonly<Record<string, string>> = { g: 'del', $: 'set', x: 'expired', h: 'hincrby' };

/** How long the probe key's second life lasts (ms) before it is touched, so that it expires on that access. */
const EXPIRE_AFTER_MS = 1;

/**
 * Tests which notification classes reach a subscriber, where `notify-keyspace-events`
 * cannot be read (CONFIG refused by an ACL, renamed, or absent on a managed Redis):
 * the probe `key` is set, deleted, taken as a hash (HINCRBY) and deleted, set again
 * to expire after 1 ms and touched once it has (`expired`), on `cmd`, already in
 * database `db`. Then a PING on the subscriber: Redis answers it after every
 * notification those commands published, so no timer guesses when they have all
 * arrived. A HINCRBY refused (an ACL without hash commands) leaves `h` untested, not the rest.
 */
export async function probeNotifications(
  cmd: RespConnection,
  openSubscriber: (onPush: (message: Reply[]) => void) => Promise<RespConnection>,
  db: number,
  key: string,
): Promise<ProbeResult> {
  const events = new Set<string>();
  let hashTested = true;
  const channel = `__keyspace@${db}__:${key}`;
  let sub: RespConnection;
  try {
    sub = await openSubscriber(([, , event]) => void (Buffer.isBuffer(event) && events.add(event.toString('latin1'))));
  } catch (error) {
    return { untested: (error as Error).message };
  }
  try {
    const subscribed = await sub.send(['SUBSCRIBE', channel]);
    if (subscribed instanceof Error) return { untested: `SUBSCRIBE ${channel}: ${subscribed.message}` };
    for (const command of [['SET', key, '1', 'PX', 60_000], ['DEL', key], ['HINCRBY', key, 'n', 1], ['DEL', key], ['SET', key, '1', 'PX', EXPIRE_AFTER_MS]]) {
      const reply = await cmd.send(command);
      if (reply instanceof Error && command[0] === 'HINCRBY') hashTested = false;
      else if (reply instanceof Error) return { untested: `${command[0]} ${key}: ${reply.message}` };
    }
    await new Promise((resolve) => setTimeout(resolve, EXPIRE_AFTER_MS + 4));
    await cmd.send(['EXISTS', key]);
    await sub.send(['PING']);
  } finally {
    sub.close();
    await cmd.send(['DEL', key]).catch(() => undefined);
  }
  const tested = hashTested ? [...NEEDED_CLASSES, ...WANTED_CLASSES] : NEEDED_CLASSES;
  const missing = tested.filter((c) => (c === 'K' ? events.size === 0 : !events.has(EVENT_OF_CLASS[c]!)));
  return { missing: missing.join('') };
}
