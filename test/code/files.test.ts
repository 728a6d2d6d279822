import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listCodeFiles, repositoryRoot } from '../../src/code/files.js';
import { tempDir } from '../helpers/temp.js';

describe('listCodeFiles: what --code reads', () => {
  const dir = realpathSync(tempDir('ttl-advisor-files-'));
  for (const f of ['src/a.ts', 'src/b.mjs', 'src/c.cjs', 'src/d.tsx', 'src/e.cts', 'src/f.mts', 'src/g.js', 'src/types.d.ts', 'src/notes.md', 'node_modules/x/index.js', 'src/untracked.ts', 'lib/deep/h.ts']) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), '');
  }
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\n');
  execFileSync('git', ['init', '-q'], { cwd: dir });
  execFileSync('git', ['add', '.gitignore', 'src/a.ts', 'src/b.mjs', 'src/c.cjs', 'src/d.tsx', 'src/e.cts', 'src/f.mts', 'src/g.js', 'src/types.d.ts', 'src/notes.md', 'lib/deep/h.ts'], { cwd: dir });

  it('by default: the source files git knows of, outside node_modules, declarations left out', () => {
    const rel = listCodeFiles([], dir).map((f) => f.slice(dir.length + 1));
    expect(rel).toEqual(['lib/deep/h.ts', 'src/a.ts', 'src/b.mjs', 'src/c.cjs', 'src/d.tsx', 'src/e.cts', 'src/f.mts', 'src/g.js', 'src/untracked.ts']);
  });

  it('globs (`**`, `*`, `{a,b}`), folders and files, relative to the working folder; a glob matching nothing is an error', () => {
    const rel = (globs: string[]) => listCodeFiles(globs, dir).map((f) => f.slice(dir.length + 1));
    expect(rel(['**/*.ts'])).toEqual(['lib/deep/h.ts', 'src/a.ts', 'src/types.d.ts', 'src/untracked.ts']);
    expect(rel(['src/*.{mjs,cjs}'])).toEqual(['src/b.mjs', 'src/c.cjs']);
    expect(rel(['lib'])).toEqual(['lib/deep/h.ts']);
    expect(rel(['src/a.ts', 'src/a.ts'])).toEqual(['src/a.ts']);
    expect(() => rel(['src/**/*.vue'])).toThrow(/--code src\/\*\*\/\*\.vue: no source file matches/);
  });

  it('names paths from the repository root, wherever the command runs', () => {
    expect(repositoryRoot([join(dir, 'src/a.ts'), join(dir, 'lib/deep/h.ts')], '/')).toBe(dir);
  });
});
