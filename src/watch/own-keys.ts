/**
 * The keys `watch` writes itself — the notification probe, the `--configure`
 * marks — all start with {@link OWN_KEY_PREFIX}; no watcher samples them. In a
 * Cluster each node's keys carry a hash tag of a slot that node serves, so
 * that the node they describe is the node they live on.
 */

export const OWN_KEY_PREFIX = 'ttl-advisor:watch:';

const OWN_KEY_PREFIX_BYTES = Buffer.from(OWN_KEY_PREFIX);

/** Whether the key in bytes `start`–`end` of `chunk` is one of `watch`'s own (nothing is copied). */
export function isOwnKeyAt(chunk: Buffer, start: number, end: number): boolean {
  const length = OWN_KEY_PREFIX_BYTES.length;
  return end - start >= length && OWN_KEY_PREFIX_BYTES.compare(chunk, start, start + length) === 0;
}

const SLOTS = 16384;
/** Enough tags to reach a node that serves a single slot, with room to spare. */
const MAX_TAG_TRIES = 1 << 20;

/** Redis Cluster's hash slot of a hash tag's content: CRC16-XMODEM mod 16384. */
export function slotOfTag(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % SLOTS;
}

/**
 * A hash tag (`{…}`) whose slot the node that answered `clusterNodes`
 * (`CLUSTER NODES`, its `myself` line) serves, or `undefined` when it serves
 * none (a master that has just joined, before a reshard).
 */
export function ownKeyTag(clusterNodes: string): string | undefined {
  const myself = clusterNodes.split('\n').find((line) => line.split(' ')[2]?.split(',').includes('myself'));
  const ranges = (myself?.trim().split(' ').slice(8) ?? [])
    .filter((range) => !range.startsWith('[')) // [slot->-node]: a slot on the move
    .map((range) => range.split('-').map(Number))
    .map(([from, to]) => [from!, to ?? from!] as const);
  if (ranges.length === 0) return undefined;
  for (let i = 0; i < MAX_TAG_TRIES; i++) {
    const slot = slotOfTag(String(i));
    if (ranges.some(([from, to]) => slot >= from && slot <= to)) return `{${i}}`;
  }
  return undefined;
}
