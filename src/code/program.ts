import { realpathSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type * as TS from 'typescript';
import { printable } from '../text.js';
import type { TypeScript } from './load.js';

/**
 * The compiler's program over the repository's own files: packages are not
 * read (an import's module name is all a call's origin needs), so a checkout
 * without `node_modules` scans the same. One file the compiler cannot read
 * (nested deeper than any written code, such as a generated `+` chain of
 * thousands of terms) is left out and listed with its reason.
 */

/**
 * The deepest syntax a file may have to be read: past it, recursion in the compiler's binder and checker
 * could exhaust the stack (a 2,500-term `+` chain did). Written code stays far below: a few dozen levels.
 */
export const MAX_SYNTAX_DEPTH = 1000;

/** A file left out of the check, by its path from the repository's root (printable), and why. */
export interface SkippedFile {
  file: string;
  reason: string;
}

export interface RepositoryProgram {
  program: TS.Program;
  /** The files asked for that the program holds. */
  sources: TS.SourceFile[];
  /** Files that could not be read, by absolute path. */
  skipped: Map<string, string>;
  realRoot: string;
}

export function repositoryProgram(ts: TypeScript, files: readonly string[], root: string): RepositoryProgram {
  const wanted = new Set(files.map((f) => resolve(f)));
  const skipped = new Map<string, string>();
  const options: TS.CompilerOptions = {
    allowJs: true,
    checkJs: false,
    noEmit: true,
    noLib: true,
    types: [],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    jsx: ts.JsxEmit.Preserve,
    experimentalDecorators: true,
    ...moduleOptionsOf(ts, root),
  };
  const host = ts.createCompilerHost(options, true);
  // Only the repository's own files: a package's declarations are never needed (see above).
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (path) => !/[\\/]node_modules[\\/]/.test(path) && fileExists(path);
  // A file nested too deep for the parser, or for the binder and checker that recurse over it, is left out of the program.
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError, shouldCreate) => {
    try {
      const source = getSourceFile(fileName, language, onError, shouldCreate);
      const depth = source && depthOf(ts, source);
      if (depth === undefined || depth <= MAX_SYNTAX_DEPTH) return source;
      skipped.set(resolve(fileName), `nested more than ${MAX_SYNTAX_DEPTH} levels deep (generated code?): not read`);
    } catch (error) {
      if (!isStackOverflow(error)) throw error;
      skipped.set(resolve(fileName), 'nested too deep for the TypeScript parser (generated code?): not read');
    }
    return undefined;
  };
  const program = ts.createProgram({ rootNames: [...wanted], options, host });
  const sources = program.getSourceFiles().filter((s) => wanted.has(resolve(s.fileName)));
  for (const path of skipped.keys()) if (!wanted.has(path)) skipped.delete(path);
  return { program, sources, skipped, realRoot: realpathSync(root) };
}

/**
 * How the repository's own `tsconfig.json` resolves its imports (`baseUrl`, `paths`, the module
 * resolution): `import … from 'src/engine/…'` then binds as in the service's build. Nothing else of it is
 * taken (its `lib`, `types` and checks would load packages); a missing or unreadable file changes nothing.
 */
function moduleOptionsOf(ts: TypeScript, root: string): TS.CompilerOptions {
  const path = ts.findConfigFile(root, (p) => ts.sys.fileExists(p) && !/[\\/]node_modules[\\/]/.test(p));
  if (!path || !path.startsWith(root)) return {};
  const read = ts.readConfigFile(path, (p) => ts.sys.readFile(p));
  if (read.error || !read.config) return {};
  const { options } = ts.parseJsonConfigFileContent(read.config, ts.sys, resolve(path, '..'), undefined, path);
  const picked: TS.CompilerOptions = {};
  if (options.baseUrl !== undefined) picked.baseUrl = options.baseUrl;
  if (options.paths !== undefined) picked.paths = options.paths;
  if (options.rootDirs !== undefined) picked.rootDirs = options.rootDirs;
  if (options.moduleResolution !== undefined) picked.moduleResolution = options.moduleResolution;
  if (options.module !== undefined && picked.moduleResolution !== undefined) picked.module = options.module;
  return picked;
}

/** How deep a file's syntax goes, walked with a stack of its own (no recursion: the file may be that deep). */
function depthOf(ts: TypeScript, source: TS.SourceFile): number {
  let deepest = 0;
  const stack: [TS.Node, number][] = [[source, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > deepest) deepest = depth;
    if (deepest > MAX_SYNTAX_DEPTH) return deepest;
    ts.forEachChild(node, (child) => void stack.push([child, depth + 1]));
  }
  return deepest;
}

export function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/** Every call and `new` in a file, in source order, walked with a stack of its own. */
export function callsIn(ts: TypeScript, source: TS.SourceFile): (TS.CallExpression | TS.NewExpression)[] {
  const found: (TS.CallExpression | TS.NewExpression)[] = [];
  const stack: TS.Node[] = [source];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) found.push(node);
    const children: TS.Node[] = [];
    ts.forEachChild(node, (child) => void children.push(child));
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return found;
}

/** A path from the repository's root, with `/` separators and any control character shown, not sent to a terminal. */
export function displayPath(root: string, path: string): string {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // a file the host made up: keep its name
  }
  return printable(relative(root, real).split('\\').join('/'));
}
