import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { TtlAdvisorError } from '../errors.js';

/** The source files `--code` reads by default and in folders. */
export const CODE_EXTENSIONS: readonly string[] = Object.freeze(['.ts', '.tsx', '.js', '.mjs', '.cjs', '.cts', '.mts']);

function isCodeFile(path: string): boolean {
  return CODE_EXTENSIONS.some((e) => path.endsWith(e)) && !path.endsWith('.d.ts') && !path.split(/[\\/]/).includes('node_modules');
}

/**
 * The files `--code` reads, as absolute paths: with no globs, the git-tracked
 * source files under `cwd` outside `node_modules` (`git ls-files`); else each
 * argument as a file, a folder (its source files) or a glob (`*`, `**`, `?`, `{a,b}`),
 * relative to `cwd`. A glob that matches nothing is an error.
 */
export function listCodeFiles(globs: readonly string[], cwd: string): string[] {
  if (globs.length === 0) {
    let out: string;
    try {
      out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch {
      throw new TtlAdvisorError(`--code without a glob lists the files git tracks, and ${cwd} is not in a git repository; name the files: --code 'src/**/*.ts'`);
    }
    return out.split('\0').filter((f) => f !== '' && isCodeFile(f)).map((f) => resolve(cwd, f)).filter((f) => existsSync(f)).sort();
  }
  const found = new Set<string>();
  for (const glob of globs) {
    const matches = expand(glob, cwd);
    if (matches.length === 0) throw new TtlAdvisorError(`--code ${glob}: no source file matches`);
    for (const m of matches) found.add(m);
  }
  return [...found].sort();
}

function expand(glob: string, cwd: string): string[] {
  const path = resolve(cwd, glob);
  if (!/[*?{]/.test(glob)) {
    if (!existsSync(path)) return [];
    return statSync(path).isDirectory() ? walk(path).filter(isCodeFile) : [path];
  }
  // Walk from the part before the first wildcard; match the whole path.
  const parts = path.split(sep);
  const firstWild = parts.findIndex((p) => /[*?{]/.test(p));
  const base = parts.slice(0, firstWild).join(sep) || sep;
  if (!existsSync(base)) return [];
  const re = globRegExp(path);
  return walk(base).filter((f) => re.test(f) && !f.split(sep).includes('node_modules'));
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    if (d.name === 'node_modules' || d.name === '.git') return [];
    const path = join(dir, d.name);
    return d.isDirectory() ? walk(path) : d.isFile() ? [path] : [];
  });
}

/** `**` any folders (or none), `*` and `?` within one name, `{a,b}` alternatives. */
function globRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '{') {
      const end = glob.indexOf('}', i);
      if (end < 0) re += '\\{';
      else {
        re += `(?:${glob.slice(i + 1, end).split(',').map(escape).join('|')})`;
        i = end;
      }
    } else re += escape(c);
  }
  return new RegExp(`^${re}$`);
}

function escape(text: string): string {
  return text.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');
}

/**
 * The repository root the files belong to (paths in diffs and annotations are
 * relative to it): git's top level of their common folder, else `cwd`.
 */
export function repositoryRoot(files: readonly string[], cwd: string): string {
  const dirs = files.map((f) => dirname(f));
  let common = dirs[0] ?? cwd;
  for (const d of dirs) while (common !== dirname(common) && relative(common, d).startsWith('..')) common = dirname(common);
  try {
    return execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: common, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || cwd;
  } catch {
    return isAbsolute(cwd) ? cwd : resolve(cwd);
  }
}
