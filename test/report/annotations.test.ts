import { describe, expect, it } from 'vitest';
import { MAX_ANNOTATIONS, renderGithub, type Annotation } from '../../src/report/annotations.js';

const warning = (i: number): Annotation => ({ level: 'warning', file: 'ttl-policy.json', line: i, title: `w${i}`, message: `warning ${i}` });

describe('renderGithub: the one home of check and check --code annotations', () => {
  it('puts errors first, keeps the given order otherwise, shows at most MAX_ANNOTATIONS and counts the rest in the summary', () => {
    const error: Annotation = { level: 'error', file: 'src/a.ts', line: 7, title: 'e', message: 'error' };
    const all = [...Array.from({ length: MAX_ANNOTATIONS + 2 }, (_, i) => warning(i + 1)), error];
    const { annotations, summary } = renderGithub(all, 'ttl-advisor check: fails', '### table\n');
    const lines = annotations.trimEnd().split('\n');
    expect(lines).toHaveLength(MAX_ANNOTATIONS + 1);
    expect(lines[0]).toBe('::error file=src/a.ts,line=7,title=e::error');
    expect(lines.slice(1, -1).map((l) => /title=(w\d+)/.exec(l)?.[1])).toEqual(Array.from({ length: MAX_ANNOTATIONS - 1 }, (_, i) => `w${i + 1}`));
    expect(lines.at(-1)).toBe('ttl-advisor check: fails');
    expect(summary).toBe('### table\n\n3 more finding(s) without an annotation of their own: see the table above.\n');
    // Control: with room for every one, no "more" line.
    expect(renderGithub([warning(1)], 'h', '### table\n').summary).toBe('### table\n');
  });

  it('escapes what would end a workflow command: %, line breaks, and in properties : and ,', () => {
    const { annotations } = renderGithub([{ level: 'warning', file: 'a,b:c.json', line: 1, title: 'x: y, z', message: '100 %\nnext\rline: a, b' }], 'h', '');
    expect(annotations).toBe('::warning file=a%2Cb%3Ac.json,line=1,title=x%3A y%2C z::100 %25%0Anext%0Dline: a, b\nh\n');
  });
});
