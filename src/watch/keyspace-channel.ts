/**
 * Reads a keyspace notification where it lies in the socket chunk: the watcher reads thousands a
 * second, and the strings and buffers a general reading makes for each were most of its garbage.
 */

/** The events the tracker acts on, by their bytes: these come back as the same strings, not new ones. */
const KNOWN_EVENTS = ['set', 'del', 'expire', 'expired', 'evicted', 'hincrby', 'persist', 'rename_from', 'move_from'].map((name) => ({
  name,
  bytes: Buffer.from(name, 'latin1'),
}));

/** The event of a notification: one of the known names, or a new string for any other. */
export function eventAt(chunk: Buffer, start: number, end: number): string {
  const length = end - start;
  next: for (const { name, bytes } of KNOWN_EVENTS) {
    if (bytes.length !== length) continue;
    for (let i = 0; i < length; i++) if (chunk[start + i] !== bytes[i]) continue next;
    return name;
  }
  return chunk.toString('latin1', start, end);
}

const PREFIX_LENGTH = '__keyspace@'.length;

/** Where the key starts in a keyspace channel (`__keyspace@<db>__:<key>`), or -1 for another channel. */
export function keyStartOf(chunk: Buffer, start: number, end: number): number {
  let i = start + PREFIX_LENGTH;
  while (i < end && chunk[i]! >= 0x30 && chunk[i]! <= 0x39) i++;
  if (i === start + PREFIX_LENGTH || i + 3 > end || chunk[i] !== 0x5f || chunk[i + 1] !== 0x5f || chunk[i + 2] !== 0x3a) return -1;
  return i + 3;
}

/** The database of a keyspace channel {@link keyStartOf} accepted. */
export function dbOf(chunk: Buffer, start: number): number {
  let db = 0;
  for (let i = start + PREFIX_LENGTH; chunk[i]! >= 0x30 && chunk[i]! <= 0x39; i++) db = db * 10 + chunk[i]! - 0x30;
  return db;
}
