import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Reads README.md and docs/*.md the way the docs tests need them: fenced code
 * blocks with the marker before them, headings (as GitHub anchors) and links.
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** README.md and every page under docs/, as paths relative to the repository. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort((a, b) => (a === 'README.md' ? -1 : b === 'README.md' ? 1 : a.localeCompare(b)));
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

export const MARKER_KINDS = ['run', 'typecheck', 'skip', 'output', 'generated', 'usage'] as const;
export type MarkerKind = (typeof MARKER_KINDS)[number];

export interface Marker {
  kind: MarkerKind;
  /** `key=value` options after the kind. */
  options: Record<string, string>;
  /** A bare word after the kind: the generator's name. */
  name: string | undefined;
  /** The text after `—`: why a block is skipped, or a note. */
  reason: string | undefined;
}

export interface CodeBlock {
  /** Repository-relative path of the page. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's language, lower case; '' when none. */
  lang: string;
  /** The lines between the fences, joined with \n (no trailing newline). */
  text: string;
  /** 1-based lines of the first and the closing fence, for rewriting the block. */
  endLine: number;
  marker: Marker | undefined;
  /** A marker that did not parse, with why. */
  markerError: string | undefined;
}

export interface Page {
  file: string;
  lines: string[];
  blocks: CodeBlock[];
  /** GitHub anchors of the page's headings, in order. */
  anchors: string[];
  /** Relative links outside code: target as written, and its line. */
  links: { target: string; line: number }[];
  /** Marker comments that are not right before a fence. */
  strayMarkers: number[];
}

const FENCE = /^ {0,3}(`{3,})\s*([^`\s]*)\s*$/;
const MARKER = /^\s*<!--\s*example:\s*(.*?)\s*-->\s*$/;

/** Parses `<!-- example: KIND [name] [key=value…] [— reason] -->`. */
export function parseMarker(body: string): Marker | string {
  const [head = '', ...rest] = body.split('—');
  const reason = rest.length > 0 ? rest.join('—').trim() : undefined;
  const [kind = '', ...words] = head.trim().split(/\s+/);
  if (!(MARKER_KINDS as readonly string[]).includes(kind)) return `unknown marker kind \`${kind}\` (expected one of ${MARKER_KINDS.join(', ')})`;
  const options: Record<string, string> = {};
  let name: string | undefined;
  for (const word of words) {
    const eq = word.indexOf('=');
    if (eq > 0) options[word.slice(0, eq)] = word.slice(eq + 1);
    else if (name === undefined) name = word;
    else return `unexpected word \`${word}\` in the marker`;
  }
  if (kind === 'skip' && !reason) return 'a skip marker needs a reason: <!-- example: skip — why -->';
  if (kind === 'generated' && !name) return 'a generated marker needs the generator name: <!-- example: generated NAME -->';
  return { kind: kind as MarkerKind, options, name, reason };
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

export function readPage(file: string): Page {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  const anchors: string[] = [];
  const seen = new Map<string, number>();
  const links: Page['links'] = [];
  const strayMarkers: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const open = FENCE.exec(line);
    if (open) {
      const ticks = open[1]!;
      let end = i + 1;
      while (end < lines.length && !(lines[end]!.trim().startsWith(ticks) && lines[end]!.trim().replace(/`/g, '') === '')) end++;
      const previous = i > 0 ? MARKER.exec(lines[i - 1]!) : null;
      const parsed = previous ? parseMarker(previous[1]!) : undefined;
      blocks.push({
        file,
        line: i + 1,
        endLine: end + 1,
        lang: open[2]!.toLowerCase(),
        text: lines.slice(i + 1, end).join('\n'),
        marker: typeof parsed === 'object' ? parsed : undefined,
        markerError: typeof parsed === 'string' ? parsed : undefined,
      });
      i = end;
      continue;
    }
    if (MARKER.test(line) && !FENCE.test(lines[i + 1] ?? '')) strayMarkers.push(i + 1);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.push(n === 0 ? base : `${base}-${n}`);
    }
    // Links outside inline code: [text](target), not URLs with a scheme.
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ target, line: i + 1 });
    }
  }
  return { file, lines, blocks, anchors, links, strayMarkers };
}

/** `docs/policy.md:48` */
export function where(block: Pick<CodeBlock, 'file' | 'line'>): string {
  return `${block.file}:${block.line}`;
}
