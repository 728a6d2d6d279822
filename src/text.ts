/**
 * Untrusted text (lock keys, patterns, tokens, instance names) made safe to
 * show, and laid out for terminals. A leaf module: it imports nothing of ours.
 */

// Control characters, line and paragraph separators, bidirectional controls (U+202E turns
// `lock:\u202Egnp.exe` into `lock:exe.png`), and invisible characters (zero-width spaces and
// joiners, word joiners, the BOM, the soft hyphen, the Mongolian vowel separator).
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
// A third combining mark on one character and beyond: stacks that paint over neighbouring lines.
const MARK_STACK = /(?<=\p{M}{2})\p{M}/gu;

/**
 * Untrusted text as it can be shown: control characters, bidirectional
 * controls, invisible characters and stacks of combining marks appear as
 * `\u{…}`, so they can neither break a table, a terminal or a log line, nor make
 * a key look like another.
 */
export function printable(text: string): string {
  const escape = (c: string) => `\\u{${c.codePointAt(0)!.toString(16)}}`;
  return text.replace(UNSAFE, escape).replace(MARK_STACK, escape);
}

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * At most `maxCodePoints` code points: a longer text is cut and ends in `…`.
 * Counting code points, not UTF-16 units, never splits an emoji or another
 * character outside the Basic Multilingual Plane in half.
 */
export function truncate(text: string, maxCodePoints: number): string {
  // Fast path: a string no longer in UTF-16 units than the limit has no more code points either.
  if (text.length <= maxCodePoints) return text;
  const points = Array.from(text);
  return points.length <= maxCodePoints ? text : points.slice(0, Math.max(0, maxCodePoints - 1)).join('') + '…';
}

/** Columns a string takes in a terminal: East Asian wide characters and emoji take two. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) {
    const c = char.codePointAt(0)!;
    const wide =
      (c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf) || (c >= 0xac00 && c <= 0xd7a3) ||
      (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
      (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1faff) || (c >= 0x20000 && c <= 0x3fffd);
    width += wide ? 2 : 1;
  }
  return width;
}

/** Pads to a display width (see {@link displayWidth}), on the right or the left. */
export function pad(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return align === 'left' ? text + fill : fill + text;
}

/**
 * A string of its own with `text`'s characters: a cut of 13 characters or more of a key is a view
 * that keeps the whole key alive (a 64 KB key, say) in whatever keeps the cut.
 */
export function ownCopy(text: string): string {
  return text.length < 13 ? text : (JSON.parse(JSON.stringify(text)) as string);
}
