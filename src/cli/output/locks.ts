import type { LiveLocks } from '../../inspect/locks.js';
import { displayWidth, pad, printable, truncate } from '../../text.js';
import { formatMs } from '../../units.js';

const KEY_WIDTH = 48;

/**
 * `ttl-advisor locks` for people, soonest to expire first: the holder and how
 * long it has held the lock when the token is one of our locks', the token
 * itself for any other lock.
 */
export function renderLocksText(result: LiveLocks, nowMs = Date.now()): string {
  if (result.locks.length === 0) return `No live locks (${result.scanned} matching keys scanned).\n`;
  const rows = result.locks.map((l) => [
    truncate(printable(l.key), KEY_WIDTH),
    truncate(printable(l.pattern), KEY_WIDTH),
    truncate(printable(l.holder ?? `token ${l.token}`), 40),
    l.acquiredAtMs === undefined ? '?' : formatMs(Math.max(0, nowMs - l.acquiredAtMs)),
    formatMs(l.remainingMs),
  ]);
  const header = ['key', 'pattern', 'holder', 'held for', 'expires in'];
  const right = new Set([3, 4]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => displayWidth(r[i]!))));
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i]!, right.has(i) ? 'right' : 'left')).join('  ').trimEnd();
  const out = [line(header), line(widths.map((w) => '─'.repeat(w))), ...rows.map(line)];
  out.push(`${result.locks.length} live lock(s)${result.omitted ? `, ${result.omitted} more not shown` : ''}`);
  return out.join('\n') + '\n';
}

/** `ttl-advisor locks --format json`. */
export function renderLocksJson(result: LiveLocks): string {
  return JSON.stringify({ version: 1, ...result }, null, 2) + '\n';
}
