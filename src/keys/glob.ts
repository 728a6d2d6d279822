/**
 * A shell-style glob as a matcher: `*` any run of characters, `?` one
 * character, everything else literal; the whole text must match. Used for
 * `--pattern` filters over key patterns and for file names given to `--db`.
 *
 * Matched segment by segment in linear time (times the glob's length): a
 * regular expression built from `*a*a*a*a*a*a*b` backtracks for minutes on a
 * long enough text.
 */
export function globMatcher(glob: string): (text: string) => boolean {
  const segments = glob.split('*');
  if (segments.length === 1) return (text) => text.length === glob.length && matchesAt(text, 0, glob);
  const first = segments[0]!;
  const last = segments[segments.length - 1]!;
  const middle = segments.slice(1, -1).filter((s) => s !== '');
  return (text) => {
    if (text.length < first.length + last.length || !matchesAt(text, 0, first)) return false;
    const end = text.length - last.length;
    if (!matchesAt(text, end, last)) return false;
    let pos = first.length;
    // Each middle segment at its earliest place leaves the most room for the rest.
    for (const segment of middle) {
      const at = find(text, segment, pos, end);
      if (at < 0) return false;
      pos = at + segment.length;
    }
    return true;
  };
}

/** Whether `segment` (where `?` matches any one character) stands in `text` at `at`. */
function matchesAt(text: string, at: number, segment: string): boolean {
  if (at + segment.length > text.length) return false;
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if (c !== 63 /* ? */ && c !== text.charCodeAt(at + i)) return false;
  }
  return true;
}

/** The first place ≥ `from` where `segment` stands in `text` and ends by `end`, or -1. */
function find(text: string, segment: string, from: number, end: number): number {
  if (!segment.includes('?')) {
    const at = text.indexOf(segment, from);
    return at >= 0 && at + segment.length <= end ? at : -1;
  }
  for (let at = from; at + segment.length <= end; at++) if (matchesAt(text, at, segment)) return at;
  return -1;
}
