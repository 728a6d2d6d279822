import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles, readPage, ROOT } from './markdown.js';

/** The shape STYLE.md asks of the documentation: a short README, the reference in docs/, links that lead somewhere. */

const pages = docFiles().map(readPage);
const byFile = new Map(pages.map((page) => [page.file, page]));

describe('documentation', () => {
  it('has a README of a couple of screens and one page per topic under docs/', () => {
    expect(byFile.get('README.md')!.lines.length).toBeLessThanOrEqual(200);
    for (const topic of ['README', 'lock', 'recorder', 'instrument', 'watch', 'report', 'policy', 'fleet', 'performance', 'schema', 'troubleshooting']) {
      expect(byFile.has(`docs/${topic}.md`), `docs/${topic}.md`).toBe(true);
    }
  });

  it("keeps the Quick start that .ci/run reads: the first code block under '## Quick start', its second line the test command", () => {
    const readme = byFile.get('README.md')!;
    const heading = readme.lines.indexOf('## Quick start');
    const block = readme.blocks.find((b) => b.line > heading + 1);
    expect(heading).toBeGreaterThan(0);
    expect(block?.text).toBe('npm install && npm run demo\nnpm test');
  });

  it('has no line longer than 300 characters', () => {
    const long = pages.flatMap((page) =>
      page.lines.flatMap((line, i) => (line.length > 300 ? [`${page.file}:${i + 1} (${line.length} characters)`] : [])),
    );
    expect(long).toEqual([]);
  });

  it('every relative link leads to a file, and every #anchor to a heading there', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const { target, line } of page.links) {
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page.file : normalize(join(dirname(page.file), decodeURIComponent(path)));
        const at = `${page.file}:${line} → ${target}`;
        if (file.startsWith('..') || !existsSync(join(ROOT, file))) {
          broken.push(`${at}: no such file`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!file.endsWith('.md') || statSync(join(ROOT, file)).isDirectory()) {
          broken.push(`${at}: an anchor into a file that is not Markdown`);
          continue;
        }
        const targetPage = byFile.get(file) ?? readPage(file);
        if (!targetPage.anchors.includes(anchor)) broken.push(`${at}: no heading with that anchor (there: ${targetPage.anchors.join(', ')})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every page of docs/ is linked from the index, and the index from the README', () => {
    const index = byFile.get('docs/README.md')!;
    const linked = new Set(index.links.map((l) => l.target.split('#')[0]));
    const missing = pages.filter((p) => p.file.startsWith('docs/') && p.file !== 'docs/README.md' && !linked.has(p.file.slice('docs/'.length)));
    expect(missing.map((p) => p.file)).toEqual([]);
    expect(byFile.get('README.md')!.links.map((l) => l.target)).toContain('docs/README.md');
  });
});
